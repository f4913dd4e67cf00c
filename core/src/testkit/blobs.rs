//! Blob stores and the sweep of originals: a blob store keeps whole blobs per workspace, reads
//! ranges, lists and deletes; a record store names the originals of live records, so the sweep
//! removes a blob only once no live record names it and its grace has passed.

use std::time::Duration;

use uuid::Uuid;

use super::{key, new_source, write};
use crate::{
    RecordStore,
    blob::{self, BlobKey, BlobStore, Original, Sweeper},
    sync::{CloseOperation, OpenOperation},
    time,
};

/// Put, get (whole, a range, clamped, absent), rewrite, list, delete on any blob store. Leaves
/// two blobs behind.
pub async fn blob_store_contract(store: &dyn BlobStore) {
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let hello = Original::of(b"hello world");
    let ka = BlobKey::new(a, &hello);
    let kb = BlobKey::new(b, &hello);
    let other = BlobKey::new(a, &Original::of(b"other"));
    store.check().await.unwrap();
    assert_eq!(store.get(&ka, None).await.unwrap(), None);
    store.put(&ka, b"hello world".to_vec()).await.unwrap();
    store.put(&kb, b"hello world".to_vec()).await.unwrap();
    store.put(&other, b"other".to_vec()).await.unwrap();
    // Writing the same content again is harmless.
    store.put(&ka, b"hello world".to_vec()).await.unwrap();
    assert_eq!(
        store.get(&ka, None).await.unwrap().as_deref(),
        Some(&b"hello world"[..])
    );
    assert_eq!(
        store.get(&ka, Some(6..11)).await.unwrap().as_deref(),
        Some(&b"world"[..])
    );
    assert_eq!(
        store.get(&ka, Some(0..1)).await.unwrap().as_deref(),
        Some(&b"h"[..])
    );
    let mut listed: Vec<(BlobKey, u64)> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.key, m.size))
        .collect();
    listed.sort();
    let mut expected = vec![(ka.clone(), 11), (kb.clone(), 11), (other.clone(), 5)];
    expected.sort();
    assert_eq!(listed, expected);
    store.delete(&other).await.unwrap();
    store.delete(&other).await.unwrap();
    assert_eq!(store.get(&other, None).await.unwrap(), None);
    assert_eq!(store.list().await.unwrap().len(), 2);
}

