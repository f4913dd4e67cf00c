//! Conformance cases of the many-record operations: metadata and touch batches, and the
//! paged listing, checked through [`crate::ingest`] so every store answers as the single calls.

use super::{assert_err, key, new_source, new_source_in, write};
use crate::{
    Error, RecordStore,
    access::Viewer::All,
    ingest::{self, TouchRequest},
    sync::{CloseOperation, OpenOperation},
};

fn request(external_id: &str, if_match: Option<&str>) -> TouchRequest {
    TouchRequest {
        external_id: external_id.into(),
        if_match: if_match.map(Into::into),
    }
}

/// A batch answers each item as its single call would, in the order given; only the items
/// that pass join the sync and are counted.
pub async fn batches_answer_each_item_in_order(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for id in ["a", "b", "c", "gone"] {
        store
            .put_record(write(scope, id, Some(1), Some(&format!("sum-{id}"))))
            .await
            .unwrap();
    }
    store.delete_record(&key(scope, "gone")).await.unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();

    let ids = ["c", "missing", "a", "bad\u{0}id", "gone", "a"].map(String::from);
    let meta = ingest::metadata_batch(store, scope, ids.to_vec(), &All)
        .await
        .unwrap();
    let got: Vec<(&str, Result<Option<&str>, String>)> = meta
        .iter()
        .map(|i| {
            (
                i.external_id.as_str(),
                match &i.outcome {
                    Ok(r) => Ok(r.visible_checksum()),
                    Err(e) => Err(format!("{e:?}").split('(').next().unwrap_or("").to_string()),
                },
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("c", Ok(Some("sum-c"))),
            ("missing", Err("NotFound".into())),
            ("a", Ok(Some("sum-a"))),
            ("bad\u{0}id", Err("Invalid".into())),
            ("gone", Ok(None)),
            ("a", Ok(Some("sum-a"))),
        ]
    );
    assert!(
        meta.iter()
            .filter_map(|i| i.outcome.as_ref().ok())
            .all(|r| r.content.is_empty()),
        "metadata batches do not read content"
    );

    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let touches = vec![
        request("a", Some("\"sum-a\"")),
        request("b", Some("other")),
        request("missing", None),
        request("gone", None),
        request("c", None),
        request("x\u{0}", None),
    ];
    let out = ingest::touch_batch(store, scope, Some(2), touches)
        .await
        .unwrap();
    let kinds: Vec<&str> = out
        .iter()
        .map(|i| match &i.outcome {
            Ok(()) => "ok",
            Err(Error::NotFound(_)) => "404",
            Err(Error::PreconditionFailed(_)) => "412",
            Err(Error::Invalid(_)) => "400",
            Err(_) => "other",
        })
        .collect();
    assert_eq!(kinds, ["ok", "412", "404", "404", "ok", "400"]);
    assert_eq!(
        out.iter()
            .map(|i| i.external_id.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "missing", "gone", "c", "x\u{0}"]
    );
    assert_eq!(store.get_sync(scope, 2).await.unwrap().counters.touched, 2);
    let closed = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    // b failed its If-Match, so it did not join sync 2 and the close removed it.
    assert_eq!(closed.counters.removed, 1);
    assert!(store.get_record(&key(scope, "b")).await.unwrap().removed);
    assert_eq!(
        store
            .get_record(&key(scope, "a"))
            .await
            .unwrap()
            .sync_number,
        2
    );
}

/// The sync rules apply to a whole batch: a batch naming a sync that is not open changes
/// nothing; without a number a batch joins the open sync; an over-long batch is refused.
pub async fn batch_sync_rules_apply_to_the_whole_batch(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    assert_err(
        ingest::touch_batch(store, scope, Some(1), vec![request("a", None)]).await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict for a sync that is not open",
    );
    let open = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_err(
        ingest::touch_batch(
            store,
            scope,
            Some(open.sync_number + 1),
            vec![request("a", None)],
        )
        .await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict for another sync number",
    );
    let out = ingest::touch_batch(store, scope, None, vec![request("a", None)])
        .await
        .unwrap();
    assert!(out[0].outcome.is_ok());
    assert_eq!(
        store
            .get_record(&key(scope, "a"))
            .await
            .unwrap()
            .sync_number,
        open.sync_number,
        "a touch without a number joins the open sync"
    );
    let too_many = (0..=ingest::MAX_BATCH)
        .map(|i| request(&i.to_string(), None))
        .collect();
    assert_err(
        ingest::touch_batch(store, scope, None, too_many).await,
        |e| matches!(e, Error::Invalid(m) if m.contains("1000")),
        "Invalid naming the limit",
    );
    // Another workspace's object type is not found, whatever the items.
    let (_, other) = new_source_in(store, uuid::Uuid::new_v4()).await;
    let foreign = crate::record::Scope {
        workspace_id: other.workspace_id,
        ..scope
    };
    assert_err(
        ingest::touch_batch(store, foreign, None, vec![request("a", None)]).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound for another workspace",
    );
    assert_err(
        ingest::list(store, foreign, None, None, false, None, &All).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound for another workspace",
    );
}

/// The listing walks every record once in externalId order, with or without tombstones and
/// from a modification time, and refuses a cursor it did not hand out.
pub async fn listing_pages_in_a_stable_order(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let ids = ["b", "a/1", "é", "a", "Z", "c", "a/2"];
    for id in ids {
        store
            .put_record(write(scope, id, None, Some("x")))
            .await
            .unwrap();
    }
    store.delete_record(&key(scope, "c")).await.unwrap();
    let mut expected: Vec<&str> = ids.to_vec();
    expected.sort_unstable();

    let walk = |include_removed: bool, limit: u64| async move {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = ingest::list(
                store,
                scope,
                cursor.as_deref(),
                Some(limit),
                include_removed,
                None,
                &All,
            )
            .await
            .unwrap();
            assert!(page.records.len() <= limit as usize);
            seen.extend(
                page.records
                    .iter()
                    .map(|r| (r.external_id.clone(), r.removed)),
            );
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        seen
    };
    let all = walk(true, 2).await;
    assert_eq!(
        all.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(
        all.iter().filter(|(_, removed)| *removed).count(),
        1,
        "the deleted record is listed as removed"
    );
    let live = walk(false, 3).await;
    assert_eq!(live.len(), expected.len() - 1);
    assert!(live.iter().all(|(id, removed)| id != "c" && !removed));
    let one_page = ingest::list(store, scope, None, Some(1000), true, None, &All)
        .await
        .unwrap();
    assert_eq!(one_page.records.len(), expected.len());
    assert!(one_page.next_cursor.is_none(), "no cursor on the last page");

    std::thread::sleep(std::time::Duration::from_millis(5));
    let since = crate::time::now();
    std::thread::sleep(std::time::Duration::from_millis(5));
    store
        .put_record(write(scope, "a", None, Some("y")))
        .await
        .unwrap();
    let recent = ingest::list(store, scope, None, None, false, Some(since), &All)
        .await
        .unwrap();
    assert_eq!(
        recent
            .records
            .iter()
            .map(|r| r.external_id.as_str())
            .collect::<Vec<_>>(),
        ["a"]
    );
    for bad in ["nope", "r1.zz"] {
        assert_err(
            ingest::list(store, scope, Some(bad), None, false, None, &All).await,
            |e| matches!(e, Error::Invalid(_)),
            "Invalid cursor",
        );
    }
    assert_err(
        ingest::list(store, scope, None, Some(1001), false, None, &All).await,
        |e| matches!(e, Error::Invalid(m) if m.contains("1000")),
        "Invalid limit",
    );
}
