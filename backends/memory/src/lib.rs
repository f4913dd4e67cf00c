#![doc = include_str!("../README.md")]

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use inlet_core::{
    Error, RecordStore, Result, TokenStore, WorkspaceId,
    folder::{self, Folder},
    index::{Change, LogPage, LogScope, Position, Removed},
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    record::{
        self, ListQuery, ObjectTypeRef, PutOutcome, Record, RecordKey, RecordWrite, Scope, Touch,
        TouchItem,
    },
    source::Source,
    sync::{self, CloseOperation, OpenOperation, SyncEvent, SyncRun, SyncState},
    tag::TagValue,
    time::{self, Timestamp},
    token::{ApiToken, User, Workspace},
    webhook::{self, Attempt, Delivery, DeliveryState, Webhook, WebhookStore},
};
use parking_lot::Mutex;
use uuid::Uuid;

/// Rate-limit keys kept before those of past windows are dropped.
const MAX_RATE_KEYS: usize = 100_000;

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
    workspaces: Vec<Workspace>,
    users: Vec<User>,
    tokens: Vec<ApiToken>,
    /// Folders per (source, HIERARCHICAL tag externalId).
    folders: HashMap<(Uuid, String), Vec<Folder>>,
    clients: Vec<OAuthClient>,
    logos: HashMap<Uuid, Logo>,
    /// Codes by hash, with whether they were redeemed.
    codes: HashMap<String, (AuthCode, bool)>,
    oauth_tokens: HashMap<String, OAuthToken>,
    sessions: HashMap<String, Session>,
    /// Rate-limit windows: key → (window start, count).
    rates: HashMap<String, (i64, u32)>,
    /// The write log ([`inlet_core::index`]).
    log: Log,
    /// Registered webhooks, oldest first.
    webhooks: Vec<Webhook>,
    /// Their delivery queue, in the order queued.
    deliveries: Vec<Delivery>,
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

