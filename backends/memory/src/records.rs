//! Records: uploads, touches, reads, deletes and the listing.

use crate::{MemoryStore, removed};
use async_trait::async_trait;
use std::collections::HashMap;

use inlet_core::store::Records;
use inlet_core::{
    Error, Result,
    record::{
        self, AccessItem, ListQuery, ObjectTypeRef, PutOutcome, Record, RecordKey, RecordWrite,
        Scope, TouchItem,
    },
    sync::{self, SyncEvent},
    time::{self},
};
use uuid::Uuid;

#[async_trait]
impl Records for MemoryStore {
    async fn put_record(&self, mut write: RecordWrite) -> Result<PutOutcome> {
        inlet_core::record::check_write(&write)?;
        let mut st = self.state.lock();
        let scope = write.key.scope;
        let name = st.object_type_name(scope)?;
        write.sync_number = st.resolve_sync(scope.object_type_id, write.sync_number)?;
        let current = sync::current_number(st.latest_sync(scope.object_type_id));
        let now = time::now();
        let extraction_failed = write.extraction.failure.is_some() && write.content.is_empty();
        let floor = st.floor(scope.object_type_id);
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
                existing
                    .filter(|r| !removed(r, floor))
                    .map(|r| r.sync_number),
            ),
            removed: false,
            extraction: write.extraction,
            access: write
                .access
                .or_else(|| existing.and_then(|r| r.access.clone())),
            original: write.original,
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
        let floor = st.floor(key.scope.object_type_id);
        match st
            .records
            .get_mut(&key.scope.object_type_id)
            .and_then(|m| m.get_mut(&key.external_id))
        {
            Some(r) if !removed(r, floor) => {
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
        event: SyncEvent,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        let mut st = self.state.lock();
        st.object_type_name(scope)?;
        let sync_number = st.resolve_sync(scope.object_type_id, sync_number)?;
        let floor = st.floor(scope.object_type_id);
        let mut results = Vec::with_capacity(items.len());
        let mut touched = 0;
        for item in items {
            let record = st
                .records
                .get_mut(&scope.object_type_id)
                .and_then(|m| m.get_mut(&item.external_id))
                .filter(|r| !removed(r, floor));
            let outcome = record::check_touch(record.as_deref(), item.if_match.as_deref());
            if let (Ok(()), Some(r), Some(n)) = (&outcome, record, sync_number) {
                r.sync_number = n;
            }
            touched += usize::from(outcome.is_ok());
            results.push(outcome);
        }
        for _ in 0..touched {
            st.count(scope.object_type_id, sync_number, event);
        }
        Ok(results)
    }

    async fn set_access(&self, scope: Scope, items: &[AccessItem]) -> Result<Vec<Result<()>>> {
        let mut st = self.state.lock();
        st.object_type_name(scope)?;
        let floor = st.floor(scope.object_type_id);
        let mut results = Vec::with_capacity(items.len());
        for item in items {
            let record = st
                .records
                .get_mut(&scope.object_type_id)
                .and_then(|m| m.get_mut(&item.external_id))
                .filter(|r| !removed(r, floor));
            let Some(record) = record else {
                results.push(Err(Error::not_found(format!(
                    "no current record with externalId '{}'",
                    item.external_id
                ))));
                continue;
            };
            record.access = item.access.clone();
            let record = record.clone();
            st.log.record(&record);
            results.push(Ok(()));
        }
        Ok(results)
    }

    async fn store_reread(&self, reread: inlet_core::record::Reread) -> Result<Option<Record>> {
        let mut st = self.state.lock();
        let scope = reread.key.scope;
        let name = st.object_type_name(scope)?;
        let floor = st.floor(scope.object_type_id);
        let record = st
            .records
            .get_mut(&scope.object_type_id)
            .and_then(|m| m.get_mut(&reread.key.external_id))
            .filter(|r| {
                !removed(r, floor)
                    && r.version == reread.version
                    && r.original.as_ref().map(|o| o.sha256.as_str()) == Some(&reread.sha256)
            });
        let Some(record) = record else {
            return Ok(None);
        };
        record.content = reread.content;
        record.extraction = reread.extraction;
        let record = record.clone();
        st.log.record(&record);
        Ok(Some(st.view(&name, &record)))
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
            .filter(|r| query.include_removed || !st.gone(r))
            .filter(|r| query.modified_since.is_none_or(|t| r.modified_date >= t))
            .filter(|r| !query.with_access_list || r.access.is_some())
            .filter(|r| {
                query
                    .readable
                    .as_ref()
                    .is_none_or(|rd| rd.admits(r.access.as_deref()))
            })
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

    async fn tag_counts(&self, source_id: Uuid, tag: &str) -> Result<HashMap<String, u64>> {
        Ok(self.state.lock().tag_counts(source_id, tag))
    }
}
