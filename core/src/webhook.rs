//! Webhooks: HTTP endpoints a workspace's users register for events, and the deliveries queued
//! for them in the store ([`WebhookStore`]), so they survive a restart. The rules live here:
//! which events exist, what a delivery's body is, which URLs may be registered, who is told of
//! what (a member's webhook only of what the member may read, DESIGN 7a), and when a failed
//! delivery is tried again. Sending (HTTP, signatures, address checks) is the server's.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Error, RecordStore, Result, WorkspaceId, ingest,
    record::Record,
    store::Accounts,
    time::Timestamp,
    token::{Principal, Role},
};

/// Webhooks one workspace may register.
pub const MAX_WEBHOOKS: usize = 20;
/// Webhooks one member (a user who is not an ADMIN) may register, within the workspace's.
pub const MAX_MEMBER_WEBHOOKS: usize = 5;
/// The longest URL a webhook may have, in bytes.
pub const MAX_URL_BYTES: usize = 2048;
/// How long a delivery is tried: after this, counted from the event, it is given up.
pub const RETRY_FOR: Duration = Duration::from_secs(24 * 3600);
/// The longest wait between two attempts.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(3600);

/// What a webhook can be told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    /// A sync closed COMPLETE, COMPLETE_INCREMENTAL or INCREMENTAL (state COMPLETED).
    #[serde(rename = "sync.completed")]
    SyncCompleted,
    /// A sync closed with FAIL.
    #[serde(rename = "sync.failed")]
    SyncFailed,
    /// An upload was stored with empty content because its file could not be read.
    #[serde(rename = "record.extraction_failed")]
    RecordExtractionFailed,
    /// A source was created.
    #[serde(rename = "source.created")]
    SourceCreated,
}

impl Event {
    /// Every event.
    pub const ALL: [Event; 4] = [
        Event::SyncCompleted,
        Event::SyncFailed,
        Event::RecordExtractionFailed,
        Event::SourceCreated,
    ];

    /// The event's name on the wire (`sync.completed`).
    pub fn name(self) -> &'static str {
        match self {
            Event::SyncCompleted => "sync.completed",
            Event::SyncFailed => "sync.failed",
            Event::RecordExtractionFailed => "record.extraction_failed",
            Event::SourceCreated => "source.created",
        }
    }

    /// The event of a wire name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown event \"{name}\"; events are {}",
                    Self::ALL.map(Event::name).join(", ")
                ))
            })
    }
}

/// A registered endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    /// Its id.
    pub id: Uuid,
    /// The workspace whose events it receives.
    pub workspace_id: WorkspaceId,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The events it receives (at least one, no repeats).
    pub events: Vec<Event>,
    /// The signing secret (shown once, at registration).
    pub secret: String,
    /// When it was registered.
    pub created_date: Timestamp,
    /// The member who registered it, whose reads bound what it is told ([`Subject`]); `None`
    /// for an administrator's, told of everything.
    pub owner: Option<Uuid>,
}

/// What an event is about, which decides the members' webhooks it reaches. An
/// administrator's webhook receives every event it subscribed to.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The workspace's setup (a source created): every webhook.
    Setup,
    /// A record: a member's webhook only while the member may read it.
    Record(&'a Record),
    /// A sync run, whose counters count every record of its object type: a member's webhook
    /// only while no permissions are in use there (`ingest::syncs::check_driver`).
    Sync {
        /// The object type's sync runs are open to every reader.
        open_to_readers: bool,
    },
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Not delivered yet; tried again at `next_attempt`.
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// Given up after [`RETRY_FOR`].
    Failed,
}

impl DeliveryState {
    /// The state's stored and shown name.
    pub fn name(self) -> &'static str {
        match self {
            DeliveryState::Pending => "PENDING",
            DeliveryState::Delivered => "DELIVERED",
            DeliveryState::Failed => "FAILED",
        }
    }

    /// The state of a stored name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "PENDING" => Ok(DeliveryState::Pending),
            "DELIVERED" => Ok(DeliveryState::Delivered),
            "FAILED" => Ok(DeliveryState::Failed),
            other => Err(Error::backend(std::io::Error::other(format!(
                "unknown delivery state {other}"
            )))),
        }
    }
}

