//! The write log: every write replayed in position order.

use uuid::Uuid;

use crate::{
    RecordStore,
    sync::{CloseOperation, OpenOperation},
};

use super::*;

/// An index that keeps its documents in a map: what a follower of the write log has built.
#[derive(Default)]
pub struct ModelIndex {
    docs: std::sync::Mutex<(
        Option<crate::index::Position>,
        std::collections::HashMap<Uuid, crate::index::IndexDoc>,
    )>,
}

impl ModelIndex {
    /// ExternalIds of the documents of `source_id`, sorted.
    pub fn external_ids(&self, source_id: Uuid) -> Vec<String> {
        let mut ids: Vec<String> = self
            .docs
            .lock()
            .unwrap()
            .1
            .values()
            .filter(|d| d.source_id == source_id)
            .map(|d| d.external_id.clone())
            .collect();
        ids.sort();
        ids
    }
}

impl crate::index::SearchIndex for ModelIndex {
    fn applied(&self) -> crate::Result<Option<crate::index::Position>> {
        Ok(self.docs.lock().unwrap().0)
    }
    fn apply(&self, batch: crate::index::IndexBatch) -> crate::Result<()> {
        let mut docs = self.docs.lock().unwrap();
        for id in &batch.deletes {
            docs.1.remove(id);
        }
        docs.1
            .retain(|_, d| !batch.deleted_sources.contains(&d.source_id));
        for d in batch.upserts {
            docs.1.insert(d.record_id, d);
        }
        docs.0 = batch.position;
        Ok(())
    }
    fn clear(&self) -> crate::Result<()> {
        *self.docs.lock().unwrap() = Default::default();
        Ok(())
    }
    fn search(&self, _: &crate::index::IndexQuery) -> crate::Result<crate::index::Hits> {
        Ok(crate::index::Hits::default())
    }
    fn size_bytes(&self) -> u64 {
        0
    }
}

/// The write log (DESIGN 7): a follower that applies it page by page ends with exactly the
/// store's live records — after uploads, re-uploads, deletes, revivals, a COMPLETE close and a
/// source deletion — and a rebuild from a scan plus the log agrees with it.
pub async fn write_log_replays_every_write(store: &dyn RecordStore) {
    use crate::index::{SearchIndex, catch_up, rebuild};
    let followed = ModelIndex::default();
    rebuild(store, &followed, &mut |_| {}).await.unwrap();
    let scope = in_a_second_sync(store, &["keep", "touch", "drop", "gone"], "c").await;
    let source = scope.source_id;
    store
        .put_record(write(scope, "keep", Some(2), Some("c2")))
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "touch"), touch(Some(2), None))
        .await
        .unwrap();
    store
        .put_record(write(scope, "gone", Some(2), Some("c2")))
        .await
        .unwrap();
    store.delete_record(&key(scope, "gone")).await.unwrap();
    catch_up(store, &followed).await.unwrap();
    assert_eq!(followed.external_ids(source), ["drop", "keep", "touch"]);
    let head = store.log_head().await.unwrap();
    store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    // A COMPLETE is one entry, however many records it removes: it raises the object type's
    // floor to its sync, and the records below it are read from the store.
    let page = store.read_log(None, head, 10).await.unwrap();
    let [
        crate::index::Change::Closed {
            object_type_id,
            from_sync,
            to_sync: 2,
            ..
        },
    ] = page.changes[..]
    else {
        panic!("a COMPLETE close logs one Closed entry: {:?}", page.changes);
    };
    assert_eq!(object_type_id, scope.object_type_id);
    let removed = store
        .closed_records(object_type_id, from_sync, 2, None, 10)
        .await
        .unwrap();
    let removed: Vec<&str> = removed.iter().map(|r| r.external_id.as_str()).collect();
    assert_eq!(removed, ["drop"]);
    let progress = catch_up(store, &followed).await.unwrap();
    assert_eq!(progress.position, store.log_head().await.unwrap());
    assert_eq!(followed.external_ids(source), ["keep", "touch"]);
    // A revival after the close comes back; a second follower rebuilt now agrees.
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    store
        .put_record(write(scope, "drop", Some(3), Some("c3")))
        .await
        .unwrap();
    catch_up(store, &followed).await.unwrap();
    assert_eq!(followed.external_ids(source), ["drop", "keep", "touch"]);
    let rebuilt = ModelIndex::default();
    let scanned = rebuild(store, &rebuilt, &mut |_| {}).await.unwrap();
    assert!(scanned >= 3);
    assert_eq!(rebuilt.external_ids(source), ["drop", "keep", "touch"]);
    let doc = rebuilt
        .docs
        .lock()
        .unwrap()
        .1
        .values()
        .find(|d| d.source_id == source && d.external_id == "drop")
        .cloned()
        .unwrap();
    assert_eq!(doc.content, "content of drop");
    assert_eq!(doc.workspace_id, scope.workspace_id);
    // Deleting the source empties it in both.
    store
        .close_sync(scope, 3, CloseOperation::Fail)
        .await
        .unwrap();
    store
        .delete_source(scope.workspace_id, source)
        .await
        .unwrap();
    catch_up(store, &followed).await.unwrap();
    catch_up(store, &rebuilt).await.unwrap();
    assert!(followed.external_ids(source).is_empty());
    assert!(rebuilt.external_ids(source).is_empty());
    assert!(rebuilt.applied().unwrap().is_some());
}