/// Live records name their originals; a replaced, deleted or COMPLETE-removed record's original
/// is swept after its grace (never before), one content shared by two records stays while
/// either lives, and another workspace's records never keep a blob alive.
pub async fn originals_are_swept_once_nothing_names_them(store: &dyn RecordStore) {
    let blobs = blob::open("memory:").await.unwrap();
    let (_, scope) = new_source(store).await;
    let ws = scope.workspace_id;
    let (_, elsewhere) = new_source(store).await;
    let put = |external_id: &'static str, bytes: &'static [u8], sync: Option<i64>| {
        let blobs = blobs.clone();
        async move {
            let original = Original::of(bytes);
            blobs
                .put(&BlobKey::new(ws, &original), bytes.to_vec())
                .await
                .unwrap();
            let mut w = write(scope, external_id, sync, None);
            w.original = Some(original);
            store.put_record(w).await.unwrap().record
        }
    };
    let shared = put("a", b"shared", None).await;
    assert_eq!(shared.original, Some(Original::of(b"shared")));
    assert_eq!(
        store.get_record(&key(scope, "a")).await.unwrap().original,
        Some(Original::of(b"shared"))
    );
    put("b", b"shared", None).await;
    put("c", b"first", None).await;
    put("c", b"second", None).await;
    put("d", b"deleted", None).await;
    store.delete_record(&key(scope, "d")).await.unwrap();
    // A crash between a blob and its record: nothing names it.
    let orphan = Original::of(b"orphan");
    blobs
        .put(&BlobKey::new(ws, &orphan), b"orphan".to_vec())
        .await
        .unwrap();
    // Another workspace's record with the same content names its own copy only.
    let mut theirs = write(elsewhere, "x", None, None);
    theirs.original = Some(Original::of(b"first"));
    store.put_record(theirs).await.unwrap();

    let live = |bytes: &[&[u8]]| {
        let mut v: Vec<String> = bytes.iter().map(|b| Original::of(b).sha256).collect();
        v.sort();
        v
    };
    let all = [&b"shared"[..], b"first", b"second", b"deleted", b"orphan"];
    let asked: Vec<String> = all.iter().map(|b| Original::of(b).sha256).collect();
    let mut named = store.live_originals(ws, &asked).await.unwrap();
    named.sort();
    assert_eq!(named, live(&[b"shared", b"second"]));

    let mut sweeper = Sweeper::new(Duration::from_secs(3600));
    let now = time::now();
    let first = sweeper.sweep(&*blobs, store, now).await.unwrap();
    assert_eq!((first.blobs, first.waiting, first.removed), (5, 3, 0));
    // The store's clock may be finer than ours: a second more covers it.
    let hour = chrono::TimeDelta::hours(1) + chrono::TimeDelta::seconds(1);
    let later = sweeper.sweep(&*blobs, store, now + hour).await.unwrap();
    assert_eq!((later.blobs, later.removed), (5, 3), "{later:?}");
    let mut left: Vec<String> = blobs
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.key.sha256)
        .collect();
    left.sort();
    assert_eq!(left, live(&[b"shared", b"second"]));

    // A COMPLETE close removes b: the shared blob stays for a, then goes with a.
    let n = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap()
        .sync_number;
    store
        .touch_record(&key(scope, "a"), super::touch(Some(n), None))
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "c"), super::touch(Some(n), None))
        .await
        .unwrap();
    store
        .close_sync(scope, n, CloseOperation::Complete)
        .await
        .unwrap();
    let mut sweeper = Sweeper::new(Duration::ZERO);
    let now = time::now() + hour * 2;
    assert_eq!(sweeper.sweep(&*blobs, store, now).await.unwrap().removed, 0);
    store.delete_record(&key(scope, "a")).await.unwrap();
    assert_eq!(sweeper.sweep(&*blobs, store, now).await.unwrap().removed, 1);
    assert_eq!(blobs.list().await.unwrap().len(), 1);
}

/// A reading stored over a record changes its text and extraction only, as a logged change;
/// it is refused (nothing written) once the record moved to another version, names another
/// original or was removed.
pub async fn rereads_never_overwrite_a_newer_upload(store: &dyn RecordStore) {
    use crate::record::{Extraction, Reread};
    let (_, scope) = new_source(store).await;
    let mut w = write(scope, "a", None, Some("c1"));
    w.original = Some(Original::of(b"v1"));
    let first = store.put_record(w).await.unwrap().record;
    let reread = |version: i64, sha: &[u8], text: &str| Reread {
        key: key(scope, "a"),
        version,
        sha256: Original::of(sha).sha256,
        content: text.into(),
        extraction: Extraction {
            format: Some("text".into()),
            version: Some(2),
            chars: text.len() as u64,
            ..Extraction::default()
        },
    };
    let head = store.log_head().await.unwrap();
    let stored = store
        .store_reread(reread(first.version, b"v1", "read again"))
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.content, "read again");
    assert_eq!(stored.extraction.version, Some(2));
    assert_eq!(
        (
            stored.version,
            stored.external_checksum.as_deref(),
            &stored.title
        ),
        (first.version, Some("c1"), &first.title)
    );
    assert!(
        store.log_head().await.unwrap() > head,
        "a reading is logged"
    );
    // Another version, another original, a removed record: nothing written.
    assert!(
        store
            .store_reread(reread(first.version + 1, b"v1", "x"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .store_reread(reread(first.version, b"other", "x"))
            .await
            .unwrap()
            .is_none()
    );
    store.delete_record(&key(scope, "a")).await.unwrap();
    assert!(
        store
            .store_reread(reread(first.version, b"v1", "x"))
            .await
            .unwrap()
            .is_none()
    );
}
