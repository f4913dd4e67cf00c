//! Background jobs: the store writes them compare-and-set and lists them newest first; a
//! re-extraction job is held by one worker at a time, resumes after the last record it saved
//! when another worker takes it over, and stops when cancelled.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use uuid::Uuid;

use super::{new_source, write};
use crate::{
    RecordStore,
    blob::{self, BlobKey, Original},
    ingest::reextract::{self, Job, JobState, Origin, Selection},
    record::Extraction,
    store::jobs::{JobQuery, JobRow},
    time,
};

fn row(workspace_id: Option<Uuid>, finished: bool, n: i64) -> JobRow {
    JobRow {
        id: Uuid::new_v4(),
        kind: "test".into(),
        workspace_id,
        created_at: time::now() + chrono::TimeDelta::milliseconds(n),
        finished,
        body: serde_json::json!({"n": n}),
        revision: 0,
    }
}

/// A job is written only over the revision it was read at; listing filters by kind, workspace
/// and openness, newest first.
pub async fn jobs_are_written_compare_and_set(store: &dyn RecordStore) {
    let ws = Uuid::new_v4();
    let a = row(Some(ws), false, 1);
    assert!(store.put_job(&a, 0).await.unwrap());
    assert!(!store.put_job(&a, 0).await.unwrap(), "a second create");
    let read = store.get_job(a.id).await.unwrap().expect("stored");
    assert_eq!(read.revision, 1);
    assert_eq!(read.body, a.body);
    assert_eq!(read.workspace_id, Some(ws));
    let mut changed = read.clone();
    changed.body = serde_json::json!({"n": 10});
    changed.finished = true;
    assert!(store.put_job(&changed, 1).await.unwrap());
    assert!(!store.put_job(&changed, 1).await.unwrap(), "a stale write");
    let read = store.get_job(a.id).await.unwrap().unwrap();
    assert_eq!((read.revision, read.finished), (2, true));
    assert_eq!(read.body, serde_json::json!({"n": 10}));
    assert_eq!(store.get_job(Uuid::new_v4()).await.unwrap(), None);

    let b = row(Some(ws), false, 2);
    let c = row(None, false, 3);
    let other_kind = JobRow {
        kind: "other".into(),
        ..row(Some(ws), false, 4)
    };
    for r in [&b, &c, &other_kind] {
        assert!(store.put_job(r, 0).await.unwrap());
    }
    let ids = |rows: Vec<JobRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let query = |workspace_id, open_only, limit| JobQuery {
        kind: "test".into(),
        workspace_id,
        open_only,
        limit,
    };
    assert_eq!(
        ids(store.list_jobs(&query(Some(ws), false, 10)).await.unwrap()),
        [b.id, a.id]
    );
    assert_eq!(
        ids(store.list_jobs(&query(Some(ws), true, 10)).await.unwrap()),
        [b.id]
    );
    assert_eq!(
        ids(store.list_jobs(&query(None, false, 10)).await.unwrap()),
        [c.id, b.id, a.id]
    );
    assert_eq!(
        ids(store.list_jobs(&query(None, false, 1)).await.unwrap()),
        [c.id]
    );
    // Purging removes finished jobs asked for before the time given, of the kind given.
    let later = time::now() + chrono::TimeDelta::seconds(10);
    assert_eq!(store.purge_jobs("other", later).await.unwrap(), 0);
    assert_eq!(store.purge_jobs("test", later).await.unwrap(), 1);
    assert_eq!(store.get_job(a.id).await.unwrap(), None);
    assert!(store.get_job(b.id).await.unwrap().is_some());
}

