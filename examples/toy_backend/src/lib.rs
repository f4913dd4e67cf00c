//! Example: a storage backend in its own crate. `toy:NAME` opens a store shared by every open
//! of the same name in this process (so two servers in one test see one database, like two
//! replicas over PostgreSQL).
//!
//! It shows the two things a new backend does (docs/contributors.md, "Adding a storage
//! backend"):
//! - **registration**: linking this crate into a binary makes the server accept `toy:` URLs,
//!   with no edit to core, the server or another backend;
//! - **the contract**: [`ToyStore`] writes exactly the 31 methods no trait provides, and gets
//!   everything else from core: folders, groups, webhook registrations, accounts, OAuth, jobs
//!   and rate limits (all kept as documents), and the default of every provided method. A
//!   real backend stores in each method; this one forwards each to the in-memory store, so
//!   the list below is the whole work. Its conformance run (`tests/toy_conformance.rs`) checks
//!   the defaults a new backend starts with.

use std::{collections::HashMap, sync::Arc};

use async_trait::async_trait;
use inlet_core::{
    Error, Result, WorkspaceId,
    backend::{BackendInfo, OpenFuture, Opened, Stores},
    index::{LogPage, LogScope, Position, Removed},
    record::{AccessItem, ListQuery, PutOutcome, Record, RecordKey, RecordWrite, Reread},
    record::{Scope, SourceEdit, TouchItem},
    source::Source,
    store::documents::{DocWrite, Document, Documents, KeyRange},
    store::{Records, Sources, Syncs, WriteLog},
    sync::{CloseOperation, OpenOperation, SyncEvent, SyncRun},
    time::Timestamp,
    webhook::{Attempt, ClaimRules, Deliveries, Delivery},
};
use inlet_store_memory::MemoryStore;
use parking_lot::Mutex;
use uuid::Uuid;

inventory::submit! {
    BackendInfo {
        name: "toy",
        schemes: &["toy:"],
        example: "toy:NAME",
        open,
    }
}

/// The stores opened so far, by name.
static OPEN: Mutex<Option<HashMap<String, Arc<ToyStore>>>> = Mutex::new(None);

fn open(url: &str) -> OpenFuture {
    let name = url.strip_prefix("toy:").unwrap_or_default().to_string();
    Box::pin(async move {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(Error::invalid(
                "a toy database URL is toy:NAME (letters, digits and '-')",
            ));
        }
        let store = OPEN
            .lock()
            .get_or_insert_with(HashMap::new)
            .entry(name.clone())
            .or_insert_with(|| Arc::new(ToyStore::default()))
            .clone();
        Ok(Opened {
            stores: Stores::of(store),
            description: format!("toy store '{name}' (in memory, shared in this process)"),
            default_index_dir: None,
            default_blobs: "memory:".into(),
        })
    })
}

/// A backend written against the required methods alone.
#[derive(Debug, Default)]
pub struct ToyStore(MemoryStore);

/// 3: documents, the primitive everything core keeps is built on.
#[async_trait]
impl Documents for ToyStore {
    async fn get_document(&self, collection: &str, key: &str) -> Result<Option<Document>> {
        self.0.get_document(collection, key).await
    }
    async fn scan_documents(
        &self,
        collection: &str,
        range: KeyRange<'_>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        self.0.scan_documents(collection, range, limit).await
    }
    async fn write_documents(&self, writes: &[DocWrite]) -> Result<bool> {
        self.0.write_documents(writes).await
    }
}

/// 4: sources (reading one is provided).
#[async_trait]
impl Sources for ToyStore {
    async fn create_source(&self, source: &Source) -> Result<()> {
        self.0.create_source(source).await
    }
    async fn update_source(&self, ws: WorkspaceId, id: Uuid, edit: SourceEdit) -> Result<Source> {
        self.0.update_source(ws, id, edit).await
    }
    async fn delete_source(&self, ws: WorkspaceId, id: Uuid) -> Result<()> {
        self.0.delete_source(ws, id).await
    }
    async fn list_sources(&self, ws: WorkspaceId) -> Result<Vec<Source>> {
        self.0.list_sources(ws).await
    }
}

