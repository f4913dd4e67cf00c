//! Sync runs: open, close (COMPLETE removes what did not join), read (spec 4.4).

use async_trait::async_trait;

use crate::{
    Result,
    record::Scope,
    sync::{CloseOperation, OpenOperation, SyncRun},
};

/// Storage of sync runs; every method is atomic and runs the decisions of [`crate::sync`] inside its transaction or lock.
#[async_trait]
pub trait Syncs: Send + Sync + 'static {
    /// Opens a sync per [`crate::sync::open`].
    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun>;
    /// Closes the open sync `sync_number` per [`crate::sync::close`]; COMPLETE removes every live
    /// record of the object type that did not join it, in the same atomic step.
    async fn close_sync(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
    ) -> Result<SyncRun> {
        self.close_sync_guarded(scope, sync_number, op, None).await
    }
    /// [`Self::close_sync`] under the mass-removal guard: a COMPLETE close that would
    /// remove more than `max_removal_percent` of the live records is refused by
    /// [`crate::sync::check_mass_removal`] (counted in the close's own transaction) and the sync
    /// stays open.
    async fn close_sync_guarded(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
        max_removal_percent: Option<f64>,
    ) -> Result<SyncRun>;
    /// One sync run.
    async fn get_sync(&self, scope: Scope, sync_number: i64) -> Result<SyncRun>;
    /// All sync runs of the object type, newest first.
    async fn list_syncs(&self, scope: Scope) -> Result<Vec<SyncRun>>;
}
