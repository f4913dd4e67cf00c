//! The webhook delivery queue (the registrations are documents).

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::{
    Result, WorkspaceId,
    time::Timestamp,
    webhook::{Attempt, ClaimRules, Deliveries, Delivery, DeliveryState},
};
use std::collections::HashMap;

use uuid::Uuid;

#[async_trait]
impl Deliveries for MemoryStore {
    async fn queue_deliveries(&self, deliveries: &[Delivery]) -> Result<()> {
        self.state.lock().deliveries.extend_from_slice(deliveries);
        Ok(())
    }

    async fn claim_due(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<Delivery>> {
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
            d.next_attempt = Some(lease_until);
            out.push(d.clone());
        }
        // In the order queued, as the SQL stores answer.
        out.sort_by_key(|d| (d.created_date, d.id));
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

    async fn delete_deliveries(&self, webhook_id: Uuid) -> Result<()> {
        self.state
            .lock()
            .deliveries
            .retain(|d| d.webhook_id != webhook_id);
        Ok(())
    }
}
