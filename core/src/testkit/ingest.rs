//! The ingest workflow's rules ([`crate::ingest`]) as tables, on every store: what a write is
//! refused for before any content is built, when the checksum skip applies, and which
//! mass-removal guard a close runs under.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{
    Error, RecordStore,
    folder::Folder,
    ingest::{
        syncs,
        write::{self, Content, Request, Stored},
    },
    sync::{CloseOperation, OpenOperation},
};

use super::*;

/// One row of the write table: the request's parts and what `prepare` answers.
struct Row {
    what: &'static str,
    external_id: &'static str,
    sync_number: Option<i64>,
    checksum: Option<&'static str>,
    external_url: Option<&'static str>,
    tags: &'static [&'static str],
    expect: fn(&crate::Result<write::Write>) -> bool,
}

fn refused(kind: fn(&Error) -> bool) -> impl Fn(&crate::Result<write::Write>) -> bool {
    move |r| matches!(r, Err(e) if kind(e))
}

/// Every refusal [`write::prepare`] makes, and the writes it lets through.
pub async fn ingest_write_rules_table(store: &dyn RecordStore) {
    let ws = Uuid::new_v4();
    let (source, scope) = search_source(store, ws).await;
    let ot = source.object_types[0].clone();
    let folder = Folder {
        external_id: "f1".into(),
        name: "F1".into(),
        parent_external_id: None,
    };
    store
        .put_folder(ws, scope.source_id, "folder", &folder)
        .await
        .expect("folder");
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .expect("open");
    let ok: fn(&crate::Result<write::Write>) -> bool = |r| r.is_ok();
    let invalid: fn(&crate::Result<write::Write>) -> bool = |r| matches!(r, Err(Error::Invalid(_)));
    let not_found: fn(&crate::Result<write::Write>) -> bool =
        |r| matches!(r, Err(Error::NotFound(_)));
    let conflict: fn(&crate::Result<write::Write>) -> bool =
        |r| matches!(r, Err(Error::Conflict(_)));
    let rows = [
        Row {
            what: "a plain write",
            external_id: "a",
            sync_number: None,
            checksum: None,
            external_url: None,
            tags: &[],
            expect: ok,
        },
        Row {
            what: "everything given",
            external_id: "a",
            sync_number: Some(1),
            checksum: Some("c1"),
            external_url: Some("https://x.test/a"),
            tags: &["color:red", "folder:f1"],
            expect: ok,
        },
        Row {
            what: "an externalId with a control character",
            external_id: "a\u{1}b",
            sync_number: None,
            checksum: None,
            external_url: None,
            tags: &[],
            expect: invalid,
        },
        Row {
            what: "a checksum with a line break",
            external_id: "a",
            sync_number: None,
            checksum: Some("c\n1"),
            external_url: None,
            tags: &[],
            expect: invalid,
        },
        Row {
            what: "a url that is not http(s)",
            external_id: "a",
            sync_number: None,
            checksum: None,
            external_url: Some("ftp://x.test/a"),
            tags: &[],
            expect: invalid,
        },
        Row {
            what: "a tag the object type lacks",
            external_id: "a",
            sync_number: None,
            checksum: None,
            external_url: None,
            tags: &["size:3"],
            expect: |r| r.is_err(),
        },
        Row {
            what: "a folder that does not exist",
            external_id: "a",
            sync_number: None,
            checksum: None,
            external_url: None,
            tags: &["folder:nowhere"],
            expect: not_found,
        },
        Row {
            what: "a sync that is not the open one",
            external_id: "a",
            sync_number: Some(7),
            checksum: None,
            external_url: None,
            tags: &[],
            expect: conflict,
        },
    ];
    for row in rows {
        let headers: Vec<String> = row.tags.iter().map(|t| t.to_string()).collect();
        let request = Request {
            external_id: row.external_id,
            sync_number: row.sync_number,
            checksum: row.checksum,
            external_url: row.external_url,
            tag_headers: &headers,
            modified_by: "tester@example.test",
        };
        let answer = write::prepare(store, &source, &ot, scope, request).await;
        assert!((row.expect)(&answer), "{}: got {answer:?}", row.what);
    }

    // A source without trackStatus accepts no write at all.
    let mut untracked = source.clone();
    untracked.track_status = false;
    let request = Request {
        external_id: "a",
        sync_number: None,
        checksum: None,
        external_url: None,
        tag_headers: &[],
        modified_by: "tester@example.test",
    };
    let answer = write::prepare(store, &untracked, &ot, scope, request).await;
    assert!(
        refused(
            |e| matches!(e, Error::NotFound(m) if m.starts_with(write::NOT_TRACKED)
            && m.contains("PATCH /api/v1/sources/"))
        )(&answer),
        "untracked source: {answer:?}"
    );
}

