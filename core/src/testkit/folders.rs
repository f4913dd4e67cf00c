//! Folders of HIERARCHICAL tags: the tree, moves, counts and deletion rules.

use uuid::Uuid;

use crate::{Error, RecordStore, folder::Folder, index::SearchIndex};

use super::*;

/// Folder trees: create, rename, move, cycles, counts, delete rules, workspace confinement.
pub async fn folders_tree_and_counts(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (source, scope) = search_source(store, ws).await;
    let f = |id: &str, parent: Option<&str>| Folder {
        external_id: id.into(),
        name: id.to_uppercase(),
        parent_external_id: parent.map(Into::into),
    };
    assert!(
        store
            .put_folder(ws, source.id, "folder", &f("root", None))
            .await
            .unwrap()
    );
    assert!(
        store
            .put_folder(ws, source.id, "folder", &f("sub", Some("root")))
            .await
            .unwrap()
    );
    assert!(
        store
            .put_folder(ws, source.id, "folder", &f("leaf", Some("sub")))
            .await
            .unwrap()
    );
    assert_err(
        store
            .put_folder(ws, source.id, "folder", &f("x", Some("missing")))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    assert_err(
        store
            .put_folder(ws, source.id, "folder", &f("root", Some("leaf")))
            .await,
        |e| matches!(e, Error::Invalid(_)),
        "Invalid (cycle)",
    );
    assert_err(
        store
            .put_folder(Uuid::new_v4(), source.id, "folder", &f("y", None))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (other workspace)",
    );
    // Rename and move: not a creation.
    let mut renamed = f("leaf", Some("root"));
    renamed.name = "Leaf renamed".into();
    assert!(
        !store
            .put_folder(ws, source.id, "folder", &renamed)
            .await
            .unwrap()
    );

    put_doc(store, scope, "d1", "one", &[("folder", text("leaf"))]).await;
    put_doc(store, scope, "d2", "two", &[("folder", text("sub"))]).await;
    put_doc(store, scope, "d3", "three", &[("folder", text("sub"))]).await;
    assert!(
        store
            .folder_exists(source.id, "folder", "leaf")
            .await
            .unwrap()
    );
    assert!(
        !store
            .folder_exists(source.id, "folder", "nope")
            .await
            .unwrap()
    );
    let listed = store.list_folders(ws, source.id, "folder").await.unwrap();
    let own: std::collections::HashMap<String, u64> = listed
        .iter()
        .map(|(f, n)| (f.external_id.clone(), *n))
        .collect();
    assert_eq!(own["leaf"], 1);
    assert_eq!(own["sub"], 2);
    assert_eq!(own["root"], 0);
    let leaf = listed
        .iter()
        .find(|(f, _)| f.external_id == "leaf")
        .unwrap();
    assert_eq!(leaf.0.name, "Leaf renamed");
    assert_eq!(leaf.0.parent_external_id.as_deref(), Some("root"));
    let folders: Vec<Folder> = listed.into_iter().map(|(f, _)| f).collect();
    // The names alone are the same folders.
    let mut names = store.folder_names(ws, source.id, "folder").await.unwrap();
    names.sort_by(|a, b| a.external_id.cmp(&b.external_id));
    let mut expected = folders.clone();
    expected.sort_by(|a, b| a.external_id.cmp(&b.external_id));
    assert_eq!(names, expected);
    let rolled = crate::folder::rolled_up_counts(&folders, &own);
    assert_eq!(rolled["root"], 3);

    assert_err(
        store.delete_folder(ws, source.id, "folder", "root").await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict (children)",
    );
    assert_err(
        store.delete_folder(ws, source.id, "folder", "leaf").await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict (records)",
    );
    store.delete_record(&key(scope, "d1")).await.unwrap();
    store
        .delete_folder(ws, source.id, "folder", "leaf")
        .await
        .unwrap();
    assert_err(
        store.delete_folder(ws, source.id, "folder", "leaf").await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    // Facet over folders counts records by folder externalId.
    let mut q = query(ws, "");
    q.facet_tags = vec!["folder".into()];
    assert_eq!(
        searched(store, index, &q).await.facets["folder"],
        vec![("sub".to_string(), 2)]
    );

    // Two moves racing to put each of two folders under the other: one of them loses.
    for id in ["a", "b"] {
        store
            .put_folder(ws, source.id, "folder", &f(id, None))
            .await
            .unwrap();
    }
    let (a, b) = (f("a", Some("b")), f("b", Some("a")));
    let (a_under_b, b_under_a) = futures_util::join!(
        store.put_folder(ws, source.id, "folder", &a),
        store.put_folder(ws, source.id, "folder", &b),
    );
    assert!(
        a_under_b.is_ok() != b_under_a.is_ok(),
        "{a_under_b:?} {b_under_a:?}"
    );
    // Tags whose ids share a start are trees of their own.
    store
        .put_folder(ws, source.id, "folder/x", &f("other", None))
        .await
        .unwrap();
    assert!(
        !store
            .folder_exists(source.id, "folder", "other")
            .await
            .unwrap()
    );
    // Deleting the source forgets its folders.
    crate::store::deletion::delete_source(store, ws, source.id)
        .await
        .unwrap();
    let prefix = format!("{}/", source.id);
    let range = crate::store::documents::KeyRange {
        prefix: &prefix,
        after: None,
    };
    for collection in [
        crate::store::folders::FOLDERS,
        crate::store::folders::FOLDER_TREES,
    ] {
        let left = store.scan_documents(collection, range, 10).await.unwrap();
        assert!(left.is_empty(), "{collection}: {left:?}");
    }
}