/// A backlog of more than a page is applied in fewer commits than pages (pages are gathered
/// up to [`crate::index::COMMIT_CHANGES`] entries), and the follower ends at the log's head
/// with every live record, records deleted after their page was written included.
pub async fn a_backlog_is_applied_in_commits_of_several_pages(store: &dyn RecordStore) {
    use crate::index::{BATCH, SearchIndex, catch_up, rebuild};
    let followed = ModelIndex::default();
    rebuild(store, &followed, &mut |_| {}).await.unwrap();
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let written = 2 * BATCH + BATCH / 2;
    for i in 0..written {
        store
            .put_record(write(scope, &format!("r{i:04}"), Some(1), None))
            .await
            .unwrap();
    }
    for i in 0..10 {
        store
            .delete_record(&key(scope, &format!("r{i:04}")))
            .await
            .unwrap();
    }
    let progress = catch_up(store, &followed).await.unwrap();
    assert_eq!(progress.position, store.log_head().await.unwrap());
    assert_eq!(followed.applied().unwrap(), Some(progress.position));
    assert!(
        (1..3).contains(&progress.commits),
        "{} commits for 3 pages",
        progress.commits
    );
    let ids = followed.external_ids(scope.source_id);
    assert_eq!(ids.len(), written - 10);
    assert_eq!(ids[0], "r0010");
}

/// Log pages: positions grow, a record appears once (at its last write, with its state now),
/// and reading one entry at a time sees the same entries as reading them all at once.
pub async fn write_log_pages_in_position_order(store: &dyn RecordStore) {
    use crate::index::Change;
    let before = store.log_head().await.unwrap();
    let (_, scope) = new_source(store).await;
    for id in ["a", "b", "c"] {
        store
            .put_record(write(scope, id, None, None))
            .await
            .unwrap();
    }
    store
        .put_record(write(scope, "a", None, Some("v2")))
        .await
        .unwrap();
    let head = store.log_head().await.unwrap();
    assert!(head >= before + 4, "every write takes a position");
    let all = store.log_after(before, 10_000).await.unwrap();
    assert!(all.upto >= head);
    let ours: Vec<(u64, String, i64)> = all
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Record {
                position, record, ..
            } if record.source_id == scope.source_id => {
                Some((*position, record.external_id.clone(), record.version))
            }
            _ => None,
        })
        .collect();
    let names: Vec<&str> = ours.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "c", "a"], "compacted: a at its last write");
    assert_eq!(ours[2].2, 2, "the entry carries the record as it is now");
    let positions: Vec<u64> = all.changes.iter().map(Change::position).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    let mut one_by_one = Vec::new();
    let mut at = before;
    while at < all.upto {
        let page = store.log_after(at, 1).await.unwrap();
        assert!(page.changes.len() <= 1);
        assert!(page.upto > at, "a page always moves on");
        one_by_one.extend(
            page.changes
                .iter()
                .map(Change::position)
                .filter(|p| *p <= all.upto),
        );
        at = page.upto;
    }
    // Writes of other tests may land meanwhile; ours are in both readings.
    for (p, _, _) in &ours {
        assert!(one_by_one.contains(p));
    }
    assert!(store.log_after(head.max(all.upto), 10).await.unwrap().upto >= head);
}
