//! The document primitive ([`crate::store::Documents`]): conditional writes, all-or-nothing
//! batches, and scans in byte order of the keys.

use crate::{
    RecordStore,
    store::documents::{DocWrite, Document, Expect, KeyRange},
};

const C: &str = "conformance";

fn put(key: &str, value: i64, expect: Expect) -> DocWrite {
    DocWrite::put(C, key, &value, expect).unwrap()
}

async fn read(store: &dyn RecordStore, key: &str) -> Option<(i64, u64)> {
    store
        .get_document(C, key)
        .await
        .unwrap()
        .map(|d| (d.decode().unwrap(), d.revision))
}

fn keys(docs: &[Document]) -> Vec<&str> {
    docs.iter().map(|d| d.key.as_str()).collect()
}

/// A write applies only over what it expects; a batch applies whole or not at all; a key
/// written twice in a batch sees the first write; scans read keys in byte order, by prefix and
/// after a key, across collections only their own.
pub async fn documents_are_written_all_or_nothing(store: &dyn RecordStore) {
    let w = |writes: Vec<DocWrite>| async move { store.write_documents(&writes).await.unwrap() };
    assert!(w(vec![put("a", 1, Expect::Absent)]).await);
    assert!(
        !w(vec![put("a", 2, Expect::Absent)]).await,
        "a second create"
    );
    assert_eq!(read(store, "a").await, Some((1, 1)));
    assert!(w(vec![put("a", 2, Expect::Revision(1))]).await);
    assert!(
        !w(vec![put("a", 3, Expect::Revision(1))]).await,
        "a stale write"
    );
    assert!(w(vec![put("a", 3, Expect::Any)]).await);
    assert_eq!(read(store, "a").await, Some((3, 3)));

    // A failing write anywhere in a batch leaves every write of it undone.
    let batch = vec![
        put("b", 1, Expect::Absent),
        put("a", 4, Expect::Revision(3)),
        put("c", 1, Expect::Revision(7)),
    ];
    assert!(!w(batch).await);
    assert_eq!(read(store, "a").await, Some((3, 3)));
    assert_eq!(read(store, "b").await, None);
    // Within a batch a key's second write sees its first.
    let batch = vec![
        put("b", 1, Expect::Absent),
        put("b", 2, Expect::Revision(1)),
        DocWrite::delete(C, "a", Expect::Revision(3)),
    ];
    assert!(w(batch).await);
    assert_eq!(read(store, "b").await, Some((2, 2)));
    assert_eq!(read(store, "a").await, None);
    assert!(!w(vec![DocWrite::delete(C, "b", Expect::Revision(1))]).await);
    assert!(!w(vec![DocWrite::delete(C, "b", Expect::Absent)]).await);
    assert!(w(vec![DocWrite::delete(C, "gone", Expect::Any)]).await);
    // Unconditional deletes of several keys, some absent, apply together.
    let batch = ["d1", "d2", "d3"]
        .map(|k| put(k, 0, Expect::Absent))
        .to_vec();
    assert!(w(batch).await);
    let batch = ["d1", "missing", "d2", "d3"]
        .map(|k| DocWrite::delete(C, k, Expect::Any))
        .to_vec();
    assert!(w(batch).await);
    for k in ["d1", "d2", "d3"] {
        assert_eq!(read(store, k).await, None);
    }
    // Unconditional puts apply in order, a key put twice taking its second body.
    let batch = vec![
        put("p1", 1, Expect::Any),
        put("p2", 1, Expect::Any),
        put("p1", 2, Expect::Any),
        put("p3", 1, Expect::Any),
    ];
    assert!(w(batch).await);
    assert_eq!(read(store, "p1").await, Some((2, 2)));
    assert_eq!(read(store, "p3").await, Some((1, 1)));
    let batch = ["p1", "p2", "p3"]
        .map(|k| DocWrite::delete(C, k, Expect::Any))
        .to_vec();
    assert!(w(batch).await);
    // A check writes nothing and holds the batch to its expectation.
    let current = read(store, "b").await.map(|(_, r)| r).unwrap();
    let batch = vec![
        DocWrite::check(C, "b", Expect::Revision(current)),
        put("checked", 1, Expect::Absent),
    ];
    assert!(w(batch).await);
    assert_eq!(
        read(store, "b").await,
        Some((2, current)),
        "a check bumps nothing"
    );
    let batch = vec![
        DocWrite::check(C, "b", Expect::Revision(current + 1)),
        put("unchecked", 1, Expect::Absent),
    ];
    assert!(!w(batch).await);
    assert_eq!(read(store, "unchecked").await, None);
    assert!(w(vec![DocWrite::check(C, "nothing", Expect::Absent)]).await);
    assert!(w(vec![DocWrite::delete(C, "checked", Expect::Any)]).await);
    // Recreated after a delete, a document starts over at revision 1.
    assert!(w(vec![put("a", 5, Expect::Absent)]).await);
    assert_eq!(read(store, "a").await, Some((5, 1)));

    // Byte order: upper case before lower case, a prefix before its extensions, non-ASCII
    // after ASCII.
    let more = ["x/Z", "x/a", "x/ab", "x/b", "x/é", "xa", "y"];
    let batch = more.iter().map(|k| put(k, 0, Expect::Absent)).collect();
    assert!(w(batch).await);
    assert!(
        store
            .write_documents(&[DocWrite::put("conformance-other", "x/0", &0, Expect::Any).unwrap()])
            .await
            .unwrap()
    );
    let scan = |prefix: &'static str, after: Option<&'static str>, limit| async move {
        store
            .scan_documents(C, KeyRange { prefix, after }, limit)
            .await
            .unwrap()
    };
    assert_eq!(
        keys(&scan("", None, 100).await),
        ["a", "b", "x/Z", "x/a", "x/ab", "x/b", "x/é", "xa", "y"]
    );
    assert_eq!(
        keys(&scan("x/", None, 100).await),
        ["x/Z", "x/a", "x/ab", "x/b", "x/é"]
    );
    assert_eq!(keys(&scan("x/", Some("x/a"), 2).await), ["x/ab", "x/b"]);
    assert_eq!(keys(&scan("x/", Some("x/b"), 100).await), ["x/é"]);
    assert_eq!(
        keys(&scan("x/", Some("x/é"), 100).await),
        Vec::<&str>::new()
    );
    assert_eq!(keys(&scan("", Some("x/é"), 1).await), ["xa"]);
    assert_eq!(keys(&scan("z", None, 100).await), Vec::<&str>::new());

    // Several prefixes at once: each prefix's keys in byte order, a prefix with no keys
    // adding nothing, one ending in the last character still bounded.
    let last = format!("x/{}", char::MAX);
    assert!(
        w(vec![
            put(&last, 0, Expect::Absent),
            put(&format!("{last}z"), 0, Expect::Absent)
        ])
        .await
    );
    let prefixes = ["x/a".to_string(), "none/".into(), "y".into(), last.clone()];
    let found = store.keys_under(C, &prefixes).await.unwrap();
    let lastz = format!("{last}z");
    assert_eq!(found, ["x/a", "x/ab", "y", last.as_str(), lastz.as_str()]);
    // Prefixes in the order given; a document under two of them twice.
    let found = store
        .keys_under(C, &["x/b".to_string(), "x/a".into(), "x/".into()])
        .await
        .unwrap();
    assert_eq!(
        found,
        [
            "x/b",
            "x/a",
            "x/ab",
            "x/Z",
            "x/a",
            "x/ab",
            "x/b",
            "x/é",
            last.as_str(),
            lastz.as_str()
        ]
    );
    assert!(store.keys_under(C, &[]).await.unwrap().is_empty());
    // A prefix no key sorts after (the empty one) still reads its keys, with the others.
    let every = scan("", None, 100).await;
    let mut expected = keys(&every);
    expected.push("y");
    let found = store
        .keys_under(C, &[String::new(), "y".into()])
        .await
        .unwrap();
    assert_eq!(found, expected);
}
