//! Webhook registration (HTTP Basic: a user's API token): register an endpoint for events (its
//! signing secret shown once), list and delete them, and read a webhook's deliveries with their
//! last status. An administrator manages every webhook of the workspace; a member registers
//! their own, which hear only of what the member may read (`webhook::Subject`), and sees and
//! deletes only those. Sending is `crate::webhooks`'.

use inlet_core::{
    time,
    token::{Principal, Role},
    webhook::{self, Delivery, Webhook},
};
use poem::web::Data;
use poem_openapi::{
    ApiResponse, Object, OpenApi,
    param::{Path, Query},
    payload::Json,
};
use uuid::Uuid;

use super::ApiTags;
use crate::{auth::BasicAuth, problem::ApiError, state::AppState};

/// Webhook endpoints.
pub struct WebhooksApi;

/// A webhook to register.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookIn {
    /// Where deliveries are POSTed: an absolute `https://` (or `http://`) URL, at most 2,048
    /// bytes, without credentials or fragment. Loopback and private-range hosts are refused
    /// unless the operator allows them (`--webhook-allow-private`).
    pub url: String,
    /// The events to deliver: `sync.completed`, `sync.failed`, `record.extraction_failed`,
    /// `source.created` (at least one, no repeats).
    pub events: Vec<String>,
}

/// A registered webhook.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookOut {
    /// Its id.
    pub id: Uuid,
    /// Where deliveries go.
    pub url: String,
    /// The events delivered.
    pub events: Vec<String>,
    /// When it was registered.
    pub created_date: String,
    /// The member who registered it (their user id), when it is a member's: it hears only of
    /// what that member may read. Absent for an administrator's.
    #[oai(skip_serializing_if_is_none)]
    pub owner_id: Option<Uuid>,
}

/// A webhook just registered, with its signing secret (shown only now).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct CreatedWebhookOut {
    /// Its id.
    pub id: Uuid,
    /// Where deliveries go.
    pub url: String,
    /// The events delivered.
    pub events: Vec<String>,
    /// When it was registered.
    pub created_date: String,
    /// The key of each delivery's `Inlet-Signature`
    /// (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`). Shown only in this answer.
    pub secret: String,
}

/// One delivery of an event to a webhook.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct DeliveryOut {
    /// The delivery id (the body's `id`, and the `Inlet-Delivery` header).
    pub id: Uuid,
    /// The event.
    pub event: String,
    /// When the event happened.
    pub created_date: String,
    /// `PENDING` (to be tried at `nextAttemptDate`), `DELIVERED` (the endpoint answered 2xx)
    /// or `FAILED` (given up 24 hours after the event).
    pub state: String,
    /// Attempts made.
    pub attempts: u32,
    /// When it was last tried.
    #[oai(skip_serializing_if_is_none)]
    pub last_attempt_date: Option<String>,
    /// The endpoint's status at the last attempt, when it answered.
    #[oai(skip_serializing_if_is_none)]
    pub last_status: Option<u16>,
    /// Why the last attempt failed, when it did.
    #[oai(skip_serializing_if_is_none)]
    pub last_error: Option<String>,
    /// When it is tried next (pending only).
    #[oai(skip_serializing_if_is_none)]
    pub next_attempt_date: Option<String>,
}

/// Answer of a registration.
#[derive(ApiResponse)]
pub enum Created {
    /// Registered.
    #[oai(status = 201)]
    Created(Json<CreatedWebhookOut>),
}

/// Answer of a deletion.
#[derive(ApiResponse)]
pub enum Deleted {
    /// Deleted, with its queued deliveries.
    #[oai(status = 204)]
    Deleted,
}

fn names(w: &Webhook) -> Vec<String> {
    w.events.iter().map(|e| e.name().to_string()).collect()
}

impl From<&Webhook> for WebhookOut {
    fn from(w: &Webhook) -> Self {
        Self {
            id: w.id,
            url: w.url.clone(),
            events: names(w),
            created_date: time::format(&w.created_date),
            owner_id: w.owner,
        }
    }
}

impl From<Delivery> for DeliveryOut {
    fn from(d: Delivery) -> Self {
        Self {
            id: d.id,
            event: d.event.name().into(),
            created_date: time::format(&d.created_date),
            state: d.state.name().into(),
            attempts: d.attempts,
            last_attempt_date: d.last_attempt.as_ref().map(time::format),
            last_status: d.last_status,
            last_error: d.last_error,
            next_attempt_date: d.next_attempt.as_ref().map(time::format),
        }
    }
}

/// The member a caller's webhooks belong to: `None` for an ADMIN (every webhook).
fn owner(principal: &Principal) -> Option<Uuid> {
    (principal.role != Role::Admin).then_some(principal.user_id)
}

/// The workspace's webhooks the caller manages: all for an ADMIN, their own for a member.
async fn managed(state: &AppState, principal: &Principal) -> Result<Vec<Webhook>, ApiError> {
    let hooks = state.webhooks.list_webhooks(principal.workspace_id).await?;
    Ok(match owner(principal) {
        None => hooks,
        Some(me) => hooks.into_iter().filter(|w| w.owner == Some(me)).collect(),
    })
}