/// One event to one webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The delivery id (also in the body, so a receiver can drop repeats).
    pub id: Uuid,
    /// The webhook.
    pub webhook_id: Uuid,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// The event.
    pub event: Event,
    /// The JSON body sent, exactly ([`delivery_body`]).
    pub body: String,
    /// When the event happened.
    pub created_date: Timestamp,
    /// Attempts made.
    pub attempts: u32,
    /// Where it stands.
    pub state: DeliveryState,
    /// When it is tried next (pending only).
    pub next_attempt: Option<Timestamp>,
    /// When it was last tried.
    pub last_attempt: Option<Timestamp>,
    /// The endpoint's status at the last attempt, when it answered.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, when it did.
    pub last_error: Option<String>,
}

impl Delivery {
    /// A delivery `id` of `event` to `webhook`, not tried yet, due at `due`.
    pub fn pending(
        id: Uuid,
        webhook: &Webhook,
        event: Event,
        body: String,
        due: Timestamp,
    ) -> Self {
        Self {
            id,
            webhook_id: webhook.id,
            workspace_id: webhook.workspace_id,
            event,
            body,
            created_date: due,
            attempts: 0,
            state: DeliveryState::Pending,
            next_attempt: Some(due),
            last_attempt: None,
            last_status: None,
            last_error: None,
        }
    }
}

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// When it was made.
    pub at: Timestamp,
    /// The endpoint's status, when it answered.
    pub status: Option<u16>,
    /// Why it failed (`None`: delivered).
    pub error: Option<String>,
}

impl Attempt {
    /// Where a delivery stands after this attempt, and when it is tried next: delivered, to be
    /// tried again at `next`, or given up when a failure has no `next`.
    pub fn outcome(&self, next: Option<Timestamp>) -> (DeliveryState, Option<Timestamp>) {
        match (&self.error, next) {
            (None, _) => (DeliveryState::Delivered, None),
            (Some(_), Some(at)) => (DeliveryState::Pending, Some(at)),
            (Some(_), None) => (DeliveryState::Failed, None),
        }
    }
}

/// What one claim of due deliveries may take ([`WebhookStore::claim_deliveries`]): fair
/// between workspaces and between webhooks, so that a webhook or a workspace with a deep
/// backlog cannot fill a claim.
///
/// Due deliveries are ranked within their webhook (its earliest due first), those beyond
/// `per_webhook` dropped, then ranked within their workspace by that rank and due time, those
/// beyond `per_workspace` dropped; the claim takes the rest by workspace rank, webhook rank and
/// due time, at most `limit`: every workspace's first before any workspace's second.
#[derive(Debug, Clone, Copy)]
pub struct ClaimRules<'a> {
    /// Deliveries taken at most.
    pub limit: usize,
    /// Deliveries of one webhook taken at most.
    pub per_webhook: usize,
    /// Deliveries of one workspace taken at most.
    pub per_workspace: usize,
    /// Webhooks not to take from (the caller's, still sending).
    pub skip_webhooks: &'a [Uuid],
    /// Workspaces not to take from (the caller's, at their share).
    pub skip_workspaces: &'a [WorkspaceId],
}

impl ClaimRules<'_> {
    /// Up to `limit`, with no fairness bound (tests, tools).
    pub fn any(limit: usize) -> ClaimRules<'static> {
        ClaimRules {
            limit,
            per_webhook: limit,
            per_workspace: limit,
            skip_webhooks: &[],
            skip_workspaces: &[],
        }
    }
}

