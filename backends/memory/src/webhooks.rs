//! Webhooks and their delivery queue.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::{
    Error, Result, WorkspaceId,
    time::Timestamp,
    webhook::{self, Attempt, ClaimRules, Delivery, DeliveryState, Webhook, WebhookStore},
};
use std::collections::HashMap;

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
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<(Delivery, Webhook)>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let mut due: Vec<usize> = st
            .deliveries
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.state == DeliveryState::Pending
                    && d.next_attempt.is_some_and(|t| t <= now)
                    && !rules.skip_webhooks.contains(&d.webhook_id)
                    && !rules.skip_workspaces.contains(&d.workspace_id)
            })
            .map(|(i, _)| i)
            .collect();
        // The SQL stores' two windows: rank within the webhook, then within the workspace.
        let key = |i: usize| (st.deliveries[i].next_attempt, st.deliveries[i].id);
        due.sort_by_key(|i| key(*i));
        let mut turns: HashMap<Uuid, usize> = HashMap::new();
        let mut ranked: Vec<(usize, usize)> = due
            .into_iter()
            .map(|i| {
                let turn = turns.entry(st.deliveries[i].webhook_id).or_default();
                *turn += 1;
                (*turn, i)
            })
            .filter(|(turn, _)| *turn <= rules.per_webhook)
            .collect();
        ranked.sort_by_key(|(turn, i)| (*turn, key(*i)));
        let mut shares: HashMap<Uuid, usize> = HashMap::new();
        let mut picked: Vec<(usize, usize, usize)> = ranked
            .into_iter()
            .map(|(turn, i)| {
                let share = shares.entry(st.deliveries[i].workspace_id).or_default();
                *share += 1;
                (*share, turn, i)
            })
            .filter(|(share, _, _)| *share <= rules.per_workspace)
            .collect();
        picked.sort_by_key(|(share, turn, i)| (*share, *turn, key(*i)));
        let mut out = Vec::new();
        for (_, _, i) in picked {
            if out.len() >= rules.limit {
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

    async fn purge_deliveries(&self, before: Timestamp) -> Result<u64> {
        let mut st = self.state.lock();
        let count = st.deliveries.len();
        st.deliveries.retain(|d| {
            d.state == DeliveryState::Pending || d.last_attempt.is_none_or(|t| t >= before)
        });
        Ok((count - st.deliveries.len()) as u64)
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
