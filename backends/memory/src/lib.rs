#![doc = include_str!("../README.md")]

mod documents;
mod log;
mod records;
pub mod register;
mod sources;
mod syncs;
mod webhooks;

use std::collections::{BTreeMap, HashMap};

use inlet_core::{
    Error, Result, WorkspaceId,
    index::{Change, LogPage, LogScope, Position},
    record::{ObjectTypeRef, Record, Scope},
    source::Source,
    sync::{self, SyncEvent, SyncRun, SyncState},
    tag::TagValue,
    time::{self},
    webhook::Delivery,
};
use parking_lot::Mutex;
use uuid::Uuid;

/// An in-memory store of sources, syncs, records and identities.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[derive(Debug, Default)]
struct State {
    /// Sources in creation order.
    sources: Vec<Source>,
    /// Sync runs per object type, oldest first.
    syncs: HashMap<Uuid, Vec<SyncRun>>,
    /// Records per object type, by externalId.
    records: HashMap<Uuid, HashMap<String, Record>>,
    /// Per object type, the sync of its last COMPLETE close: a record whose sync number is
    /// below it was removed by that close (a close raises it and moves no record).
    floors: HashMap<Uuid, i64>,
    /// The write log ([`inlet_core::index`]).
    log: Log,
    /// Their delivery queue, in the order queued.
    deliveries: Vec<Delivery>,
    /// Documents by (collection, key): body and revision.
    documents: BTreeMap<(String, String), (String, u64)>,
}

/// The write log: each record at the position of its last write (compacted), the COMPLETE
/// closes that raised a floor, and the sources deleted.
#[derive(Debug, Default)]
struct Log {
    head: Position,
    /// Position → (object type, externalId) of the record written there.
    records: BTreeMap<Position, (Uuid, String)>,
    /// Record id → its position in `records`.
    at: HashMap<Uuid, Position>,
    /// Position → deleted source, its workspace and when (milliseconds).
    sources: BTreeMap<Position, (Uuid, WorkspaceId, i64)>,
    /// Position → a COMPLETE close that raised its object type's floor.
    closes: BTreeMap<Position, Close>,
    /// The last position purged.
    floor: Position,
}

/// A logged COMPLETE close: the object type's records with a sync number in `from..to` were
/// removed by it.
#[derive(Debug, Clone, Copy)]
struct Close {
    scope: Scope,
    from: i64,
    to: i64,
    /// When (milliseconds), for the purge.
    at: i64,
}

impl Log {
    fn record(&mut self, record: &Record) {
        self.head += 1;
        if let Some(old) = self.at.insert(record.id, self.head) {
            self.records.remove(&old);
        }
        self.records.insert(
            self.head,
            (record.object_type.id, record.external_id.clone()),
        );
    }

    fn closed(&mut self, scope: Scope, from: i64, to: i64) {
        self.head += 1;
        let at = time::now().timestamp_millis();
        self.closes.insert(
            self.head,
            Close {
                scope,
                from,
                to,
                at,
            },
        );
    }

    fn source_deleted(
        &mut self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        record_ids: impl Iterator<Item = Uuid>,
    ) {
        for id in record_ids {
            if let Some(old) = self.at.remove(&id) {
                self.records.remove(&old);
            }
        }
        self.head += 1;
        let now = time::now().timestamp_millis();
        self.sources
            .insert(self.head, (source_id, workspace_id, now));
    }
}

impl State {
    /// The log after `after`, at most `limit` entries, only `scope`'s when given.
    fn read_log(&self, scope: Option<&LogScope>, after: Position, limit: usize) -> LogPage {
        let range = (std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded);
        let mut records = self.log.records.range(range).peekable();
        let mut sources = self.log.sources.range(range).peekable();
        let mut closes = self.log.closes.range(range).peekable();
        let mut changes = Vec::new();
        let mut upto = self.log.head;
        loop {
            let next = [
                records.peek().map(|(p, _)| **p),
                sources.peek().map(|(p, _)| **p),
                closes.peek().map(|(p, _)| **p),
            ];
            let Some(position) = next.into_iter().flatten().min() else {
                break;
            };
            if changes.len() >= limit {
                // Cut: complete up to the last entry given.
                upto = changes.last().map_or(after, Change::position);
                break;
            }
            // Each entry with the workspace and source it belongs to.
            let entry = if next[0] == Some(position) {
                records.next().and_then(|(_, (ot, external_id))| {
                    self.record_change(position, *ot, external_id, scope.is_some())
                })
            } else if next[1] == Some(position) {
                sources.next().map(|(_, &(source_id, workspace_id, _))| {
                    let change = Change::SourceDeleted {
                        position,
                        workspace_id: Some(workspace_id),
                        source_id,
                    };
                    (change, workspace_id, source_id)
                })
            } else {
                closes.next().map(|(_, close)| {
                    let change = Change::Closed {
                        position,
                        object_type_id: close.scope.object_type_id,
                        from_sync: close.from,
                        to_sync: close.to,
                    };
                    (change, close.scope.workspace_id, close.scope.source_id)
                })
            };
            let Some((change, workspace_id, source_id)) = entry else {
                continue;
            };
            if scope.is_some_and(|sc| !sc.holds(workspace_id, source_id)) {
                continue;
            }
            changes.push(change);
        }
        LogPage { changes, upto }
    }

