//! Opening and closing syncs: the store applies the state machine of [`crate::sync`]
//! atomically; the rule decided here is which mass-removal guard a COMPLETE close runs under.

use crate::{
    RecordStore, Result,
    record::Scope,
    source::ObjectType,
    sync::{CloseOperation, OpenOperation, SyncRun},
};

/// The share of live records a COMPLETE close may remove (percent), or `None` for no limit:
/// none when the caller allows a mass removal, else the object type's `completeMaxRemoval`,
/// else the service default.
pub fn removal_guard(
    object_type: &ObjectType,
    allow_mass_removal: bool,
    default_max: Option<f64>,
) -> Option<f64> {
    if allow_mass_removal {
        return None;
    }
    object_type.complete_max_removal.or(default_max)
}

/// Opens a sync of the object type (a conflict while another is open).
pub async fn open(store: &dyn RecordStore, scope: Scope, op: OpenOperation) -> Result<SyncRun> {
    store.open_sync(scope, op).await
}

/// Closes the open sync `sync_number` under the guard [`removal_guard`] resolves; a refused
/// COMPLETE close leaves the sync open.
pub async fn close(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
    sync_number: i64,
    op: CloseOperation,
    allow_mass_removal: bool,
    default_max: Option<f64>,
) -> Result<SyncRun> {
    let guard = removal_guard(object_type, allow_mass_removal, default_max);
    store
        .close_sync_guarded(scope, sync_number, op, guard)
        .await
}
