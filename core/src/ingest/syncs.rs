//! Opening and closing syncs: the store applies the state machine of [`crate::sync`]
//! atomically; the rules decided here are which mass-removal guard a COMPLETE close runs under
//! and who may drive an object type's syncs, or write its records, once its records are not
//! all everyone's.

use crate::{
    Error, RecordStore, Result,
    access::{DefaultAccess, Viewer},
    record::{ListQuery, Scope},
    source::ObjectType,
    sync::{CloseOperation, OpenOperation, SyncRun},
};

/// Why a reader who does not read everything is refused an object type's sync runs.
pub const CONNECTOR_SYNCS: &str = "this object type's records carry access lists: its sync runs \
     count and remove records you may not read, so they are opened, closed and read with a \
     workspace administrator's API token (the connector)";

/// Refuses `viewer` the object type's sync runs (open, close, read) once permissions are in use
/// in it: its `defaultAccess` is RESTRICTED or a record carries an access list of its own. A
/// run's counters count every record and a COMPLETE close removes records the caller may not
/// read, so they are the connector's then. Without permissions in use, every reader may, as the
/// spec has it. The refusal depends on the object type's setup only, never on which records a
/// caller may read.
pub async fn check_driver(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
    viewer: &Viewer,
) -> Result<()> {
    connector_only(store, object_type, scope, viewer, CONNECTOR_SYNCS).await
}

/// Why a reader who does not read everything is refused writing an object type's records.
pub const CONNECTOR_WRITES: &str = "this object type's records carry access lists: they are \
     written with a workspace administrator's API token (the connector), so that no write tells \
     whether a record you may not read exists";

/// Refuses `viewer` writing the object type's records (upload, JSON push) once permissions are
/// in use in it: a write to an externalId creates a record or replaces one, and which it did
/// would tell whether a record the caller may not read exists. Deletes and touches need no such
/// rule: they answer a hidden record as a missing one. Like [`check_driver`], the refusal
/// depends on the object type's setup only.
pub async fn check_writer(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
    viewer: &Viewer,
) -> Result<()> {
    connector_only(store, object_type, scope, viewer, CONNECTOR_WRITES).await
}

async fn connector_only(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
    viewer: &Viewer,
    why: &str,
) -> Result<()> {
    if matches!(viewer, Viewer::All) || !permissions_in_use(store, object_type, scope).await? {
        return Ok(());
    }
    Err(Error::Forbidden(why.into()))
}

/// Whether permissions are in use in the object type: its `defaultAccess` is RESTRICTED or a
/// live record carries an access list of its own.
pub async fn permissions_in_use(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
) -> Result<bool> {
    if object_type.default_access == DefaultAccess::Restricted {
        return Ok(true);
    }
    let query = ListQuery {
        limit: 1,
        with_access_list: true,
        ..Default::default()
    };
    Ok(!store.list_records(scope, &query).await?.is_empty())
}

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
