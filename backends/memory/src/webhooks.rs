//! Webhooks and their delivery queue.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::{
    Error, Result, WorkspaceId,
    time::Timestamp,
    webhook::{self, Attempt, Delivery, DeliveryState, Webhook, WebhookStore},
};
use uuid::Uuid;

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn create_webhook(&self, hook: &Webhook) -> Result<()> {
        let mut st = self.state.lock();
        let count = st
            .webhooks
            .iter()
            .filter(|w| w.workspace_id == hook.workspace_id)
            .count();
        if count >= webhook::MAX_WEBHOOKS {
            return Err(Error::conflict(format!(
                "a workspace has at most {} webhooks; delete one first",
                webhook::MAX_WEBHOOKS
            )));
        }
        st.webhooks.push(hook.clone());
        Ok(())
    }

    async fn list_webhooks(&self, workspace_id: WorkspaceId) -> Result<Vec<Webhook>> {
        let st = self.state.lock();
        Ok(st
            .webhooks
            .iter()
            .filter(|w| w.workspace_id == workspace_id)
            .cloned()
            .collect())
    }

    async fn delete_webhook(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        let mut st = self.state.lock();
        let before = st.webhooks.len();
        st.webhooks
            .retain(|w| !(w.id == id && w.workspace_id == workspace_id));
        let gone = st.webhooks.len() < before;
        if gone {
            st.deliveries.retain(|d| d.webhook_id != id);
        }
        Ok(gone)
    }

    async fn queue_deliveries(&self, deliveries: &[Delivery]) -> Result<()> {
        self.state.lock().deliveries.extend_from_slice(deliveries);
        Ok(())
    }

    async fn claim_deliveries(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> Result<Vec<(Delivery, Webhook)>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let mut due: Vec<usize> = st
            .deliveries
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.state == DeliveryState::Pending && d.next_attempt.is_some_and(|t| t <= now)
            })
            .map(|(i, _)| i)
            .collect();
        due.sort_by_key(|i| st.deliveries[*i].next_attempt);
        let mut out = Vec::new();
        for i in due {
            if out.len() >= limit {
                break;
            }
            let d = &mut st.deliveries[i];
            let Some(hook) = st.webhooks.iter().find(|w| w.id == d.webhook_id) else {
                continue;
            };
            d.next_attempt = Some(lease_until);
            out.push((d.clone(), hook.clone()));
        }
        Ok(out)
    }

    async fn record_attempt(
        &self,
        delivery_id: Uuid,
        attempt: &Attempt,
        next: Option<Timestamp>,
    ) -> Result<()> {
        let mut st = self.state.lock();
        if let Some(d) = st.deliveries.iter_mut().find(|d| d.id == delivery_id) {
            d.attempts += 1;
            d.last_attempt = Some(attempt.at);
            d.last_status = attempt.status;
            d.last_error = attempt.error.clone();
            (d.state, d.next_attempt) = attempt.outcome(next);
        }
        Ok(())
    }

    async fn list_deliveries(
        &self,
        workspace_id: WorkspaceId,
        webhook_id: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        let st = self.state.lock();
        Ok(st
            .deliveries
            .iter()
            .rev()
            .filter(|d| d.webhook_id == webhook_id && d.workspace_id == workspace_id)
            .take(limit)
            .cloned()
            .collect())
    }
}