/// The delivery queue a backend keeps.
#[async_trait]
pub trait Deliveries: Send + Sync {
    /// Queues deliveries (state pending, due at once).
    async fn queue_deliveries(&self, deliveries: &[Delivery]) -> Result<()>;
    /// Takes pending deliveries due at `now`, as `rules` allow, and moves their next attempt
    /// to `lease_until`, so another replica does not take them meanwhile (a replica that dies
    /// mid-attempt leaves them to be tried after the lease); in the order they were created.
    async fn claim_due(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<Delivery>>;
    /// Removes the deliveries delivered or given up whose last attempt was before `before`
    /// (the retention); answers how many.
    async fn purge_deliveries(&self, before: Timestamp) -> Result<u64>;
    /// Records an attempt: delivered, to be tried again at `next`
    /// ([`next_attempt`]), or given up (`next` is `None` after a failure).
    async fn record_attempt(
        &self,
        delivery_id: Uuid,
        attempt: &Attempt,
        next: Option<Timestamp>,
    ) -> Result<()>;
    /// A webhook's deliveries, newest first, at most `limit`.
    async fn list_deliveries(
        &self,
        workspace_id: WorkspaceId,
        webhook_id: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>>;
    /// Removes every delivery of a webhook (it was deleted).
    async fn delete_deliveries(&self, webhook_id: Uuid) -> Result<()>;
}

/// Stores webhooks and their delivery queue: implemented once in core (`store::webhooks`, the
/// registrations as documents) for every store with [`Deliveries`].
#[async_trait]
pub trait WebhookStore: Deliveries {
    /// Registers a webhook; [`Error::Conflict`] when the workspace has [`MAX_WEBHOOKS`].
    async fn create_webhook(&self, webhook: &Webhook) -> Result<()>;
    /// A workspace's webhooks, oldest first.
    async fn list_webhooks(&self, workspace_id: WorkspaceId) -> Result<Vec<Webhook>>;
    /// Removes a webhook and its deliveries; `false` when the workspace has no such webhook.
    async fn delete_webhook(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool>;
    /// Takes due deliveries as [`Deliveries::claim_due`] does, each with its webhook. The
    /// deliveries of a webhook deleted meanwhile are removed, not answered.
    async fn claim_deliveries(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<(Delivery, Webhook)>>;
}

/// A delivery's body: `{"id", "event", "createdDate", "data"}`.
pub fn delivery_body(
    id: Uuid,
    event: Event,
    created: Timestamp,
    data: &serde_json::Value,
) -> String {
    serde_json::json!({
        "id": id,
        "event": event.name(),
        "createdDate": crate::time::format(&created),
        "data": data,
    })
    .to_string()
}

/// Queues `event` with `data` for every webhook of the workspace that receives it and may be
/// told of `subject` (a member's webhook hears only of what the member may read now; one whose
/// member is gone hears nothing); answers the deliveries queued.
pub async fn queue_event(
    store: &dyn WebhookStore,
    records: &dyn RecordStore,
    accounts: &dyn Accounts,
    workspace_id: WorkspaceId,
    event: Event,
    data: &serde_json::Value,
    subject: Subject<'_>,
) -> Result<Vec<Delivery>> {
    let now = crate::time::now();
    let mut deliveries = Vec::new();
    for hook in store.list_webhooks(workspace_id).await? {
        if !hook.events.contains(&event) || !told(records, accounts, &hook, subject).await? {
            continue;
        }
        let id = Uuid::new_v4();
        deliveries.push(Delivery::pending(
            id,
            &hook,
            event,
            delivery_body(id, event, now, data),
            now,
        ));
    }
    if !deliveries.is_empty() {
        store.queue_deliveries(&deliveries).await?;
    }
    Ok(deliveries)
}

/// Whether `hook` may be told of `subject`.
async fn told(
    records: &dyn RecordStore,
    accounts: &dyn Accounts,
    hook: &Webhook,
    subject: Subject<'_>,
) -> Result<bool> {
    let Some(owner) = hook.owner else {
        return Ok(true);
    };
    let user = match accounts.user_by_id(owner).await? {
        Some(u) if u.workspace_id == hook.workspace_id => u,
        _ => return Ok(false),
    };
    if user.role == Role::Admin {
        return Ok(true);
    }
    Ok(match subject {
        Subject::Setup => true,
        Subject::Sync { open_to_readers } => open_to_readers,
        Subject::Record(record) => {
            let viewer = ingest::access::viewer_of(records, &Principal::full(&user)).await?;
            record.readable_by(&viewer)
        }
    })
}

/// Checks that `owner` (a member registering a webhook) stays within
/// [`MAX_MEMBER_WEBHOOKS`], given the workspace's webhooks.
pub fn check_member_quota(existing: &[Webhook], owner: Uuid) -> Result<()> {
    if existing.iter().filter(|w| w.owner == Some(owner)).count() >= MAX_MEMBER_WEBHOOKS {
        return Err(Error::conflict(format!(
            "a member registers at most {MAX_MEMBER_WEBHOOKS} webhooks; delete one first"
        )));
    }
    Ok(())
}

/// When a delivery that failed its `attempts`th attempt at `now` is tried again: `base`,
/// doubling per attempt, at most [`MAX_RETRY_DELAY`]; `None` once that would be more than
/// [`RETRY_FOR`] after the event (give up).
pub fn next_attempt(
    created: Timestamp,
    attempts: u32,
    now: Timestamp,
    base: Duration,
) -> Option<Timestamp> {
    let factor = 1u32 << attempts.saturating_sub(1).min(20);
    let delay = base.saturating_mul(factor).min(MAX_RETRY_DELAY);
    let next = now + chrono::TimeDelta::from_std(delay).ok()?;
    let end = created + chrono::TimeDelta::from_std(RETRY_FOR).ok()?;
    (next <= end).then_some(next)
}

/// Checks a webhook's URL and events as given: an absolute `http` or `https` URL with a host,
/// without credentials or fragment, at most [`MAX_URL_BYTES`]; one or more known events without
/// repeats. (Whether the host is private is checked on its addresses, by the server.)
pub fn check_registration(url: &str, events: &[String]) -> Result<Vec<Event>> {
    if url.len() > MAX_URL_BYTES {
        return Err(Error::invalid(format!(
            "url is longer than {MAX_URL_BYTES} bytes"
        )));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| Error::invalid("url must be an absolute http:// or https:// URL"))?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(Error::invalid(
            "url must be an absolute http:// or https:// URL",
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(Error::invalid("url has no host"));
    }
    if authority.contains('@') {
        return Err(Error::invalid(
            "url must not carry credentials: deliveries are signed instead (Inlet-Signature)",
        ));
    }
    if url.contains('#') {
        return Err(Error::invalid("url must not have a fragment"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid(
            "url must not hold spaces or control characters",
        ));
    }
    if events.is_empty() {
        return Err(Error::invalid(format!(
            "events must name at least one of {}",
            Event::ALL.map(Event::name).join(", ")
        )));
    }
    let mut out = Vec::with_capacity(events.len());
    for name in events {
        let event = Event::parse(name)?;
        if out.contains(&event) {
            return Err(Error::invalid(format!("event \"{name}\" is listed twice")));
        }
        out.push(event);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_unknown_ones_are_named() {
        for e in Event::ALL {
            assert_eq!(Event::parse(e.name()).ok(), Some(e));
            assert_eq!(
                serde_json::to_value(e).ok(),
                Some(serde_json::json!(e.name()))
            );
        }
        let Err(Error::Invalid(m)) = Event::parse("sync.done") else {
            panic!("unknown event accepted");
        };
        assert!(m.contains("sync.completed"), "{m}");
    }

    #[test]
    fn retries_double_up_to_an_hour_and_stop_after_a_day() {
        let t0 = crate::time::now();
        let base = Duration::from_secs(30);
        let at = |attempts, after_secs: i64| {
            next_attempt(
                t0,
                attempts,
                t0 + chrono::TimeDelta::seconds(after_secs),
                base,
            )
            .map(|t| (t - t0).num_seconds() - after_secs)
        };
        assert_eq!(at(1, 0), Some(30));
        assert_eq!(at(2, 30), Some(60));
        assert_eq!(at(3, 90), Some(120));
        assert_eq!(at(12, 10_000), Some(3600));
        assert_eq!(at(40, 10_000), Some(3600));
        assert_eq!(at(30, 24 * 3600 - 60), None);
    }

    #[test]
    fn registrations_are_checked() {
        let ev = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_registration("https://hooks.example.com/inlet?x=1", &ev(&["sync.failed"])).ok(),
            Some(vec![Event::SyncFailed])
        );
        for (url, events, says) in [
            ("ftp://x.example/", ev(&["sync.failed"]), "http"),
            ("hooks.example.com/x", ev(&["sync.failed"]), "absolute"),
            ("https:///x", ev(&["sync.failed"]), "no host"),
            (
                "https://u:p@x.example/",
                ev(&["sync.failed"]),
                "credentials",
            ),
            ("https://x.example/#f", ev(&["sync.failed"]), "fragment"),
            ("https://x.example/a b", ev(&["sync.failed"]), "spaces"),
            ("https://x.example/", ev(&[]), "at least one"),
            (
                "https://x.example/",
                ev(&["sync.failed", "sync.failed"]),
                "twice",
            ),
            ("https://x.example/", ev(&["nope"]), "unknown event"),
        ] {
            let Err(Error::Invalid(m)) = check_registration(url, &events) else {
                panic!("{url} {events:?} accepted");
            };
            assert!(m.contains(says), "{url}: {m}");
        }
        let long = format!("https://x.example/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check_registration(&long, &ev(&["sync.failed"])).is_err());
    }

    #[test]
    fn a_body_holds_id_event_date_and_data() {
        let id = Uuid::from_u128(7);
        let t = crate::time::now();
        let body: serde_json::Value = serde_json::from_str(&delivery_body(
            id,
            Event::SourceCreated,
            t,
            &serde_json::json!({"id": "s"}),
        ))
        .unwrap_or_default();
        assert_eq!(body["id"], id.to_string());
        assert_eq!(body["event"], "source.created");
        assert_eq!(body["createdDate"], crate::time::format(&t));
        assert_eq!(body["data"]["id"], "s");
    }
}
