#![doc = include_str!("../README.md")]

use std::collections::HashMap;

use async_trait::async_trait;
use inlet_core::{
    Error, RecordStore, Result, TokenStore, WorkspaceId,
    record::{self, ObjectTypeRef, PutOutcome, Record, RecordKey, RecordWrite, Scope, Touch},
    source::Source,
    sync::{self, CloseOperation, OpenOperation, SyncEvent, SyncRun, SyncState},
    time,
    token::{ApiToken, User, Workspace},
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
    workspaces: Vec<Workspace>,
    users: Vec<User>,
    tokens: Vec<ApiToken>,
}

impl State {
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

    fn check_sync(&self, object_type_id: Uuid, given: Option<i64>) -> Result<()> {
        match given {
            Some(n) => sync::check_sync_number(self.open_sync_number(object_type_id), n),
            None => Ok(()),
        }
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
        st.sources.push(source.clone());
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

    async fn close_sync(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
    ) -> Result<SyncRun> {
        let mut st = self.state.lock();
        let state = sync::close(st.sync_run(scope, sync_number)?, op)?;
        let mut removed = 0;
        let mut kept = 0;
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
            } else {
                kept += 1;
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

    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome> {
        let mut st = self.state.lock();
        let scope = write.key.scope;
        let name = st.object_type_name(scope)?;
        st.check_sync(scope.object_type_id, write.sync_number)?;
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
        records.insert(write.key.external_id, record.clone());
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

    async fn touch_record(&self, key: &RecordKey, touch: Touch) -> Result<Record> {
        let mut st = self.state.lock();
        let scope = key.scope;
        let name = st.object_type_name(scope)?;
        st.check_sync(scope.object_type_id, touch.sync_number)?;
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
        let mut st = self.state.lock();
        st.object_type_name(key.scope)?;
        match st
            .records
            .get_mut(&key.scope.object_type_id)
            .and_then(|m| m.get_mut(&key.external_id))
        {
            Some(r) if !r.removed => {
                r.removed = true;
                Ok(())
            }
            _ => Err(Error::not_found(format!(
                "no current record with externalId '{}'",
                key.external_id
            ))),
        }
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
}
