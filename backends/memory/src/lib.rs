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
    /// The write log ([`inlet_core::index`]).
    log: Log,
    /// Their delivery queue, in the order queued.
    deliveries: Vec<Delivery>,
    /// Documents by (collection, key): body and revision.
    documents: BTreeMap<(String, String), (String, u64)>,
}

/// The write log: each record at the position of its last write (compacted), and the sources
/// deleted. A close removes records one by one here, so it logs each of them.
#[derive(Debug, Default)]
struct Log {
    head: Position,
    /// Position → (object type, externalId) of the record written there.
    records: BTreeMap<Position, (Uuid, String)>,
    /// Record id → its position in `records`.
    at: HashMap<Uuid, Position>,
    /// Position → deleted source, its workspace and when (milliseconds).
    sources: BTreeMap<Position, (Uuid, WorkspaceId, i64)>,
    /// The last position purged.
    floor: Position,
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
        let mut changes = Vec::new();
        let mut upto = self.log.head;
        loop {
            let take_record = match (records.peek(), sources.peek()) {
                (None, None) => break,
                (Some((r, _)), Some((s, _))) => r < s,
                (r, _) => r.is_some(),
            };
            if changes.len() >= limit {
                // Cut: complete up to the last entry given.
                upto = changes.last().map_or(after, Change::position);
                break;
            }
            if take_record {
                let Some((&position, (object_type_id, external_id))) = records.next() else {
                    break;
                };
                let found = self
                    .records
                    .get(object_type_id)
                    .and_then(|m| m.get(external_id))
                    .and_then(|r| {
                        let source = self.sources.iter().find(|s| s.id == r.source_id)?;
                        Some((r, source))
                    });
                let Some((record, source)) = found else {
                    continue;
                };
                if scope.is_some_and(|sc| !sc.holds(source.workspace_id, source.id)) {
                    continue;
                }
                let name = source
                    .object_type(*object_type_id)
                    .map(|o| o.name.clone())
                    .unwrap_or_default();
                changes.push(Change::Record {
                    position,
                    workspace_id: source.workspace_id,
                    record: Box::new(self.view(&name, record)),
                });
            } else {
                let Some((&position, &(source_id, workspace_id, _))) = sources.next() else {
                    break;
                };
                if scope.is_some_and(|sc| !sc.holds(workspace_id, source_id)) {
                    continue;
                }
                changes.push(Change::SourceDeleted {
                    position,
                    workspace_id: Some(workspace_id),
                    source_id,
                });
            }
        }
        LogPage { changes, upto }
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
        r.object_type = ObjectTypeRef {
            id: record.object_type.id,
            name: name.to_string(),
            current_sync_number: sync::current_number(self.latest_sync(record.object_type.id)),
        };
        r
    }

    fn sync_run(&self, scope: Scope, sync_number: i64) -> Result<&SyncRun> {
        self.object_type_name(scope)?;
        self.syncs
            .get(&scope.object_type_id)
            .and_then(|v| v.iter().find(|r| r.sync_number == sync_number))
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))
    }
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
                if r.removed {
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
