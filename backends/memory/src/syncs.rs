//! Sync runs: open and close under the store lock. A COMPLETE close raises the object
//! type's floor, as the SQL stores do: the records below it read as removed.

use crate::{MemoryStore, removed};
use async_trait::async_trait;
use inlet_core::store::Syncs;
use inlet_core::{
    Error, Result,
    record::Scope,
    sync::{self, CloseOperation, OpenOperation, SyncRun, SyncState},
    time::{self},
};

#[async_trait]
impl Syncs for MemoryStore {
    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun> {
        let mut st = self.state.lock();
        st.object_type_name(scope)?;
        let number = sync::open(st.latest_sync(scope.object_type_id), op)?;
        let run = SyncRun {
            object_type_id: scope.object_type_id,
            sync_number: number,
            operation: op,
            state: SyncState::Open,
            close_operation: None,
            started_at: time::now(),
            closed_at: None,
            counters: Default::default(),
            kept: None,
        };
        st.syncs
            .entry(scope.object_type_id)
            .or_default()
            .push(run.clone());
        Ok(run)
    }

    async fn close_sync_guarded(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
        max_removal_percent: Option<f64>,
    ) -> Result<SyncRun> {
        let mut st = self.state.lock();
        let state = sync::close(st.sync_run(scope, sync_number)?, op)?;
        let floor = st.floor(scope.object_type_id);
        // Live records not in this sync are stale (all below it: it is the latest).
        let (mut stale, mut kept) = (0, 0);
        for r in st
            .records
            .get(&scope.object_type_id)
            .into_iter()
            .flat_map(|m| m.values())
            .filter(|r| !removed(r, floor))
        {
            if sync::removes_stale(op) && sync::is_stale(r.sync_number, sync_number) {
                stale += 1;
            } else {
                kept += 1;
            }
        }
        if sync::removes_stale(op) {
            sync::check_mass_removal(stale, stale + kept, max_removal_percent)?;
            // Raising the floor removes them all; no record is written.
            if sync_number > floor {
                st.floors.insert(scope.object_type_id, sync_number);
                st.log.closed(scope, floor, sync_number);
            }
        }
        let run = st
            .syncs
            .get_mut(&scope.object_type_id)
            .and_then(|v| v.iter_mut().find(|r| r.sync_number == sync_number))
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))?;
        run.state = state;
        run.close_operation = Some(op);
        run.closed_at = Some(time::now());
        run.counters.removed = stale;
        run.kept = Some(kept);
        Ok(run.clone())
    }

    async fn get_sync(&self, scope: Scope, sync_number: i64) -> Result<SyncRun> {
        self.state.lock().sync_run(scope, sync_number).cloned()
    }

    async fn list_syncs(&self, scope: Scope) -> Result<Vec<SyncRun>> {
        let st = self.state.lock();
        st.object_type_name(scope)?;
        let mut runs = st
            .syncs
            .get(&scope.object_type_id)
            .cloned()
            .unwrap_or_default();
        runs.reverse();
        Ok(runs)
    }
}