#[async_trait]
impl RecordStore for MemoryStore {
    async fn create_source(&self, source: &Source) -> Result<()> {
        let mut st = self.state.lock();
        if st.sources.iter().any(|s| s.id == source.id) {
            return Err(Error::conflict(format!("source {} exists", source.id)));
        }
        if let Some(existing) = st
            .sources
            .iter()
            .find(|s| s.workspace_id == source.workspace_id && s.external_id == source.external_id)
        {
            return Err(record::duplicate_source(&source.external_id, existing.id));
        }
        st.sources.push(source.clone());
        Ok(())
    }

    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: record::SourceEdit,
    ) -> Result<Source> {
        let mut st = self.state.lock();
        let mut source = st.source(workspace_id, source_id)?.clone();
        edit(&mut source)?;
        if let Some(stored) = st.sources.iter_mut().find(|s| s.id == source_id) {
            *stored = source.clone();
        }
        Ok(source)
    }

    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()> {
        let mut st = self.state.lock();
        let source = st.source(workspace_id, source_id)?.clone();
        let open: Vec<(Uuid, i64)> = source
            .object_types
            .iter()
            .filter_map(|ot| st.open_sync_number(ot.id).map(|n| (ot.id, n)))
            .collect();
        record::source_deletable(&source, &open)?;
        let mut gone = Vec::new();
        for ot in &source.object_types {
            st.syncs.remove(&ot.id);
            if let Some(records) = st.records.remove(&ot.id) {
                for r in records.values() {
                    gone.push(r.id);
                }
            }
        }
        st.log
            .source_deleted(workspace_id, source_id, gone.into_iter());
        st.folders.retain(|(s, _), _| *s != source_id);
        st.sources.retain(|s| s.id != source_id);
        Ok(())
    }

    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>> {
        let st = self.state.lock();
        Ok(st
            .sources
            .iter()
            .filter(|s| s.workspace_id == workspace_id)
            .cloned()
            .collect())
    }

    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source> {
        self.state.lock().source(workspace_id, source_id).cloned()
    }

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
        if sync::removes_stale(op) {
            let live = st
                .records
                .get(&scope.object_type_id)
                .into_iter()
                .flat_map(|m| m.values())
                .filter(|r| !r.removed);
            let (mut stale, mut all) = (0, 0);
            for r in live {
                all += 1;
                stale += u64::from(sync::is_stale(r.sync_number, sync_number));
            }
            sync::check_mass_removal(stale, all, max_removal_percent)?;
        }
        let mut removed = 0;
        let mut kept = 0;
        let mut logged = Vec::new();
        for r in st
            .records
            .entry(scope.object_type_id)
            .or_default()
            .values_mut()
            .filter(|r| !r.removed)
        {
            if sync::removes_stale(op) && sync::is_stale(r.sync_number, sync_number) {
                r.removed = true;
                removed += 1;
                logged.push(r.clone());
            } else {
                kept += 1;
            }
        }
        for r in &logged {
            st.log.record(r);
        }
        let run = st
            .syncs
            .get_mut(&scope.object_type_id)
            .and_then(|v| v.iter_mut().find(|r| r.sync_number == sync_number))
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))?;
        run.state = state;
        run.close_operation = Some(op);
        run.closed_at = Some(time::now());
        run.counters.removed = removed;
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

    async fn put_record(&self, mut write: RecordWrite) -> Result<PutOutcome> {
        inlet_core::input::check_record_write(&write)?;
        let mut st = self.state.lock();
        let scope = write.key.scope;
        let name = st.object_type_name(scope)?;
        write.sync_number = st.resolve_sync(scope.object_type_id, write.sync_number)?;
        let current = sync::current_number(st.latest_sync(scope.object_type_id));
        let now = time::now();
        let extraction_failed = write.extraction.failure.is_some() && write.content.is_empty();
        let records = st.records.entry(scope.object_type_id).or_default();
        let existing = records.get(&write.key.external_id);
        let created = existing.is_none();
        let record = Record {
            id: existing.map_or_else(Uuid::new_v4, |r| r.id),
            source_id: scope.source_id,
            object_type: ObjectTypeRef {
                id: scope.object_type_id,
                name: String::new(),
                current_sync_number: 0,
            },
            external_id: write.key.external_id.clone(),
            version: existing.map_or(1, |r| r.version + 1),
            title: write.title,
            file_name: write.file_name,
            url: write.url,
            content: write.content,
            tags: write.tags,
            external_checksum: write.external_checksum,
            created_date: existing.map_or(now, |r| r.created_date),
            modified_date: now,
            modified_by: write.modified_by,
            sync_number: sync::membership(
                write.sync_number,
                current,
                existing.filter(|r| !r.removed).map(|r| r.sync_number),
            ),
            removed: false,
            extraction: write.extraction,
        };
        records.insert(write.key.external_id.clone(), record.clone());
        st.log.record(&record);
        st.count(
            scope.object_type_id,
            write.sync_number,
            SyncEvent::Uploaded { extraction_failed },
        );
        Ok(PutOutcome {
            record: st.view(&name, &record),
            created,
        })
    }

    async fn touch_record(&self, key: &RecordKey, mut touch: Touch) -> Result<Record> {
        inlet_core::input::check_external_id(&key.external_id)?;
        let mut st = self.state.lock();
        let scope = key.scope;
        let name = st.object_type_name(scope)?;
        touch.sync_number = st.resolve_sync(scope.object_type_id, touch.sync_number)?;
        let record = st
            .records
            .get_mut(&scope.object_type_id)
            .and_then(|m| m.get_mut(&key.external_id));
        record::check_touch(record.as_deref(), touch.if_match.as_deref())?;
        let record = record.ok_or_else(|| Error::not_found("no current record"))?;
        if let Some(n) = touch.sync_number {
            record.sync_number = n;
        }
        let record = record.clone();
        st.count(scope.object_type_id, touch.sync_number, touch.event);
        Ok(st.view(&name, &record))
    }

    async fn get_record(&self, key: &RecordKey) -> Result<Record> {
        inlet_core::input::check_external_id(&key.external_id)?;
        let st = self.state.lock();
        let name = st.object_type_name(key.scope)?;
        st.records
            .get(&key.scope.object_type_id)
            .and_then(|m| m.get(&key.external_id))
            .map(|r| st.view(&name, r))
            .ok_or_else(|| {
                Error::not_found(format!("no record with externalId '{}'", key.external_id))
            })
    }

    async fn delete_record(&self, key: &RecordKey) -> Result<()> {
        inlet_core::input::check_external_id(&key.external_id)?;
        let mut st = self.state.lock();
        st.object_type_name(key.scope)?;
        match st
            .records
            .get_mut(&key.scope.object_type_id)
            .and_then(|m| m.get_mut(&key.external_id))
        {
            Some(r) if !r.removed => {
                r.removed = true;
                let r = r.clone();
                st.log.record(&r);
                Ok(())
            }
            _ => Err(Error::not_found(format!(
                "no current record with externalId '{}'",
                key.external_id
            ))),
        }
    }

    async fn get_records(&self, scope: Scope, external_ids: &[String]) -> Result<Vec<Record>> {
        let st = self.state.lock();
        let name = st.object_type_name(scope)?;
        let Some(records) = st.records.get(&scope.object_type_id) else {
            return Ok(Vec::new());
        };
        Ok(external_ids
            .iter()
            .filter_map(|id| records.get(id))
            .map(|r| {
                let mut r = st.view(&name, r);
                r.content.clear();
                r
            })
            .collect())
    }

    async fn touch_records(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        let mut st = self.state.lock();
        st.object_type_name(scope)?;
        let sync_number = st.resolve_sync(scope.object_type_id, sync_number)?;
        let mut results = Vec::with_capacity(items.len());
        let mut touched = 0;
        for item in items {
            let record = st
                .records
                .get_mut(&scope.object_type_id)
                .and_then(|m| m.get_mut(&item.external_id));
            let outcome = record::check_touch(record.as_deref(), item.if_match.as_deref());
            if let (Ok(()), Some(r), Some(n)) = (&outcome, record, sync_number) {
                r.sync_number = n;
            }
            touched += usize::from(outcome.is_ok());
            results.push(outcome);
        }
        for _ in 0..touched {
            st.count(scope.object_type_id, sync_number, SyncEvent::Touched);
        }
        Ok(results)
    }

    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>> {
        let st = self.state.lock();
        let name = st.object_type_name(scope)?;
        let Some(records) = st.records.get(&scope.object_type_id) else {
            return Ok(Vec::new());
        };
        let mut page: Vec<&Record> = records
            .values()
            .filter(|r| {
                query
                    .after
                    .as_deref()
                    .is_none_or(|a| r.external_id.as_str() > a)
            })
            .filter(|r| query.include_removed || !r.removed)
            .filter(|r| query.modified_since.is_none_or(|t| r.modified_date >= t))
            .collect();
        page.sort_unstable_by(|a, b| a.external_id.cmp(&b.external_id));
        page.truncate(query.limit);
        Ok(page
            .into_iter()
            .map(|r| {
                let mut r = st.view(&name, r);
                r.content.clear();
                r
            })
            .collect())
    }

    async fn log_head(&self) -> Result<Position> {
        Ok(self.state.lock().log.head)
    }

    async fn log_after(&self, after: Position, limit: usize) -> Result<LogPage> {
        Ok(self.state.lock().read_log(None, after, limit))
    }

    async fn log_after_in(
        &self,
        scope: &LogScope,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        Ok(self.state.lock().read_log(Some(scope), after, limit))
    }

    async fn closed_records(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>> {
        // A close here marks each record removed and logs it: the log holds no close entry.
        let st = self.state.lock();
        let mut removed: Vec<Removed> = st
            .records
            .get(&object_type_id)
            .map(|m| {
                m.values()
                    .filter(|r| !r.removed && (from_sync..to_sync).contains(&r.sync_number))
                    .filter(|r| after.is_none_or(|a| r.id > a))
                    .map(|r| Removed {
                        id: r.id,
                        source_id: r.source_id,
                        object_type_id,
                        external_id: r.external_id.clone(),
                        sync_number: r.sync_number,
                    })
                    .collect()
            })
            .unwrap_or_default();
        removed.sort_unstable_by_key(|r| r.id);
        removed.truncate(limit);
        Ok(removed)
    }

    async fn scan_live_in(
        &self,
        scope: &LogScope,
        upto: Position,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        let st = self.state.lock();
        let mut out = Vec::new();
        for source in st
            .sources
            .iter()
            .filter(|s| scope.holds(s.workspace_id, s.id))
        {
            for ot in &source.object_types {
                for r in st.records.get(&ot.id).into_iter().flat_map(|m| m.values()) {
                    let written = st.log.at.get(&r.id).copied().unwrap_or(0);
                    if !r.removed && written <= upto && after.is_none_or(|a| r.id > a) {
                        out.push(st.view(&ot.name, r));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|r| r.id);
        out.truncate(limit);
        Ok(out)
    }

    async fn log_floor(&self) -> Result<Position> {
        Ok(self.state.lock().log.floor)
    }

    async fn purge_log(&self, before: Timestamp) -> Result<Position> {
        let mut st = self.state.lock();
        let before = before.timestamp_millis();
        let log = &mut st.log;
        if let Some(newest) = log
            .sources
            .iter()
            .filter(|(_, (_, _, at))| *at < before)
            .map(|(p, _)| *p)
            .max()
        {
            log.sources.retain(|p, _| *p > newest);
            log.floor = log.floor.max(newest);
        }
        Ok(log.floor)
    }

    async fn scan_live(
        &self,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        let st = self.state.lock();
        let mut out = Vec::new();
        for source in &st.sources {
            for ot in &source.object_types {
                for r in st.records.get(&ot.id).into_iter().flat_map(|m| m.values()) {
                    if !r.removed && after.is_none_or(|a| r.id > a) {
                        out.push((source.workspace_id, st.view(&ot.name, r)));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|(_, r)| r.id);
        out.truncate(limit);
        Ok(out)
    }

    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        let mut st = self.state.lock();
        st.source(workspace_id, source_id)?;
        let list = st.folders.entry((source_id, tag.to_string())).or_default();
        let created = !folder::check_put(list, folder)?;
        match list
            .iter_mut()
            .find(|f| f.external_id == folder.external_id)
        {
            Some(f) => *f = folder.clone(),
            None => list.push(folder.clone()),
        }
        Ok(created)
    }

    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool> {
        let st = self.state.lock();
        Ok(st
            .folders
            .get(&(source_id, tag.to_string()))
            .is_some_and(|l| l.iter().any(|f| f.external_id == external_id)))
    }

    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        let st = self.state.lock();
        let counts = st.folder_counts(workspace_id, source_id, tag)?;
        Ok(st
            .folders
            .get(&(source_id, tag.to_string()))
            .map(|list| {
                list.iter()
                    .map(|f| (f.clone(), counts.get(&f.external_id).copied().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        let mut st = self.state.lock();
        let counts = st.folder_counts(workspace_id, source_id, tag)?;
        let list = st.folders.entry((source_id, tag.to_string())).or_default();
        folder::check_delete(
            list,
            external_id,
            counts.get(external_id).copied().unwrap_or(0),
        )?;
        list.retain(|f| f.external_id != external_id);
        Ok(())
    }
}

impl State {
    /// Live records per folder value of a source's tag.
    fn folder_counts(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<HashMap<String, u64>> {
        let source = self.source(workspace_id, source_id)?;
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
        Ok(counts)
    }
}

#[async_trait]
impl TokenStore for MemoryStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<()> {
        let mut st = self.state.lock();
        if st.workspaces.iter().any(|w| w.name == workspace.name) {
            return Err(Error::conflict(format!(
                "workspace '{}' exists",
                workspace.name
            )));
        }
        st.workspaces.push(workspace.clone());
        Ok(())
    }

    async fn workspace_by_name(&self, name: &str) -> Result<Option<Workspace>> {
        Ok(self
            .state
            .lock()
            .workspaces
            .iter()
            .find(|w| w.name == name)
            .cloned())
    }

    async fn create_user(&self, user: &User) -> Result<()> {
        let mut st = self.state.lock();
        if st
            .users
            .iter()
            .any(|u| u.email.eq_ignore_ascii_case(&user.email))
        {
            return Err(Error::conflict(format!("user '{}' exists", user.email)));
        }
        st.users.push(user.clone());
        Ok(())
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        Ok(self
            .state
            .lock()
            .users
            .iter()
            .find(|u| u.email.eq_ignore_ascii_case(email))
            .cloned())
    }

    async fn count_users(&self) -> Result<u64> {
        Ok(self.state.lock().users.len() as u64)
    }

    async fn add_api_token(&self, token: &ApiToken) -> Result<()> {
        let mut st = self.state.lock();
        if !st.users.iter().any(|u| u.id == token.user_id) {
            return Err(Error::not_found(format!(
                "user {} not found",
                token.user_id
            )));
        }
        st.tokens.push(token.clone());
        Ok(())
    }

    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>> {
        let st = self.state.lock();
        Ok(st
            .tokens
            .iter()
            .find(|t| t.token_hash == token_hash)
            .and_then(|t| st.users.iter().find(|u| u.id == t.user_id))
            .cloned())
    }

    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>> {
        let st = self.state.lock();
        Ok(st.workspaces.iter().find(|w| w.id == id).cloned())
    }

    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool> {
        let mut st = self.state.lock();
        let Some(w) = st.workspaces.iter_mut().find(|w| w.name == name) else {
            return Ok(false);
        };
        w.oauth_enabled = enabled;
        let workspace = w.id;
        if !enabled {
            st.oauth_tokens.retain(|_, t| t.workspace_id != workspace);
            st.codes.retain(|_, (c, _)| c.workspace_id != workspace);
        }
        Ok(true)
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>> {
        Ok(self.state.lock().users.iter().find(|u| u.id == id).cloned())
    }

    async fn list_api_tokens(&self, user_id: Uuid) -> Result<Vec<ApiToken>> {
        let st = self.state.lock();
        Ok(st
            .tokens
            .iter()
            .filter(|t| t.user_id == user_id)
            .cloned()
            .collect())
    }

    async fn delete_api_token(&self, user_id: Uuid, token_id: Uuid) -> Result<bool> {
        let mut st = self.state.lock();
        let before = st.tokens.len();
        st.tokens
            .retain(|t| !(t.user_id == user_id && t.id == token_id));
        Ok(st.tokens.len() != before)
    }

    async fn create_client(&self, client: &OAuthClient) -> Result<()> {
        let mut st = self.state.lock();
        if st.clients.iter().any(|c| c.id == client.id) {
            return Err(Error::conflict(format!("client {} exists", client.id)));
        }
        st.clients.push(client.clone());
        Ok(())
    }

    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>> {
        Ok(self
            .state
            .lock()
            .clients
            .iter()
            .find(|c| c.id == id)
            .cloned())
    }

    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>> {
        let st = self.state.lock();
        Ok(st
            .clients
            .iter()
            .filter(|c| c.workspace_id == workspace_id)
            .cloned()
            .collect())
    }

    async fn update_client(&self, client: &OAuthClient) -> Result<bool> {
        let mut st = self.state.lock();
        Ok(
            match st
                .clients
                .iter_mut()
                .find(|c| c.id == client.id && c.workspace_id == client.workspace_id)
            {
                Some(c) => {
                    let has_logo = c.has_logo;
                    *c = client.clone();
                    c.has_logo = has_logo;
                    true
                }
                None => false,
            },
        )
    }

    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        let mut st = self.state.lock();
        let before = st.clients.len();
        st.clients
            .retain(|c| !(c.id == id && c.workspace_id == workspace_id));
        if st.clients.len() == before {
            return Ok(false);
        }
        st.logos.remove(&id);
        st.codes.retain(|_, (c, _)| c.client_id != id);
        st.oauth_tokens.retain(|_, t| t.client_id != id);
        Ok(true)
    }

    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool> {
        let mut st = self.state.lock();
        let Some(c) = st
            .clients
            .iter_mut()
            .find(|c| c.id == id && c.workspace_id == workspace_id)
        else {
            return Ok(false);
        };
        c.has_logo = true;
        st.logos.insert(id, logo.clone());
        Ok(true)
    }

    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>> {
        Ok(self.state.lock().logos.get(&id).cloned())
    }

    async fn save_code(&self, code: &AuthCode) -> Result<()> {
        let mut st = self.state.lock();
        let now = time::now();
        st.codes.retain(|_, (c, _)| c.expires_at > now);
        st.codes
            .insert(code.code_hash.clone(), (code.clone(), false));
        Ok(())
    }

    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption> {
        let mut st = self.state.lock();
        Ok(match st.codes.get_mut(code_hash) {
            Some((code, used)) if *used => Redemption::Replayed(code.clone()),
            Some((code, used)) => {
                *used = true;
                Redemption::Redeemed(code.clone())
            }
            None => Redemption::Unknown,
        })
    }

    async fn save_token(&self, token: &OAuthToken) -> Result<()> {
        let mut st = self.state.lock();
        if !st.clients.iter().any(|c| c.id == token.client_id) {
            return Err(Error::not_found(format!(
                "client {} not found",
                token.client_id
            )));
        }
        let now = time::now();
        st.oauth_tokens
            .retain(|_, t| t.expires_at.is_none_or(|at| at > now));
        st.oauth_tokens
            .insert(token.token_hash.clone(), token.clone());
        Ok(())
    }

    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        Ok(self.state.lock().oauth_tokens.get(token_hash).cloned())
    }

    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        Ok(self.state.lock().oauth_tokens.remove(token_hash))
    }

    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64> {
        let mut st = self.state.lock();
        let before = st.oauth_tokens.len();
        st.oauth_tokens.retain(|_, t| t.grant_id != grant_id);
        Ok((before - st.oauth_tokens.len()) as u64)
    }

    async fn save_session(&self, session: &Session) -> Result<()> {
        let mut st = self.state.lock();
        let now = time::now();
        st.sessions.retain(|_, s| s.expires_at > now);
        st.sessions.insert(session.id_hash.clone(), session.clone());
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<Session>> {
        Ok(self.state.lock().sessions.get(id_hash).cloned())
    }

    async fn delete_session(&self, id_hash: &str) -> Result<()> {
        self.state.lock().sessions.remove(id_hash);
        Ok(())
    }

    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let mut st = self.state.lock();
        let expired = window_start_ms - inlet_core::token::RATE_RETENTION_MS;
        let cutoff = if st.rates.len() >= MAX_RATE_KEYS {
            window_start_ms
        } else {
            expired
        };
        st.rates.retain(|_, (w, _)| *w >= cutoff);
        let entry = st
            .rates
            .entry(key.to_string())
            .or_insert((window_start_ms, 0));
        if entry.0 != window_start_ms {
            *entry = (window_start_ms, 0);
        }
        entry.1 = entry.1.saturating_add(1);
        Ok(entry.1)
    }

    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let st = self.state.lock();
        Ok(st
            .rates
            .get(key)
            .filter(|(w, _)| *w == window_start_ms)
            .map_or(0, |(_, n)| *n))
    }
}

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