/// A re-extraction job is held by one worker; a worker whose lease ended loses it to another,
/// which resumes after the last record saved (reading none of the finished ones again); a
/// cancel stops the worker after the record it is reading.
pub async fn reextraction_jobs_resume_and_can_be_cancelled(store: &dyn RecordStore) {
    let blobs = blob::open("memory:").await.unwrap();
    let (_, scope) = new_source(store).await;
    let ws = scope.workspace_id;
    let n = 6;
    for i in 0..n {
        let bytes = format!("file {i}").into_bytes();
        let original = Original::of(&bytes);
        blobs
            .put(&BlobKey::new(ws, &original), bytes)
            .await
            .unwrap();
        let mut w = write(scope, &format!("r{i}"), None, None);
        w.original = Some(original);
        store.put_record(w).await.unwrap();
    }
    let enqueue = || {
        reextract::enqueue(
            store,
            Some(ws),
            Selection {
                all: true,
                ..Selection::default()
            },
            false,
            Origin::Api,
            BTreeMap::new(),
        )
    };
    let read = |text: String| {
        (
            text.clone(),
            Extraction {
                format: Some("text".into()),
                version: Some(2),
                chars: text.len() as u64,
                ..Extraction::default()
            },
        )
    };
    let current = |_: &str| Some(2);
    let state =
        |id| async move { Job::from_row(&store.get_job(id).await.unwrap().unwrap()).unwrap() };

    // Worker a holds the job with a lease that ends at once; b takes it over during a's third
    // record, so a stops there and b resumes after a's second.
    let queued = enqueue().await.unwrap();
    let (a_row, a_job) = reextract::claim(store, "a", Duration::ZERO, &current)
        .await
        .unwrap()
        .expect("claimed");
    assert_eq!(a_row.id, queued.id);
    assert_eq!(a_job.state, JobState::Running);
    let a_reads = Arc::new(Mutex::new(0));
    reextract::work(
        store,
        &*blobs,
        a_row,
        a_job,
        Duration::ZERO,
        &current,
        |_, bytes| {
            let a_reads = a_reads.clone();
            async move {
                let k = {
                    let mut k = a_reads.lock().unwrap();
                    *k += 1;
                    *k
                };
                if k == 3 {
                    let (row, _) = reextract::claim(store, "b", Duration::from_secs(60), &current)
                        .await
                        .unwrap()
                        .expect("b takes the job over");
                    assert_eq!(row.id, queued.id);
                }
                read(String::from_utf8(bytes).unwrap())
            }
        },
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(*a_reads.lock().unwrap(), 3);
    let held = state(queued.id).await;
    assert_eq!(held.state, JobState::Running);
    assert_eq!(held.progress.reread, 2, "a saved after each record it read");
    assert_eq!(held.lease.as_ref().unwrap().owner, "b");
    // b cannot be taken from while its lease holds.
    assert!(
        reextract::claim(store, "c", Duration::from_secs(60), &current)
            .await
            .unwrap()
            .is_none()
    );
    let b_row = store.get_job(queued.id).await.unwrap().unwrap();
    let b_job = Job::from_row(&b_row).unwrap();
    let b_reads = Arc::new(Mutex::new(0));
    reextract::work(
        store,
        &*blobs,
        b_row,
        b_job,
        Duration::from_secs(60),
        &current,
        |_, bytes| {
            let b_reads = b_reads.clone();
            async move {
                *b_reads.lock().unwrap() += 1;
                read(String::from_utf8(bytes).unwrap())
            }
        },
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(*b_reads.lock().unwrap(), n - 2, "b read none of a's again");
    let done = state(queued.id).await;
    assert_eq!(done.state, JobState::Done);
    assert_eq!(
        (done.progress.seen, done.progress.reread),
        (n as u64, n as u64)
    );
    assert!(done.lease.is_none() && done.finished_at.is_some());
    let record = store.get_record(&super::key(scope, "r1")).await.unwrap();
    assert_eq!(record.content, "file 1");
    assert_eq!(record.version, 1);

    // Cancelled during its second record, a job stops there.
    let queued = enqueue().await.unwrap();
    let (row, job) = reextract::claim(store, "a", Duration::from_secs(60), &current)
        .await
        .unwrap()
        .unwrap();
    let reads = Arc::new(Mutex::new(0));
    reextract::work(
        store,
        &*blobs,
        row,
        job,
        Duration::from_secs(60),
        &current,
        |_, bytes| {
            let reads = reads.clone();
            async move {
                let k = {
                    let mut k = reads.lock().unwrap();
                    *k += 1;
                    *k
                };
                if k == 2 {
                    let cancelled = reextract::cancel(store, ws, queued.id).await.unwrap();
                    assert!(cancelled.is_some_and(|r| r.finished));
                }
                read(String::from_utf8(bytes).unwrap())
            }
        },
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(*reads.lock().unwrap(), 2);
    let cancelled = state(queued.id).await;
    assert_eq!(cancelled.state, JobState::Cancelled);
    // A job asked for with newer extractors is left to a worker that has them.
    let newer = reextract::enqueue(
        store,
        Some(ws),
        Selection::default(),
        false,
        Origin::Upgrade,
        BTreeMap::from([("text".to_string(), 3)]),
    )
    .await
    .unwrap();
    assert!(
        reextract::claim(store, "old", Duration::ZERO, &current)
            .await
            .unwrap()
            .is_none()
    );
    let (row, _) = reextract::claim(store, "new", Duration::ZERO, &|_| Some(3))
        .await
        .unwrap()
        .expect("a worker with the newer extractors takes it");
    assert_eq!(row.id, newer.id);
    assert!(
        reextract::cancel(store, ws, newer.id)
            .await
            .unwrap()
            .is_some()
    );

    // Another workspace cannot cancel (or see) it; nothing is left to claim.
    assert!(
        reextract::cancel(store, Uuid::new_v4(), queued.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        reextract::claim(store, "a", Duration::ZERO, &current)
            .await
            .unwrap()
            .is_none()
    );
}