    /// The log entry of a record written at `position`, with its workspace and source: the
    /// record as readers see it now, or for the change feed (`as_written`) removed only when its
    /// own write removed it, since the feed gives a later close's removal at the close (as the
    /// SQL store's scoped read does).
    fn record_change(
        &self,
        position: Position,
        ot: Uuid,
        external_id: &str,
        as_written: bool,
    ) -> Option<(Change, WorkspaceId, Uuid)> {
        let record = self.records.get(&ot)?.get(external_id)?;
        let source = self.sources.iter().find(|s| s.id == record.source_id)?;
        let name = source
            .object_type(ot)
            .map(|o| o.name.clone())
            .unwrap_or_default();
        let mut view = self.view(&name, record);
        if as_written {
            view.removed = record.removed;
        }
        let change = Change::Record {
            position,
            workspace_id: source.workspace_id,
            record: Box::new(view),
        };
        Some((change, source.workspace_id, source.id))
    }

    fn source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<&Source> {
        self.sources
            .iter()
            .find(|s| s.id == source_id && s.workspace_id == workspace_id)
            .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))
    }

    /// The object type's name, checking that the scope exists in the workspace.
    fn object_type_name(&self, scope: Scope) -> Result<String> {
        self.source(scope.workspace_id, scope.source_id)?
            .object_type(scope.object_type_id)
            .map(|o| o.name.clone())
            .ok_or_else(|| {
                Error::not_found(format!("object type {} not found", scope.object_type_id))
            })
    }

    fn latest_sync(&self, object_type_id: Uuid) -> Option<&SyncRun> {
        self.syncs.get(&object_type_id).and_then(|v| v.last())
    }

    fn open_sync_number(&self, object_type_id: Uuid) -> Option<i64> {
        self.latest_sync(object_type_id)
            .filter(|r| r.state == SyncState::Open)
            .map(|r| r.sync_number)
    }

    /// The sync a write acts on (see [`sync::resolve`]).
    fn resolve_sync(&self, object_type_id: Uuid, given: Option<i64>) -> Result<Option<i64>> {
        sync::resolve(given, self.open_sync_number(object_type_id))
    }

    fn count(&mut self, object_type_id: Uuid, sync_number: Option<i64>, event: SyncEvent) {
        if let Some(n) = sync_number
            && let Some(run) = self
                .syncs
                .get_mut(&object_type_id)
                .and_then(|v| v.iter_mut().find(|r| r.sync_number == n))
        {
            run.counters.count(event);
        }
    }

    /// A record as readers see it: with the object type's current name and sync number.
    fn view(&self, name: &str, record: &Record) -> Record {
        let mut r = record.clone();
        r.removed = self.gone(record);
        r.object_type = ObjectTypeRef {
            id: record.object_type.id,
            name: name.to_string(),
            current_sync_number: sync::current_number(self.latest_sync(record.object_type.id)),
        };
        r
    }

    /// The sync number below which the object type's records were removed by a COMPLETE close.
    fn floor(&self, object_type_id: Uuid) -> i64 {
        self.floors.get(&object_type_id).copied().unwrap_or(0)
    }

    /// Whether a record is removed: deleted, or below its object type's floor.
    fn gone(&self, record: &Record) -> bool {
        removed(record, self.floor(record.object_type.id))
    }

    fn sync_run(&self, scope: Scope, sync_number: i64) -> Result<&SyncRun> {
        self.object_type_name(scope)?;
        self.syncs
            .get(&scope.object_type_id)
            .and_then(|v| v.iter().find(|r| r.sync_number == sync_number))
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))
    }
}

/// Whether a record is removed: deleted, or below `floor` (the object type's last COMPLETE).
fn removed(record: &Record, floor: i64) -> bool {
    record.removed || record.sync_number < floor
}

impl State {
    /// [`inlet_core::store::Records::tag_counts`].
    fn tag_counts(&self, source_id: Uuid, tag: &str) -> HashMap<String, u64> {
        let Some(source) = self.sources.iter().find(|s| s.id == source_id) else {
            return HashMap::new();
        };
        let mut counts: HashMap<String, u64> = HashMap::new();
        for ot in &source.object_types {
            for r in self
                .records
                .get(&ot.id)
                .into_iter()
                .flat_map(|m| m.values())
            {
                if self.gone(r) {
                    continue;
                }
                for v in r.tags.get(tag).into_iter().flatten() {
                    if let TagValue::Text(id) = v {
                        *counts.entry(id.clone()).or_default() += 1;
                    }
                }
            }
        }
        counts
    }
}
