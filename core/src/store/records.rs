//! Records: uploads, touches, reads, deletes and the paged listing.

use async_trait::async_trait;

use std::collections::HashMap;

use uuid::Uuid;

use crate::{
    Error, Result,
    record::{
        AccessItem, ListQuery, PutOutcome, Record, RecordKey, RecordWrite, Scope, Touch, TouchItem,
    },
    sync::SyncEvent,
};

/// Storage of records; every method is atomic.
#[async_trait]
pub trait Records: Send + Sync + 'static {
    /// Stores an upload: creates, replaces or revives the record, assigning the next version
    /// atomically. A given `sync_number` must be the open sync ([`Error::Conflict`] otherwise).
    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome>;
    /// Marks a live record as part of the sync per [`crate::record::check_touch`]; nothing
    /// else changes. The default touches a batch of one ([`Self::touch_records`]) and reads the
    /// record.
    async fn touch_record(&self, key: &RecordKey, touch: Touch) -> Result<Record> {
        crate::input::check_external_id(&key.external_id)?;
        let item = TouchItem {
            external_id: key.external_id.clone(),
            if_match: touch.if_match.clone(),
        };
        let mut results = self
            .touch_records(
                key.scope,
                touch.sync_number,
                touch.event,
                std::slice::from_ref(&item),
            )
            .await?;
        results.pop().unwrap_or(Ok(()))?;
        self.get_record(key).await
    }
    /// One record, tombstones included.
    async fn get_record(&self, key: &RecordKey) -> Result<Record>;
    /// Makes a live record a tombstone, as a sync removal does.
    async fn delete_record(&self, key: &RecordKey) -> Result<()>;
    /// The records of one object type with these externalIds, tombstones included, without
    /// their content (empty); an externalId without a record is left out. The default reads
    /// them one by one: a database store answers with one query.
    async fn get_records(&self, scope: Scope, external_ids: &[String]) -> Result<Vec<Record>> {
        let mut found = Vec::with_capacity(external_ids.len());
        for external_id in external_ids {
            let key = RecordKey {
                scope,
                external_id: external_id.clone(),
            };
            match self.get_record(&key).await {
                Ok(mut r) => {
                    r.content.clear();
                    found.push(r);
                }
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }
    /// Touches several records of one object type, each counted in the sync as `event` (a
    /// touch, or a checksum-equal upload): the sync rules apply to the whole batch (an error of
    /// the call), [`crate::record::check_touch`] to each item (its own result, in the order
    /// given). A store applies the batch in one transaction.
    async fn touch_records(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        event: SyncEvent,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>>;
    /// Replaces the access lists of live records of one object type, each in the write log
    /// as a change of the record (its version, checksum and sync membership stay); one result
    /// per item in the order given: [`Error::NotFound`] for an externalId without a live
    /// record. A store applies the batch in one transaction.
    async fn set_access(&self, scope: Scope, items: &[AccessItem]) -> Result<Vec<Result<()>>>;
    /// A page of an object type's records in externalId byte order, without their content
    /// (empty).
    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>>;
    /// Stores a record's text read again from its original ([`crate::record::Reread`]), as a
    /// change of the record in the write log; `None` (nothing written) when the record is gone,
    /// removed, at another version or names another original.
    async fn store_reread(&self, reread: crate::record::Reread) -> Result<Option<Record>>;
    /// How many live records of the source carry each value of `tag` (a folder's own count,
    /// not rolled up: [`super::Folders::list_folders`]).
    async fn tag_counts(&self, source_id: Uuid, tag: &str) -> Result<HashMap<String, u64>>;
}