fn not_found(id: Uuid) -> ApiError {
    ApiError::not_found(format!("webhook {id} not found"))
}

/// A new signing secret: `whsec_` and 64 hex characters (256 bits).
fn new_signing_secret() -> String {
    format!("whsec_{}", crate::auth::new_secret())
}

#[OpenApi(tag = "ApiTags::Webhooks", prefix_path = "/api/v1")]
impl WebhooksApi {
    /// Register an endpoint for events (HTTP Basic). Deliveries are POSTs of
    /// `{"id", "event", "createdDate", "data"}` signed in `Inlet-Signature`; a failed one is
    /// tried again with growing waits (30 s doubling, at most an hour apart) for 24 hours. The
    /// answer carries the signing `secret`, shown only here. At most 20 per workspace. A
    /// member's webhook (at most 5 each) hears only of records the member may read and of sync
    /// runs of object types without permissions in use.
    #[oai(path = "/webhooks", method = "post", operation_id = "createWebhook")]
    async fn create(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        body: Json<WebhookIn>,
    ) -> Result<Created, ApiError> {
        let BasicAuth(principal) = auth;
        let events = webhook::check_registration(&body.url, &body.events)?;
        let owner = owner(&principal);
        if let Some(me) = owner {
            let hooks = state.webhooks.list_webhooks(principal.workspace_id).await?;
            webhook::check_member_quota(&hooks, me)?;
        }
        let url = reqwest::Url::parse(&body.url)
            .map_err(|e| ApiError::bad_request(format!("url is not a valid URL: {e}")))?;
        crate::webhooks::vetted_addresses(&url, state.settings.webhook_allow_private)
            .await
            .map_err(|why| ApiError::bad_request(format!("url is refused: {why}")))?;
        let hook = Webhook {
            id: Uuid::new_v4(),
            workspace_id: principal.workspace_id,
            url: body.0.url,
            events,
            secret: new_signing_secret(),
            created_date: time::now(),
            owner,
        };
        state.webhooks.create_webhook(&hook).await?;
        Ok(Created::Created(Json(CreatedWebhookOut {
            id: hook.id,
            url: hook.url.clone(),
            events: names(&hook),
            created_date: time::format(&hook.created_date),
            secret: hook.secret,
        })))
    }

    /// The workspace's webhooks, oldest first (without their secrets): every one for an ADMIN,
    /// a member's own for a member.
    #[oai(path = "/webhooks", method = "get", operation_id = "listWebhooks")]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
    ) -> Result<Json<Vec<WebhookOut>>, ApiError> {
        let BasicAuth(principal) = auth;
        let hooks = managed(&state, &principal).await?;
        Ok(Json(hooks.iter().map(Into::into).collect()))
    }

    /// Delete a webhook and its queued deliveries (a member: one of their own).
    #[oai(
        path = "/webhooks/:webhookId",
        method = "delete",
        operation_id = "deleteWebhook"
    )]
    async fn delete(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "webhookId")] webhook_id: Path<Uuid>,
    ) -> Result<Deleted, ApiError> {
        let BasicAuth(principal) = auth;
        if owner(&principal).is_some()
            && !managed(&state, &principal)
                .await?
                .iter()
                .any(|w| w.id == webhook_id.0)
        {
            return Err(not_found(webhook_id.0));
        }
        if state
            .webhooks
            .delete_webhook(principal.workspace_id, webhook_id.0)
            .await?
        {
            Ok(Deleted::Deleted)
        } else {
            Err(not_found(webhook_id.0))
        }
    }

    /// A webhook's deliveries, newest first, with where each stands and its last status.
    #[oai(
        path = "/webhooks/:webhookId/deliveries",
        method = "get",
        operation_id = "listWebhookDeliveries"
    )]
    async fn deliveries(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "webhookId")] webhook_id: Path<Uuid>,
        /// Deliveries to show, 1 to 1,000 (default 100).
        limit: Query<Option<u64>>,
    ) -> Result<Json<Vec<DeliveryOut>>, ApiError> {
        let BasicAuth(principal) = auth;
        let limit = match limit.0 {
            None => 100,
            Some(n) if (1..=1000).contains(&n) => usize::try_from(n).unwrap_or(1000),
            Some(n) => {
                return Err(ApiError::bad_request(format!(
                    "limit is from 1 to 1000; got {n}"
                )));
            }
        };
        let known = managed(&state, &principal)
            .await?
            .iter()
            .any(|w| w.id == webhook_id.0);
        if !known {
            return Err(not_found(webhook_id.0));
        }
        let deliveries = state
            .webhooks
            .list_deliveries(principal.workspace_id, webhook_id.0, limit)
            .await?;
        Ok(Json(deliveries.into_iter().map(Into::into).collect()))
    }
}