/// 4: sync runs.
#[async_trait]
impl Syncs for ToyStore {
    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun> {
        self.0.open_sync(scope, op).await
    }
    async fn close_sync_guarded(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
        max_removal_percent: Option<f64>,
    ) -> Result<SyncRun> {
        self.0
            .close_sync_guarded(scope, sync_number, op, max_removal_percent)
            .await
    }
    async fn get_sync(&self, scope: Scope, sync_number: i64) -> Result<SyncRun> {
        self.0.get_sync(scope, sync_number).await
    }
    async fn list_syncs(&self, scope: Scope) -> Result<Vec<SyncRun>> {
        self.0.list_syncs(scope).await
    }
}

/// 8: records (one touch, batch reads and folder checks are provided).
#[async_trait]
impl Records for ToyStore {
    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome> {
        self.0.put_record(write).await
    }
    async fn get_record(&self, key: &RecordKey) -> Result<Record> {
        self.0.get_record(key).await
    }
    async fn delete_record(&self, key: &RecordKey) -> Result<()> {
        self.0.delete_record(key).await
    }
    async fn touch_records(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        event: SyncEvent,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        self.0.touch_records(scope, sync_number, event, items).await
    }
    async fn set_access(&self, scope: Scope, items: &[AccessItem]) -> Result<Vec<Result<()>>> {
        self.0.set_access(scope, items).await
    }
    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>> {
        self.0.list_records(scope, query).await
    }
    async fn store_reread(&self, reread: Reread) -> Result<Option<Record>> {
        self.0.store_reread(reread).await
    }
    async fn tag_counts(&self, source_id: Uuid, tag: &str) -> Result<HashMap<String, u64>> {
        self.0.tag_counts(source_id, tag).await
    }
}

/// 6: the write log search and the change feed follow.
#[async_trait]
impl WriteLog for ToyStore {
    async fn log_head(&self) -> Result<Position> {
        self.0.log_head().await
    }
    async fn read_log(
        &self,
        scope: Option<&LogScope>,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        self.0.read_log(scope, after, limit).await
    }
    async fn closed_records(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>> {
        self.0
            .closed_records(object_type_id, from_sync, to_sync, after, limit)
            .await
    }
    async fn scan_records(
        &self,
        scope: Option<&LogScope>,
        upto: Option<Position>,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        self.0.scan_records(scope, upto, after, limit).await
    }
    async fn log_floor(&self) -> Result<Position> {
        self.0.log_floor().await
    }
    async fn purge_log(&self, before: Timestamp) -> Result<Position> {
        self.0.purge_log(before).await
    }
}

/// 6: the webhook delivery queue.
#[async_trait]
impl Deliveries for ToyStore {
    async fn queue_deliveries(&self, deliveries: &[Delivery]) -> Result<()> {
        self.0.queue_deliveries(deliveries).await
    }
    async fn claim_due(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<Delivery>> {
        self.0.claim_due(now, lease_until, rules).await
    }
    async fn purge_deliveries(&self, before: Timestamp) -> Result<u64> {
        self.0.purge_deliveries(before).await
    }
    async fn record_attempt(
        &self,
        delivery_id: Uuid,
        attempt: &Attempt,
        next: Option<Timestamp>,
    ) -> Result<()> {
        self.0.record_attempt(delivery_id, attempt, next).await
    }
    async fn list_deliveries(
        &self,
        ws: WorkspaceId,
        webhook_id: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        self.0.list_deliveries(ws, webhook_id, limit).await
    }
    async fn delete_deliveries(&self, webhook_id: Uuid) -> Result<()> {
        self.0.delete_deliveries(webhook_id).await
    }
}
