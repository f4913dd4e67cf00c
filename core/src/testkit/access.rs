//! Access lists and groups: stored with uploads, changed alone, logged, kept by uploads without
//! one, and groups mirrored, listed and expanded.

use uuid::Uuid;

use crate::{
    Error, RecordStore,
    access::{self, Grantee, Group, Member, Viewer},
    index::Change,
    record::AccessItem,
};

use super::*;

fn users(names: &[&str]) -> Vec<Grantee> {
    names
        .iter()
        .map(|n| Grantee::User(format!("{n}@x.test")))
        .collect()
}

/// Access lists: an upload sets one, an upload without one keeps it, a change alone replaces
/// it (each in the write log, version unchanged), `None` returns to the default, and a missing
/// or removed record answers NotFound in its own item.
pub async fn access_lists_roundtrip_and_are_logged(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let mut w = write(scope, "a", None, Some("c1"));
    w.access = Some(users(&["ann"]));
    let stored = store.put_record(w).await.unwrap().record;
    assert_eq!(stored.access, Some(users(&["ann"])));
    store
        .put_record(write(scope, "a", None, Some("c2")))
        .await
        .unwrap();
    let a = store.get_record(&key(scope, "a")).await.unwrap();
    assert_eq!(
        a.access,
        Some(users(&["ann"])),
        "an upload without a list keeps it"
    );
    assert_eq!(a.version, 2);
    store
        .put_record(write(scope, "b", None, None))
        .await
        .unwrap();
    store.delete_record(&key(scope, "b")).await.unwrap();
    let head = store.log_head().await.unwrap();
    let items = [
        AccessItem {
            external_id: "a".into(),
            access: Some(vec![Grantee::Group("hr".into()), Grantee::Everyone]),
        },
        AccessItem {
            external_id: "missing".into(),
            access: None,
        },
        AccessItem {
            external_id: "b".into(),
            access: None,
        },
    ];
    let results = store.set_access(scope, &items).await.unwrap();
    assert!(results[0].is_ok());
    assert!(matches!(results[1], Err(Error::NotFound(_))), "{results:?}");
    assert!(
        matches!(results[2], Err(Error::NotFound(_))),
        "a tombstone: {results:?}"
    );
    let a = store.get_record(&key(scope, "a")).await.unwrap();
    assert_eq!(
        a.access,
        Some(vec![Grantee::Group("hr".into()), Grantee::Everyone])
    );
    assert_eq!(a.version, 2, "an access change is not a new version");
    let page = store.log_after(head, 100).await.unwrap();
    let logged: Vec<&str> = page
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Record { record, .. } => Some(record.external_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(logged, ["a"], "the change is in the write log");
    let logged_access = page.changes.iter().find_map(|c| match c {
        Change::Record { record, .. } => record.access.clone(),
        _ => None,
    });
    assert_eq!(logged_access, a.access);
    let reset = [AccessItem {
        external_id: "a".into(),
        access: None,
    }];
    assert!(store.set_access(scope, &reset).await.unwrap()[0].is_ok());
    assert_eq!(
        store.get_record(&key(scope, "a")).await.unwrap().access,
        None
    );
    // The checksum skip does not skip an access change.
    let (source, _) = (
        store
            .get_source(scope.workspace_id, scope.source_id)
            .await
            .unwrap(),
        (),
    );
    let ot = source.object_types[0].clone();
    let request = crate::ingest::write::Request {
        external_id: "a",
        sync_number: None,
        checksum: Some("c2"),
        external_url: None,
        tag_headers: &[],
        modified_by: "tester@example.test",
    };
    let mut same = crate::ingest::write::prepare(store, &source, &ot, scope, request)
        .await
        .unwrap();
    same.access = Some(users(&["dan"]));
    let built = crate::ingest::write::store(store, same, async {
        Err::<crate::ingest::write::Content, Error>(Error::invalid("not rebuilt"))
    })
    .await
    .unwrap();
    assert!(
        matches!(built, crate::ingest::write::Stored::Unchanged(ref r)
        if r.access == Some(users(&["dan"])))
    );
    let a = store.get_record(&key(scope, "a")).await.unwrap();
    assert_eq!(a.access, Some(users(&["dan"])));
    assert_eq!(a.version, 2);
    // Another workspace's object type is not found.
    let other = Scope {
        workspace_id: Uuid::new_v4(),
        ..scope
    };
    assert_err(
        store.set_access(other, &reset).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
}

async fn listed(
    store: &dyn RecordStore,
    scope: Scope,
    readable: Option<crate::access::Readable>,
    after: Option<&str>,
    limit: usize,
) -> Vec<String> {
    let query = crate::record::ListQuery {
        after: after.map(str::to_string),
        limit,
        readable,
        ..Default::default()
    };
    store
        .list_records(scope, &query)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.external_id)
        .collect()
}

/// A listing trimmed by the store ([`crate::record::ListQuery::readable`]): the records whose
/// list names one of the reader's grantees, and those without a list when the default is
/// theirs; paging as untrimmed. The reader's grantees come from their expanded terms, only
/// this source's groups among them.
pub async fn listings_keep_what_a_reader_may_read(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    for (id, list) in [
        ("a-hr", Some(vec![Grantee::Group("hr".into())])),
        ("b-all", Some(vec![Grantee::Everyone])),
        ("c-default", None),
        ("d-ann", Some(users(&["ann"]))),
        ("e-nobody", Some(vec![])),
        (
            "f-eng",
            Some(vec![
                Grantee::Group("eng".into()),
                Grantee::User("bob@x.test".into()),
            ]),
        ),
    ] {
        let mut w = write(scope, id, None, None);
        w.access = list;
        store.put_record(w).await.unwrap();
    }
    let everything = listed(store, scope, None, None, 100).await;
    assert_eq!(everything.len(), 6);
    // Ann, in hr, reading the default; hr of another source does not count.
    let ann = Viewer::Only(
        [
            access::user_term("ann@x.test"),
            access::EVERYONE_TERM.to_string(),
            access::group_term(scope.source_id, "hr"),
            access::group_term(Uuid::new_v4(), "eng"),
            access::default_term(scope.object_type_id),
        ]
        .into_iter()
        .collect(),
    );
    let readable = ann.readable_in(scope.source_id, scope.object_type_id);
    assert_eq!(
        listed(store, scope, readable.clone(), None, 100).await,
        ["a-hr", "b-all", "c-default", "d-ann"]
    );
    assert_eq!(
        listed(store, scope, readable.clone(), Some("b-all"), 1).await,
        ["c-default"]
    );
    let mut without_default = readable.unwrap();
    without_default.default = false;
    assert_eq!(
        listed(store, scope, Some(without_default), Some("a-hr"), 100).await,
        ["b-all", "d-ann"]
    );
    let nobody = crate::access::Readable::default();
    assert!(
        listed(store, scope, Some(nobody), None, 100)
            .await
            .is_empty()
    );
    assert_eq!(
        Viewer::All.readable_in(scope.source_id, scope.object_type_id),
        None
    );
}

/// Groups: created, replaced, listed in pages, found by member (users and nested groups,
/// cycles harmless), deleted, confined to their workspace, and gone with their source.
pub async fn groups_mirror_and_expand(store: &dyn RecordStore) {
    let ws = Uuid::new_v4();
    let (source, _) = new_source_in(store, ws).await;
    let s = source.id;
    let g = |id: &str, members: &[&str]| {
        Group::new(
            s,
            id,
            members.iter().map(|m| Member::parse(m).unwrap()).collect(),
        )
        .unwrap()
    };
    assert!(
        store
            .put_group(ws, &g("staff", &["group:hr", "user:bob@x.test"]))
            .await
            .unwrap()
    );
    assert!(
        store
            .put_group(ws, &g("hr", &["user:ann@x.test", "group:board"]))
            .await
            .unwrap()
    );
    assert!(
        store
            .put_group(ws, &g("board", &["group:staff"]))
            .await
            .unwrap(),
        "a cycle"
    );
    assert!(
        !store
            .put_group(
                ws,
                &g("hr", &["user:ann@x.test", "user:cy@x.test", "group:board"])
            )
            .await
            .unwrap()
    );
    let page = store.list_groups(ws, s, None, 2).await.unwrap();
    let ids: Vec<&str> = page.iter().map(|g| g.external_id.as_str()).collect();
    assert_eq!(ids, ["board", "hr"]);
    assert_eq!(page[1].members.len(), 3);
    let rest = store.list_groups(ws, s, Some("hr"), 2).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].external_id, "staff");
    let found = store
        .groups_containing(ws, &[access::user_term("cy@x.test")])
        .await
        .unwrap();
    assert_eq!(found, [access::group_term(s, "hr")]);
    let expand = |email: &'static str| async move {
        access::expand(email, &[], |terms| async move {
            store.groups_containing(ws, &terms).await
        })
        .await
        .unwrap()
    };
    let Viewer::Only(terms) = expand("cy@x.test").await else {
        panic!("a user's viewer lists terms")
    };
    for group in ["hr", "board", "staff"] {
        assert!(terms.contains(&access::group_term(s, group)), "{group}");
    }
    // Another workspace sees none of it.
    assert!(
        store
            .groups_containing(Uuid::new_v4(), &[access::user_term("cy@x.test")])
            .await
            .unwrap()
            .is_empty()
    );
    assert_err(
        store.put_group(Uuid::new_v4(), &g("x", &[])).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    // Cy leaves hr: the nested groups go with it.
    store
        .put_group(ws, &g("hr", &["user:ann@x.test", "group:board"]))
        .await
        .unwrap();
    let Viewer::Only(terms) = expand("cy@x.test").await else {
        panic!()
    };
    assert!(!terms.contains(&access::group_term(s, "staff")));
    assert!(store.delete_group(ws, s, "board").await.unwrap());
    assert!(!store.delete_group(ws, s, "board").await.unwrap());
    let Viewer::Only(terms) = expand("ann@x.test").await else {
        panic!()
    };
    assert!(
        terms.contains(&access::group_term(s, "staff")),
        "hr is in staff"
    );
    assert!(!terms.contains(&access::group_term(s, "board")), "deleted");
    // Ids that share a start, or hold the key separator, are told apart.
    store
        .put_group(ws, &g("team/eng", &["user:al@x.test"]))
        .await
        .unwrap();
    store
        .put_group(ws, &g("team", &["user:al@x.test.org", "group:team/eng/x"]))
        .await
        .unwrap();
    store
        .put_group(ws, &g("all", &["group:team/eng"]))
        .await
        .unwrap();
    let Viewer::Only(terms) = expand("al@x.test").await else {
        panic!()
    };
    assert!(terms.contains(&access::group_term(s, "team/eng")));
    assert!(terms.contains(&access::group_term(s, "all")), "nested");
    assert!(
        !terms.contains(&access::group_term(s, "team")),
        "another member"
    );
    crate::store::deletion::delete_source(store, ws, s)
        .await
        .unwrap();
    assert!(
        store
            .groups_containing(ws, &[access::user_term("ann@x.test")])
            .await
            .unwrap()
            .is_empty(),
        "a source's groups go with it"
    );
    assert!(
        store
            .groups_containing(ws, &[access::user_term("al@x.test")])
            .await
            .unwrap()
            .is_empty()
    );
}