/// (what, checksum, delete first, `Some(created)` for a write or `None` for a skip, the
/// version afterwards).
type SkipRow = (&'static str, Option<&'static str>, bool, Option<bool>, i64);

/// [`write::store`]: a new record is created, an equal checksum only touches (the content is
/// never built), another checksum or none writes a new version, a tombstone is revived.
pub async fn ingest_checksum_skip_table(store: &dyn RecordStore) {
    let (source, scope) = new_source(store).await;
    let ot = source.object_types[0].clone();
    let builds = AtomicUsize::new(0);
    let rows: [SkipRow; 6] = [
        ("new record", Some("c1"), false, Some(true), 1),
        ("same checksum", Some("c1"), false, None, 1),
        ("other checksum", Some("c2"), false, Some(false), 2),
        ("no checksum", None, false, Some(false), 3),
        ("checksum of a tombstone", Some("c3"), true, Some(false), 5),
        ("same checksum after revival", Some("c3"), false, None, 5),
    ];
    for (what, checksum, delete_first, expect, version) in rows {
        if delete_first {
            // Store the checksum, then remove the record: the same checksum must write again.
            let checked = prepared(store, &source, &ot, scope, checksum).await;
            write::store::<_, Error>(store, checked, content(&builds))
                .await
                .expect("write before delete");
            store
                .delete_record(&key(scope, "doc"))
                .await
                .expect("delete");
        }
        let before = builds.load(Ordering::SeqCst);
        let checked = prepared(store, &source, &ot, scope, checksum).await;
        let stored = write::store::<_, Error>(store, checked, content(&builds))
            .await
            .expect(what);
        let built = builds.load(Ordering::SeqCst) > before;
        match (expect, stored) {
            (None, Stored::Unchanged(record)) => {
                assert!(!built, "{what}: content built for a skip");
                assert_eq!(record.version, version, "{what}");
            }
            (Some(created), Stored::Written(outcome)) => {
                assert!(built, "{what}: no content built");
                assert_eq!(outcome.created, created, "{what}");
                assert!(!outcome.record.removed, "{what}: still removed");
                assert_eq!(outcome.record.version, version, "{what}");
            }
            (expect, stored) => panic!("{what}: expected {expect:?}, got {stored:?}"),
        }
    }
}

async fn prepared(
    store: &dyn RecordStore,
    source: &crate::source::Source,
    ot: &crate::source::ObjectType,
    scope: Scope,
    checksum: Option<&str>,
) -> write::Write {
    let request = Request {
        external_id: "doc",
        sync_number: None,
        checksum,
        external_url: None,
        tag_headers: &[],
        modified_by: "tester@example.test",
    };
    write::prepare(store, source, ot, scope, request)
        .await
        .expect("prepare")
}

/// The content of a write, counted in `builds` when (and only when) it is built.
async fn content(builds: &AtomicUsize) -> crate::Result<Content> {
    builds.fetch_add(1, Ordering::SeqCst);
    Ok(Content {
        title: "doc".into(),
        content: "text".into(),
        ..Content::default()
    })
}

/// [`syncs::close`]: the guard is the caller's allowance, else the object type's share, else
/// the service default; a refused COMPLETE close leaves the sync open.
pub async fn ingest_removal_guard_table(store: &dyn RecordStore) {
    let (source, scope) = new_source(store).await;
    let mut ot = source.object_types[0].clone();
    let rows = [
        (false, None, None, None),
        (false, None, Some(10.0), Some(10.0)),
        (false, Some(50.0), Some(10.0), Some(50.0)),
        (true, Some(50.0), Some(10.0), None),
        (true, None, Some(10.0), None),
    ];
    for (allow, own, default, expect) in rows {
        ot.complete_max_removal = own;
        assert_eq!(
            syncs::removal_guard(&ot, allow, default),
            expect,
            "allow {allow}, own {own:?}, default {default:?}"
        );
    }

    // Two records in sync 1; sync 2 touches neither: COMPLETE would remove 100 %.
    let ot = source.object_types[0].clone();
    syncs::open(store, scope, OpenOperation::StartInitial)
        .await
        .expect("open 1");
    for id in ["a", "b"] {
        store
            .put_record(write(scope, id, Some(1), Some("c")))
            .await
            .expect("put");
    }
    syncs::close(store, &ot, scope, 1, CloseOperation::Complete, false, None)
        .await
        .expect("close 1");
    syncs::open(store, scope, OpenOperation::Start)
        .await
        .expect("open 2");
    let refused = syncs::close(
        store,
        &ot,
        scope,
        2,
        CloseOperation::Complete,
        false,
        Some(50.0),
    )
    .await;
    assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
    let closed = syncs::close(
        store,
        &ot,
        scope,
        2,
        CloseOperation::Complete,
        true,
        Some(50.0),
    )
    .await
    .expect("allowed mass removal");
    assert_eq!(closed.counters.removed, 2);
}
