//! Sources: stored, read within their workspace, corrected and deleted.

use uuid::Uuid;

use crate::{
    Error, RecordStore,
    folder::Folder,
    record::Scope,
    source::{
        DataType, FacetType, NewFacet, NewObjectType, NewTagConfig, SourceDataType, SourcePatch,
        TagType,
    },
    sync::{CloseOperation, OpenOperation},
};

use super::*;

/// Sources round-trip and are confined to their workspace.
pub async fn sources_roundtrip_within_their_workspace(store: &dyn RecordStore) {
    let ws = Uuid::new_v4();
    let (source, _) = new_source_in(store, ws).await;
    assert_eq!(store.get_source(ws, source.id).await.unwrap(), source);
    assert_eq!(store.list_sources(ws).await.unwrap(), vec![source.clone()]);
    let other = Uuid::new_v4();
    assert_err(
        store.get_source(other, source.id).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    assert!(store.list_sources(other).await.unwrap().is_empty());
    let scope = Scope {
        workspace_id: other,
        source_id: source.id,
        object_type_id: source.object_types[0].id,
    };
    assert_err(
        store.open_sync(scope, OpenOperation::StartInitial).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    assert_err(
        store.put_record(write(scope, "a", None, None)).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
}

/// A source's externalId is unique in its workspace; a source can be patched and extended
/// (object types, tag configs, facets) with every change stored and a refused change storing
/// nothing; it cannot be deleted while a sync is open, and deleting it removes its records,
/// syncs, folders and search entries and frees its externalId.
pub async fn sources_are_corrected_and_deleted(store: &dyn RecordStore) {
    let ws = Uuid::new_v4();
    let (source, scope) = search_source(store, ws).await;
    match store.create_source(&search_source_in(ws)).await {
        Err(Error::Conflict(m)) => assert!(m.contains(&source.id.to_string()), "{m}"),
        other => panic!("a duplicate externalId must conflict, got {other:?}"),
    }
    search_source(store, Uuid::new_v4()).await;

    let patched = store
        .update_source(
            ws,
            source.id,
            Box::new(|s| {
                s.patch(SourcePatch {
                    name: Some("Renamed".into()),
                    track_status: Some(false),
                })
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        (patched.name.as_str(), patched.track_status),
        ("Renamed", false)
    );
    assert_eq!(store.get_source(ws, source.id).await.unwrap(), patched);
    assert_err(
        store
            .update_source(
                ws,
                source.id,
                Box::new(|s| {
                    s.patch(SourcePatch {
                        name: Some(" ".into()),
                        track_status: Some(true),
                    })
                }),
            )
            .await,
        |e| matches!(e, Error::Invalid(_)),
        "Invalid (blank name)",
    );
    assert_eq!(store.get_source(ws, source.id).await.unwrap(), patched);
    assert_err(
        store
            .update_source(Uuid::new_v4(), source.id, Box::new(|_| Ok(())))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (another workspace)",
    );

    let notes = NewObjectType {
        default_access: Default::default(),
        complete_max_removal: None,
        name: "Notes".into(),
        external_id: "notes".into(),
        source_data_type: SourceDataType::Record,
        data_type: None,
        fields: vec![],
        tag_configs: vec![],
        facets: vec![],
        templates: None,
    };
    let again = notes.clone();
    let edited = store
        .update_source(
            ws,
            source.id,
            Box::new(move |s| s.add_object_type(notes).map(drop)),
        )
        .await
        .unwrap();
    assert_err(
        store
            .update_source(
                ws,
                source.id,
                Box::new(move |s| s.add_object_type(again).map(drop)),
            )
            .await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict (object type externalId taken)",
    );
    let notes = edited
        .object_types
        .iter()
        .find(|o| o.external_id == "notes")
        .expect("the added object type is stored");
    let notes = Scope {
        object_type_id: notes.id,
        ..scope
    };
    let size = NewTagConfig {
        tag_type: TagType::Simple,
        name: "Size".into(),
        external_id: "size".into(),
        data_type: DataType::Long,
        allow_multiple_values: false,
    };
    let facet = |tag: &str| NewFacet {
        facet_type: FacetType::Tag,
        name: tag.into(),
        tag_external_id: tag.into(),
        target_type: None,
        allow_multiple_values: false,
    };
    let (size_facet, missing_facet) = (facet("size"), facet("missing"));
    let edited = store
        .update_source(
            ws,
            source.id,
            Box::new(move |s| {
                s.add_tag_config(notes.object_type_id, size)?;
                s.add_facet(notes.object_type_id, size_facet).map(drop)
            }),
        )
        .await
        .unwrap();
    assert_err(
        store
            .update_source(
                ws,
                source.id,
                Box::new(move |s| s.add_facet(notes.object_type_id, missing_facet).map(drop)),
            )
            .await,
        |e| matches!(e, Error::Invalid(_)),
        "Invalid (facet over a missing tag)",
    );
    let stored = store.get_source(ws, source.id).await.unwrap();
    assert_eq!(stored, edited);
    let ot = stored.object_type(notes.object_type_id).unwrap();
    assert_eq!(ot.tag_configs[0].external_id, "size");
    assert_eq!(ot.facets[0].tag_external_id, "size");

    put_doc(store, scope, "a", "quarterly sales report", &[]).await;
    put_doc(store, notes, "n", "quarterly notes", &[]).await;
    store
        .put_folder(
            ws,
            source.id,
            "folder",
            &Folder {
                external_id: "root".into(),
                name: "Root".into(),
                parent_external_id: None,
            },
        )
        .await
        .unwrap();
    // The write log carries both records to an index.
    let index = ModelIndex::default();
    crate::index::rebuild(store, &index, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(index.external_ids(source.id), ["a", "n"]);
    let run = store
        .open_sync(notes, OpenOperation::StartInitial)
        .await
        .unwrap();
    match store.delete_source(ws, source.id).await {
        Err(Error::Conflict(m)) => assert!(m.contains("open"), "{m}"),
        other => panic!("deleting a source with an open sync must conflict, got {other:?}"),
    }
    assert_eq!(store.get_source(ws, source.id).await.unwrap(), edited);
    store
        .close_sync(notes, run.sync_number, CloseOperation::Fail)
        .await
        .unwrap();
    assert_err(
        store.delete_source(Uuid::new_v4(), source.id).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (another workspace)",
    );

    crate::store::deletion::delete_source(store, ws, source.id)
        .await
        .unwrap();
    assert_err(
        store.get_source(ws, source.id).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (deleted source)",
    );
    assert!(store.list_sources(ws).await.unwrap().is_empty());
    assert_err(
        store.get_record(&key(scope, "a")).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (record of a deleted source)",
    );
    // The deletion reaches the index through the log: the source's records leave it.
    crate::index::catch_up(store, &index).await.unwrap();
    assert!(index.external_ids(source.id).is_empty());
    assert!(
        !store
            .folder_exists(source.id, "folder", "root")
            .await
            .unwrap()
    );
    assert_err(
        store.delete_source(ws, source.id).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound (deleted twice)",
    );
    search_source(store, ws).await;
}
