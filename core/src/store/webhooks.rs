//! Webhook registrations as documents ([`super::Documents`]): this module implements
//! [`WebhookStore`] once for every store, over the documents and the delivery queue the
//! backend keeps ([`Deliveries`]: its fair claim ranks every webhook's due deliveries at once). A workspace's registrations are counted
//! under a document every registration and removal rewrites, expecting the revision it read,
//! so two registrations cannot both take the last place.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use uuid::Uuid;

use super::documents::{
    ATTEMPTS, DocWrite, Documents, Expect, KeyRange, contended, get_as, scan_all, time_key,
};
use crate::{
    Error, Result, WorkspaceId,
    time::Timestamp,
    webhook::{ClaimRules, Deliveries, Delivery, MAX_WEBHOOKS, Webhook, WebhookStore},
};

/// Webhooks by id.
pub const WEBHOOKS: &str = "webhooks";
/// A workspace's webhooks, oldest first: `workspace/created/id` → the webhook.
pub const WORKSPACE_WEBHOOKS: &str = "workspace_webhooks";
/// One document per workspace with webhooks, rewritten by every registration and removal.
pub const WEBHOOK_SETS: &str = "webhook_sets";

fn listed_key(w: &Webhook) -> String {
    format!("{}/{}/{}", w.workspace_id, time_key(&w.created_date), w.id)
}

/// The writes that register `w`, the workspace's set (at `set_revision`; 0: none) first.
pub fn webhook_writes(w: &Webhook, set_revision: u64) -> Result<Vec<DocWrite>> {
    Ok(vec![
        set_write(w.workspace_id, set_revision)?,
        DocWrite::put(WEBHOOKS, w.id.to_string(), w, Expect::Absent)?,
        DocWrite::put(WORKSPACE_WEBHOOKS, listed_key(w), w, Expect::Absent)?,
    ])
}

fn set_write(workspace_id: WorkspaceId, revision: u64) -> Result<DocWrite> {
    DocWrite::put(
        WEBHOOK_SETS,
        workspace_id.to_string(),
        &serde_json::json!({}),
        Expect::at(revision),
    )
}

async fn set_revision<S: Documents + ?Sized>(store: &S, workspace_id: WorkspaceId) -> Result<u64> {
    Ok(store
        .get_document(WEBHOOK_SETS, &workspace_id.to_string())
        .await?
        .map_or(0, |d| d.revision))
}

#[async_trait]
impl<S: Documents + Deliveries + ?Sized> WebhookStore for S {
    async fn create_webhook(&self, webhook: &Webhook) -> Result<()> {
        for _ in 0..ATTEMPTS {
            let revision = set_revision(self, webhook.workspace_id).await?;
            if self.list_webhooks(webhook.workspace_id).await?.len() >= MAX_WEBHOOKS {
                return Err(Error::conflict(format!(
                    "a workspace has at most {MAX_WEBHOOKS} webhooks; delete one first"
                )));
            }
            if self
                .write_documents(&webhook_writes(webhook, revision)?)
                .await?
            {
                return Ok(());
            }
            let id = webhook.id.to_string();
            if self.get_document(WEBHOOKS, &id).await?.is_some() {
                return Err(Error::conflict(format!("webhook {id} exists")));
            }
        }
        Err(contended())
    }

    async fn list_webhooks(&self, workspace_id: WorkspaceId) -> Result<Vec<Webhook>> {
        let prefix = format!("{workspace_id}/");
        let range = KeyRange {
            prefix: &prefix,
            after: None,
        };
        scan_all(self, WORKSPACE_WEBHOOKS, range)
            .await?
            .iter()
            .map(|d| d.decode())
            .collect()
    }

    async fn delete_webhook(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        for _ in 0..ATTEMPTS {
            let found = get_as::<_, Webhook>(self, WEBHOOKS, &id.to_string()).await?;
            let Some((hook, revision)) = found.filter(|(w, _)| w.workspace_id == workspace_id)
            else {
                return Ok(false);
            };
            let writes = [
                set_write(workspace_id, set_revision(self, workspace_id).await?)?,
                DocWrite::delete(WEBHOOKS, id.to_string(), Expect::Revision(revision)),
                DocWrite::delete(WORKSPACE_WEBHOOKS, listed_key(&hook), Expect::Any),
            ];
            if self.write_documents(&writes).await? {
                // Deliveries queued meanwhile are removed by the claim that finds them.
                self.delete_deliveries(id).await?;
                return Ok(true);
            }
        }
        Err(contended())
    }

    async fn claim_deliveries(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<(Delivery, Webhook)>> {
        let claimed = self.claim_due(now, lease_until, rules).await?;
        let mut hooks: HashMap<Uuid, Option<Webhook>> = HashMap::new();
        let mut gone: BTreeSet<Uuid> = BTreeSet::new();
        let mut out = Vec::with_capacity(claimed.len());
        for d in claimed {
            let hook = match hooks.get(&d.webhook_id) {
                Some(known) => known.clone(),
                None => {
                    let id = d.webhook_id.to_string();
                    let found = get_as::<_, Webhook>(self, WEBHOOKS, &id).await?;
                    let found = found.map(|(w, _)| w);
                    hooks.insert(d.webhook_id, found.clone());
                    found
                }
            };
            match hook {
                Some(hook) => out.push((d, hook)),
                None => {
                    gone.insert(d.webhook_id);
                }
            }
        }
        for id in gone {
            self.delete_deliveries(id).await?;
        }
        Ok(out)
    }
}
