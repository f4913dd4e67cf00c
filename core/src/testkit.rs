//! The backend conformance suite: every store runs these cases through the public traits.
//!
//! A store crate's test file calls [`conformance_tests!`](crate::conformance_tests) with an async
//! expression that yields a fresh `Arc` of the store (implementing both traits); the macro writes
//! one `#[tokio::test]` per case so failures are named by behaviour.

use std::sync::Arc;

use uuid::Uuid;

use crate::{
    Error, RecordStore, TokenStore, WorkspaceId,
    folder::Folder,
    index::{Hits, IndexQuery, SearchIndex},
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session, TokenKind},
    record::{Extraction, RecordKey, RecordWrite, Scope, Touch},
    search::TagFilter,
    source::{
        CUSTOM, DataType, FacetTargetType, FacetType, NewFacet, NewObjectType, NewSource,
        NewTagConfig, Source, SourceDataType, SourcePatch, TagType,
    },
    sync::{CloseOperation, OpenOperation, SyncEvent, SyncState},
    tag::{TagValue, Tags},
    time,
    token::{ApiToken, Role, User, Workspace},
};

mod batch;
mod changes;
mod syncs;
mod webhooks;

pub use batch::*;
pub use changes::*;
pub use syncs::*;
pub use webhooks::*;

/// Both store traits, as one object.
pub trait Store: RecordStore + TokenStore {}
impl<T: RecordStore + TokenStore> Store for T {}

/// Creates a source with one RECORD object type (tags `color`, multi-valued) in a new workspace.
pub async fn new_source(store: &dyn RecordStore) -> (Source, Scope) {
    new_source_in(store, Uuid::new_v4()).await
}

/// Creates the test source in the given workspace.
pub async fn new_source_in(store: &dyn RecordStore, workspace_id: WorkspaceId) -> (Source, Scope) {
    stored(store, test_source(workspace_id)).await
}

/// Stores `source`; returns it with the scope of its first object type.
async fn stored(store: &dyn RecordStore, source: Source) -> (Source, Scope) {
    store.create_source(&source).await.expect("create source");
    let scope = Scope {
        workspace_id: source.workspace_id,
        source_id: source.id,
        object_type_id: source.object_types[0].id,
    };
    (source, scope)
}

/// The test source (one RECORD object type, tag `color`, multi-valued), built but not stored.
pub fn test_source(workspace_id: WorkspaceId) -> Source {
    NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "conformance".into(),
        name: "Conformance".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            complete_max_removal: None,
            name: "Files".into(),
            external_id: "files".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![NewTagConfig {
                tag_type: TagType::Simple,
                name: "Color".into(),
                external_id: "color".into(),
                data_type: DataType::Text,
                allow_multiple_values: true,
            }],
            facets: vec![],
            templates: None,
        }],
    }
    .build(workspace_id, time::now())
    .expect("valid test source")
}

/// A record key in `scope`.
pub fn key(scope: Scope, external_id: &str) -> RecordKey {
    RecordKey {
        scope,
        external_id: external_id.into(),
    }
}

/// An upload of `external_id` with the given sync number and checksum.
pub fn write(
    scope: Scope,
    external_id: &str,
    sync: Option<i64>,
    checksum: Option<&str>,
) -> RecordWrite {
    RecordWrite {
        key: key(scope, external_id),
        sync_number: sync,
        title: format!("{external_id}.txt"),
        file_name: Some(format!("{external_id}.txt")),
        url: Some(format!("https://example.test/{external_id}")),
        content: format!("content of {external_id}"),
        tags: Tags::new(),
        external_checksum: checksum.map(Into::into),
        extraction: Extraction {
            format: Some("text".into()),
            chars: 10,
            truncated: false,
            failure: None,
        },
        modified_by: "tester@example.test".into(),
    }
}

fn touch(sync: Option<i64>, if_match: Option<&str>) -> Touch {
    Touch {
        sync_number: sync,
        if_match: if_match.map(Into::into),
        event: SyncEvent::Touched,
    }
}

pub(crate) fn assert_err<T: std::fmt::Debug>(
    r: crate::Result<T>,
    pred: fn(&Error) -> bool,
    what: &str,
) {
    match r {
        Err(e) if pred(&e) => {}
        other => panic!("expected {what}, got {other:?}"),
    }
}

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

    store.delete_source(ws, source.id).await.unwrap();
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

/// A new externalId is created at version 1; every later upload increments the version, keeps the
/// id and created date, and replaces the whole tag set.
pub async fn uploads_create_then_increment_versions(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let run = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_eq!(run.sync_number, 1);
    let mut w = write(scope, "a", Some(1), Some("c1"));
    w.tags.insert(
        "color".into(),
        vec![TagValue::Text("red".into()), TagValue::Text("blue".into())],
    );
    let first = store.put_record(w).await.unwrap();
    assert!(first.created);
    assert_eq!(first.record.version, 1);
    assert_eq!(first.record.object_type.current_sync_number, 1);
    assert_eq!(first.record.object_type.name, "Files");
    let mut w = write(scope, "a", Some(1), Some("c2"));
    w.tags
        .insert("color".into(), vec![TagValue::Text("green".into())]);
    let second = store.put_record(w).await.unwrap();
    assert!(!second.created);
    assert_eq!(second.record.version, 2);
    assert_eq!(second.record.id, first.record.id);
    assert_eq!(second.record.created_date, first.record.created_date);
    assert_eq!(
        second.record.tags["color"],
        vec![TagValue::Text("green".into())]
    );
    assert_eq!(second.record.external_checksum.as_deref(), Some("c2"));
    let read = store.get_record(&key(scope, "a")).await.unwrap();
    assert_eq!(read, second.record);
}

/// Outside a sync, a new record joins the latest sync number (0 before any sync) and an existing
/// one keeps its membership.
pub async fn upload_outside_a_sync(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let r = store
        .put_record(write(scope, "early", None, None))
        .await
        .unwrap();
    assert_eq!(r.record.sync_number, 0);
    assert_eq!(r.record.object_type.current_sync_number, 0);
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(write(scope, "a", Some(1), None))
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    assert!(
        store
            .get_record(&key(scope, "early"))
            .await
            .unwrap()
            .removed
    );
    let r = store
        .put_record(write(scope, "late", None, None))
        .await
        .unwrap();
    assert_eq!(r.record.sync_number, 1);
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let r = store
        .put_record(write(scope, "new", None, None))
        .await
        .unwrap();
    assert_eq!(
        r.record.sync_number, 2,
        "new record joins the latest (open) sync"
    );
    store
        .close_sync(scope, 2, CloseOperation::CompleteIncremental)
        .await
        .unwrap();
    let r = store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    assert_eq!(
        r.record.sync_number, 1,
        "without an open sync an existing record keeps its membership"
    );
}

/// A new source whose records `ids` (checksum `checksum`) were written in a completed first
/// sync, with a second sync (START, number 2) open.
async fn in_a_second_sync(store: &dyn RecordStore, ids: &[&str], checksum: &str) -> Scope {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for id in ids {
        store
            .put_record(write(scope, id, Some(1), Some(checksum)))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    scope
}

/// Without a syncNumber, an upload or touch during an open sync acts on that sync (DESIGN 5):
/// COMPLETE keeps the records, and the sync's counters count the writes.
pub async fn writes_without_a_number_join_the_open_sync(store: &dyn RecordStore) {
    let scope = in_a_second_sync(store, &["touched", "uploaded", "stale"], "c1").await;
    let touched = store
        .touch_record(&key(scope, "touched"), touch(None, Some("c1")))
        .await
        .unwrap();
    assert_eq!(
        touched.sync_number, 2,
        "a touch without number joins sync 2"
    );
    let uploaded = store
        .put_record(write(scope, "uploaded", None, Some("c2")))
        .await
        .unwrap();
    assert_eq!(uploaded.record.sync_number, 2, "an upload joins sync 2");
    let closed = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(closed.counters.removed, 1, "{closed:?}");
    assert_eq!(closed.counters.touched, 1, "{closed:?}");
    assert_eq!(closed.counters.uploaded, 1, "{closed:?}");
    for id in ["touched", "uploaded"] {
        assert!(
            !store.get_record(&key(scope, id)).await.unwrap().removed,
            "{id}"
        );
    }
    assert!(
        store
            .get_record(&key(scope, "stale"))
            .await
            .unwrap()
            .removed
    );
}

/// An upload or touch naming a sync number that is not the open sync conflicts.
pub async fn writes_must_name_the_open_sync(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let conflict = |e: &Error| matches!(e, Error::Conflict(_));
    assert_err(
        store.put_record(write(scope, "a", Some(1), None)).await,
        conflict,
        "Conflict",
    );
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_err(
        store.put_record(write(scope, "a", Some(2), None)).await,
        conflict,
        "Conflict",
    );
    store
        .put_record(write(scope, "a", Some(1), None))
        .await
        .unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(7), None))
            .await,
        conflict,
        "Conflict",
    );
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    assert_err(
        store.put_record(write(scope, "a", Some(1), None)).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(1), None))
            .await,
        conflict,
        "Conflict",
    );
    assert!(store.get_record(&key(scope, "nope")).await.is_err());
}

/// Strings the property cases draw for a field of `class`: mostly strings the class allows (any
/// Unicode, CJK, emoji, `%`, and for text every control character but NUL), with a
/// refused character (NUL, a control character) one in sixteen, about 100 KB long one in eight.
fn hostile_string(class: crate::input::Class) -> proptest::strategy::BoxedStrategy<String> {
    use proptest::prelude::*;
    let special = prop::sample::select(vec![
        '東', '京', 'é', 'ß', '🙂', '\u{feff}', '\u{200b}', '%', '\\', ' ',
    ]);
    let allowed = match class {
        crate::input::Class::Line | crate::input::Class::Typed => prop_oneof![
            6 => any::<char>().prop_filter("a line holds no control character", |c| {
                !c.is_ascii_control()
            }),
            2 => special,
        ]
        .boxed(),
        crate::input::Class::Text => prop_oneof![
            5 => any::<char>().prop_filter("text holds no NUL", |c| *c != '\0'),
            2 => special,
            1 => (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('\t')),
            1 => Just('\u{7f}'),
        ]
        .boxed(),
    };
    let collect = |v: Vec<char>| v.into_iter().collect::<String>();
    let clean = prop::collection::vec(allowed, 0..40).prop_map(collect);
    let refused = (
        clean.clone(),
        prop_oneof![
            Just('\0'),
            (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('\0'))
        ],
        clean.clone(),
    )
        .prop_map(|(a, c, b)| format!("{a}{c}{b}"));
    prop_oneof![
        13 => clean.clone(),
        1 => refused,
        2 => clean.prop_map(|s| if s.is_empty() { s } else { s.repeat(100_000 / s.len() + 1) }),
    ]
    .boxed()
}

/// One drawn record write: every stored string field is hostile.
#[derive(Debug, Clone)]
struct DrawnWrite {
    external_id: String,
    title: String,
    content: String,
    url: String,
    checksum: String,
    tag: String,
}

fn drawn_write() -> impl proptest::strategy::Strategy<Value = DrawnWrite> {
    use crate::input::Class::{Line, Text};
    use proptest::prelude::*;
    (
        hostile_string(Line),
        hostile_string(Text),
        hostile_string(Text),
        hostile_string(Line),
        hostile_string(Line),
        hostile_string(Line),
    )
        .prop_map(
            |(external_id, title, content, url, checksum, tag)| DrawnWrite {
                external_id,
                title,
                content,
                url,
                checksum,
                tag,
            },
        )
}

impl DrawnWrite {
    fn write(&self, scope: Scope, salt: usize) -> RecordWrite {
        let mut w = write(scope, &format!("{salt}-{}", self.external_id), None, None);
        w.title = self.title.clone();
        w.content = self.content.clone();
        // A url is an http(s) link; what follows the scheme is drawn.
        w.url = Some(format!("https://x.test/{}", self.url));
        w.external_checksum = Some(self.checksum.clone());
        w.tags = Tags::from([("color".to_string(), vec![TagValue::Text(self.tag.clone())])]);
        w
    }
}

/// Runs a property over drawn writes (with shrinking) inside the async test.
fn check_writes(cases: u32, property: impl Fn(DrawnWrite) -> Result<(), String>) {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&drawn_write(), |drawn| {
        property(drawn).map_err(TestCaseError::fail)
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

/// Blocks on a store call from inside the (multi-threaded) conformance test.
fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

/// Property: whatever the strings, a write the input policy accepts is stored and reads back
/// byte for byte (title, content, url, checksum, tag value, externalId); one it refuses is
/// `Invalid` on every store, never a storage error. So every store gives the same answer.
pub async fn stored_text_reads_back_identically(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let salt = std::cell::Cell::new(0);
    let accepted = std::cell::Cell::new(0);
    check_writes(64, |drawn| {
        salt.set(salt.get() + 1);
        let w = drawn.write(scope, salt.get());
        let expected = crate::input::check_record_write(&w);
        let got = block(store.put_record(w.clone()));
        match (expected, got) {
            (Ok(()), Ok(put)) => {
                let back = block(store.get_record(&w.key)).map_err(|e| e.to_string())?;
                for (what, stored, sent) in [
                    ("externalId", &back.external_id, &w.key.external_id),
                    ("title", &back.title, &w.title),
                    ("content", &back.content, &w.content),
                ] {
                    if stored != sent {
                        return Err(format!("{what} changed: {stored:?} != {sent:?}"));
                    }
                }
                if back.url != w.url || back.external_checksum != w.external_checksum {
                    return Err(format!("url/checksum changed: {back:?}"));
                }
                if back.tags != w.tags || put.record.tags != w.tags {
                    return Err(format!("tags changed: {:?}", back.tags));
                }
                accepted.set(accepted.get() + 1);
                Ok(())
            }
            (Err(_), Err(Error::Invalid(_))) => Ok(()),
            (expected, got) => Err(format!(
                "policy said {expected:?}, the store answered {:?}",
                got.map(|p| p.created)
            )),
        }
    });
    // Most draws are allowed input: the property is about storing, not only refusing.
    assert!(
        accepted.get() >= 10,
        "only {} draws were stored",
        accepted.get()
    );
}

/// Refused input is [`Error::Invalid`] naming the field on every store: NUL or another control
/// character in an identifier, tag value, url or checksum; NUL in text; over-long identifiers.
pub async fn refused_input_is_invalid_on_every_store(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let long = "x".repeat(crate::input::MAX_ID_BYTES + 1);
    type Spoil = Box<dyn Fn(&mut RecordWrite)>;
    let cases: Vec<(&str, Spoil)> = vec![
        (
            "externalId",
            Box::new(|w| w.key.external_id = "a\0b".into()),
        ),
        (
            "externalId",
            Box::new(|w| w.key.external_id = "a\u{1}b".into()),
        ),
        (
            "externalId",
            Box::new(move |w| w.key.external_id = long.clone()),
        ),
        (
            "externalChecksum",
            Box::new(|w| w.external_checksum = Some("v\0".into())),
        ),
        (
            "url",
            Box::new(|w| w.url = Some("https://x.test/\0".into())),
        ),
        (
            "url",
            Box::new(|w| w.url = Some("https://x.test/\n".into())),
        ),
        ("title", Box::new(|w| w.title = "t\0".into())),
        ("content", Box::new(|w| w.content = "c\0".into())),
        (
            "tag 'color'",
            Box::new(|w| {
                w.tags = Tags::from([("color".into(), vec![TagValue::Text("r\0".into())])])
            }),
        ),
        (
            "tag 'color'",
            Box::new(|w| {
                w.tags = Tags::from([("color".into(), vec![TagValue::Text("r".repeat(3000))])])
            }),
        ),
    ];
    for (field, spoil) in cases {
        let mut w = write(scope, "hostile", None, None);
        spoil(&mut w);
        match store.put_record(w).await {
            Err(Error::Invalid(m)) => assert!(m.contains(field), "{field}: {m}"),
            other => panic!("{field}: expected Invalid, got {other:?}"),
        }
    }
    assert!(store.get_record(&key(scope, "hostile")).await.is_err());
    let invalid = |e: &Error| matches!(e, Error::Invalid(_));
    let nul = key(scope, "a\0b");
    assert_err(store.get_record(&nul).await, invalid, "Invalid");
    assert_err(store.delete_record(&nul).await, invalid, "Invalid");
    assert_err(
        store.touch_record(&nul, touch(None, None)).await,
        invalid,
        "Invalid",
    );
}

/// Touch makes a record part of the sync and changes nothing else; If-Match must equal the stored
/// checksum; a missing or removed record is NotFound.
pub async fn touch_joins_the_sync_and_changes_nothing_else(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let before = store
        .put_record(write(scope, "a", Some(1), Some("c1")))
        .await
        .unwrap()
        .record;
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(2), Some("other")))
            .await,
        |e| matches!(e, Error::PreconditionFailed(_)),
        "PreconditionFailed",
    );
    let after = store
        .touch_record(&key(scope, "a"), touch(Some(2), Some("c1")))
        .await
        .unwrap();
    assert_eq!(after.sync_number, 2);
    assert_eq!(after.version, before.version);
    assert_eq!(after.modified_date, before.modified_date);
    assert_eq!(after.content, before.content);
    store
        .touch_record(&key(scope, "a"), touch(Some(2), None))
        .await
        .unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "missing"), touch(Some(2), None))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    let closed = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(closed.counters.removed, 0);
    assert_eq!(closed.counters.touched, 2);
    assert_eq!(closed.kept, Some(1));
}

/// COMPLETE removes exactly the records not uploaded or touched in the sync; they become
/// tombstones without a visible checksum; touching one is NotFound; uploading revives it.
pub async fn close_complete_removes_untouched_records(store: &dyn RecordStore) {
    let scope = in_a_second_sync(store, &["keep", "touch", "drop"], "c").await;
    store
        .put_record(write(scope, "keep", Some(2), Some("c2")))
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "touch"), touch(Some(2), None))
        .await
        .unwrap();
    let run = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(run.state, SyncState::Completed);
    assert_eq!(run.close_operation, Some(CloseOperation::Complete));
    assert_eq!(run.counters.removed, 1);
    assert_eq!(run.kept, Some(2));
    assert!(run.closed_at.is_some());
    let dropped = store.get_record(&key(scope, "drop")).await.unwrap();
    assert!(dropped.removed);
    assert_eq!(dropped.visible_checksum(), None);
    assert!(!store.get_record(&key(scope, "keep")).await.unwrap().removed);
    assert!(
        !store
            .get_record(&key(scope, "touch"))
            .await
            .unwrap()
            .removed
    );
    assert_err(
        store
            .touch_record(&key(scope, "drop"), touch(None, None))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let revived = store
        .put_record(write(scope, "drop", Some(3), Some("c3")))
        .await
        .unwrap();
    assert!(!revived.created);
    assert!(!revived.record.removed);
    assert_eq!(revived.record.version, dropped.version + 1);
    assert_eq!(revived.record.id, dropped.id);
    assert_eq!(revived.record.visible_checksum(), Some("c3"));
}

/// FAIL and COMPLETE_INCREMENTAL remove nothing.
pub async fn fail_and_incremental_remove_nothing(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(write(scope, "a", Some(1), None))
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    for (n, op, state) in [
        (2, CloseOperation::Fail, SyncState::Failed),
        (3, CloseOperation::CompleteIncremental, SyncState::Completed),
    ] {
        store.open_sync(scope, OpenOperation::Start).await.unwrap();
        let run = store.close_sync(scope, n, op).await.unwrap();
        assert_eq!(run.state, state);
        assert_eq!(run.counters.removed, 0);
        assert!(!store.get_record(&key(scope, "a")).await.unwrap().removed);
    }
}

/// Every misuse of the sync state machine conflicts; an unknown sync is NotFound.
pub async fn sync_state_machine_misuse_conflicts(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let conflict = |e: &Error| matches!(e, Error::Conflict(_));
    assert_err(
        store.open_sync(scope, OpenOperation::Start).await,
        conflict,
        "Conflict",
    );
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_err(
        store.open_sync(scope, OpenOperation::Start).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.open_sync(scope, OpenOperation::StartInitial).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.close_sync(scope, 9, CloseOperation::Complete).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    store
        .close_sync(scope, 1, CloseOperation::Fail)
        .await
        .unwrap();
    assert_err(
        store.close_sync(scope, 1, CloseOperation::Complete).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.open_sync(scope, OpenOperation::StartInitial).await,
        conflict,
        "Conflict",
    );
    let run = store.open_sync(scope, OpenOperation::Start).await.unwrap();
    assert_eq!(run.sync_number, 2);
    let runs = store.list_syncs(scope).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.sync_number).collect::<Vec<_>>(),
        [2, 1]
    );
    assert_eq!(
        store.get_sync(scope, 1).await.unwrap().state,
        SyncState::Failed
    );
}

/// Sync counters record uploads, touches, checksum skips and extraction failures.
pub async fn sync_counters_count_writes(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(write(scope, "a", Some(1), Some("c")))
        .await
        .unwrap();
    let mut failed = write(scope, "b", Some(1), None);
    failed.content.clear();
    failed.extraction = Extraction {
        format: None,
        chars: 0,
        truncated: false,
        failure: Some("unrecognized format".into()),
    };
    store.put_record(failed).await.unwrap();
    store
        .touch_record(
            &key(scope, "a"),
            Touch {
                sync_number: Some(1),
                if_match: Some("c".into()),
                event: SyncEvent::Unchanged,
            },
        )
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "b"), touch(Some(1), None))
        .await
        .unwrap();
    let run = store.get_sync(scope, 1).await.unwrap();
    assert_eq!(run.counters.uploaded, 2);
    assert_eq!(run.counters.extraction_failures, 1);
    assert_eq!(run.counters.unchanged, 1);
    assert_eq!(run.counters.touched, 1);
}

/// Deleting makes the same tombstone as a sync removal; a second delete is NotFound.
pub async fn delete_makes_a_revivable_tombstone(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .put_record(write(scope, "a", None, Some("c")))
        .await
        .unwrap();
    store.delete_record(&key(scope, "a")).await.unwrap();
    let r = store.get_record(&key(scope, "a")).await.unwrap();
    assert!(r.removed);
    assert_eq!(r.visible_checksum(), None);
    assert_err(
        store.delete_record(&key(scope, "a")).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    assert_err(
        store.delete_record(&key(scope, "zz")).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    let back = store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    assert_eq!(back.record.version, 2);
    assert!(!back.record.removed);
}

/// 50 concurrent uploads of one externalId end at version 50 with every version seen once.
pub async fn concurrent_uploads_never_lose_a_version(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .put_record(write(scope, "hot", Some(1), Some(&format!("c{i}"))))
                    .await
            })
        })
        .collect();
    let mut versions = Vec::new();
    let mut created = 0;
    for t in tasks {
        let out = t.await.expect("task").expect("upload");
        created += usize::from(out.created);
        versions.push(out.record.version);
    }
    versions.sort_unstable();
    assert_eq!(versions, (1..=50).collect::<Vec<_>>());
    assert_eq!(created, 1);
    assert_eq!(
        store.get_record(&key(scope, "hot")).await.unwrap().version,
        50
    );
}

/// Of concurrent opens, exactly one succeeds; the rest conflict.
pub async fn two_syncs_never_open_at_once(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.open_sync(scope, OpenOperation::Start).await })
        })
        .collect();
    let mut opened = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(run) => {
                opened += 1;
                assert_eq!(run.sync_number, 2);
            }
            Err(Error::Conflict(_)) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(opened, 1);
}

/// A COMPLETE racing uploads and touches of its own sync never removes a record that was
/// successfully uploaded or touched in that sync.
pub async fn complete_racing_uploads_keeps_their_records(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for i in 0..40 {
        store
            .put_record(write(scope, &format!("old{i}"), Some(1), None))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let writers: Vec<_> = (0..40)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let ok = if i % 2 == 0 {
                    store
                        .put_record(write(scope, &format!("old{i}"), Some(2), None))
                        .await
                        .is_ok()
                } else {
                    store
                        .touch_record(&key(scope, &format!("old{i}")), touch(Some(2), None))
                        .await
                        .is_ok()
                };
                (i, ok)
            })
        })
        .collect();
    let closer = {
        let store = store.clone();
        tokio::spawn(async move { store.close_sync(scope, 2, CloseOperation::Complete).await })
    };
    let run = closer.await.expect("task").expect("close");
    let mut joined = 0;
    for w in writers {
        let (i, ok) = w.await.expect("task");
        let record = store
            .get_record(&key(scope, &format!("old{i}")))
            .await
            .unwrap();
        if ok {
            joined += 1;
            assert!(!record.removed, "old{i} joined sync 2 but was removed");
        } else {
            assert!(record.removed, "old{i} failed to join sync 2 yet survived");
        }
    }
    assert_eq!(run.counters.removed, 40 - joined);
}

/// Workspaces, users and API tokens round-trip; e-mails are unique and matched case-insensitively.
pub async fn identities_roundtrip(store: &dyn TokenStore) {
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("ws-{}", Uuid::new_v4()),
        oauth_enabled: true,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    assert_err(
        store.create_workspace(&ws).await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict",
    );
    assert_eq!(
        store.workspace_by_name(&ws.name).await.unwrap(),
        Some(ws.clone())
    );
    assert_eq!(store.workspace_by_name("no-such-ws").await.unwrap(), None);
    let before = store.count_users().await.unwrap();
    let email = format!("u{}@Example.test", Uuid::new_v4().simple());
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: email.clone(),
        role: Role::Admin,
        password_hash: "$argon2id$x".into(),
        created_date: time::now(),
    };
    store.create_user(&user).await.unwrap();
    let mut dup = user.clone();
    dup.id = Uuid::new_v4();
    dup.email = email.to_uppercase();
    assert_err(
        store.create_user(&dup).await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict",
    );
    assert_eq!(store.count_users().await.unwrap(), before + 1);
    assert_eq!(
        store.user_by_email(&email.to_lowercase()).await.unwrap(),
        Some(user.clone())
    );
    let hash = format!("{:064x}", Uuid::new_v4().as_u128());
    store
        .add_api_token(&ApiToken {
            id: Uuid::new_v4(),
            user_id: user.id,
            token_hash: hash.clone(),
            created_date: time::now(),
        })
        .await
        .unwrap();
    assert_eq!(store.user_by_token_hash(&hash).await.unwrap(), Some(user));
    assert_eq!(store.user_by_token_hash("00").await.unwrap(), None);
}

/// A workspace and an ADMIN user in it, for the identity cases.
async fn new_user(store: &dyn TokenStore) -> User {
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("ws-{}", Uuid::new_v4()),
        oauth_enabled: true,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: format!("u{}@example.test", Uuid::new_v4().simple()),
        role: Role::Admin,
        password_hash: "$argon2id$x".into(),
        created_date: time::now(),
    };
    store.create_user(&user).await.unwrap();
    user
}

fn new_client(workspace_id: WorkspaceId) -> OAuthClient {
    OAuthClient {
        id: Uuid::new_v4(),
        workspace_id,
        secret: format!("{:064x}", Uuid::new_v4().as_u128()),
        name: "Acme Sync".into(),
        description: "Syncs Acme files".into(),
        bottom_description: "Terms apply".into(),
        redirect_uris: vec!["https://acme.test/cb".into()],
        scopes: vec!["default".into()],
        has_logo: false,
        created_date: time::now(),
    }
}

fn hash_of(n: u128) -> String {
    format!("{n:064x}")
}

/// Workspaces by id, the OAuth switch, users by id, and API tokens are listed and revocable.
pub async fn identities_by_id_and_token_revocation(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let ws = store
        .workspace_by_id(user.workspace_id)
        .await
        .unwrap()
        .unwrap();
    assert!(ws.oauth_enabled);
    assert!(store.set_oauth_enabled(&ws.name, false).await.unwrap());
    assert!(
        !store
            .workspace_by_id(ws.id)
            .await
            .unwrap()
            .unwrap()
            .oauth_enabled
    );
    assert!(!store.set_oauth_enabled("no-such-ws", true).await.unwrap());
    assert_eq!(store.workspace_by_id(Uuid::new_v4()).await.unwrap(), None);
    assert_eq!(store.user_by_id(user.id).await.unwrap(), Some(user.clone()));
    assert_eq!(store.user_by_id(Uuid::new_v4()).await.unwrap(), None);
    let tokens: Vec<ApiToken> = (0..2u128)
        .map(|i| ApiToken {
            id: Uuid::new_v4(),
            user_id: user.id,
            token_hash: hash_of(Uuid::new_v4().as_u128() ^ i),
            created_date: time::now(),
        })
        .collect();
    for t in &tokens {
        store.add_api_token(t).await.unwrap();
    }
    let listed = store.list_api_tokens(user.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    let other = new_user(store).await;
    assert!(
        !store
            .delete_api_token(other.id, tokens[0].id)
            .await
            .unwrap()
    );
    assert!(store.delete_api_token(user.id, tokens[0].id).await.unwrap());
    assert!(!store.delete_api_token(user.id, tokens[0].id).await.unwrap());
    assert_eq!(
        store
            .user_by_token_hash(&tokens[0].token_hash)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .user_by_token_hash(&tokens[1].token_hash)
            .await
            .unwrap(),
        Some(user.clone())
    );
}

/// Clients round-trip, stay in their workspace, keep their logo through updates.
pub async fn oauth_clients_roundtrip(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let a = new_client(user.workspace_id);
    let mut b = new_client(user.workspace_id);
    b.name = "Second".into();
    store.create_client(&a).await.unwrap();
    store.create_client(&b).await.unwrap();
    assert_eq!(store.client(a.id).await.unwrap(), Some(a.clone()));
    let listed = store.list_clients(user.workspace_id).await.unwrap();
    assert_eq!(listed.iter().map(|c| c.id).collect::<Vec<_>>().len(), 2);
    assert!(listed.contains(&a) && listed.contains(&b));
    assert!(store.list_clients(Uuid::new_v4()).await.unwrap().is_empty());

    let logo = Logo {
        content_type: "image/png".into(),
        bytes: vec![0x89, b'P', b'N', b'G', 0, 255],
    };
    assert!(
        !store
            .set_client_logo(Uuid::new_v4(), a.id, &logo)
            .await
            .unwrap()
    );
    assert!(
        store
            .set_client_logo(user.workspace_id, a.id, &logo)
            .await
            .unwrap()
    );
    assert_eq!(store.client_logo(a.id).await.unwrap(), Some(logo.clone()));
    assert!(store.client(a.id).await.unwrap().unwrap().has_logo);

    let mut changed = a.clone();
    changed.name = "Renamed".into();
    changed.redirect_uris.push("https://acme.test/other".into());
    changed.has_logo = false;
    let mut foreign = changed.clone();
    foreign.workspace_id = Uuid::new_v4();
    assert!(!store.update_client(&foreign).await.unwrap());
    assert!(store.update_client(&changed).await.unwrap());
    let stored = store.client(a.id).await.unwrap().unwrap();
    assert_eq!(stored.name, "Renamed");
    assert_eq!(stored.redirect_uris.len(), 2);
    assert!(stored.has_logo, "an update keeps the logo");

    assert!(!store.delete_client(Uuid::new_v4(), a.id).await.unwrap());
    assert!(store.delete_client(user.workspace_id, a.id).await.unwrap());
    assert!(!store.delete_client(user.workspace_id, a.id).await.unwrap());
    assert_eq!(store.client(a.id).await.unwrap(), None);
    assert_eq!(store.client_logo(a.id).await.unwrap(), None);
    assert_eq!(store.client(b.id).await.unwrap(), Some(b));
}

fn code_for(client: &OAuthClient, user: &User) -> AuthCode {
    AuthCode {
        code_hash: hash_of(Uuid::new_v4().as_u128()),
        grant_id: Uuid::new_v4(),
        client_id: client.id,
        workspace_id: user.workspace_id,
        user_id: user.id,
        redirect_uri: client.redirect_uris[0].clone(),
        scope: "default".into(),
        code_challenge: Some("abc".into()),
        expires_at: time::now() + chrono::Duration::minutes(10),
    }
}

fn token_for(code: &AuthCode, kind: TokenKind) -> OAuthToken {
    OAuthToken {
        token_hash: hash_of(Uuid::new_v4().as_u128()),
        kind,
        grant_id: code.grant_id,
        client_id: code.client_id,
        workspace_id: code.workspace_id,
        user_id: code.user_id,
        scope: code.scope.clone(),
        expires_at: (kind == TokenKind::Access).then(|| time::now() + chrono::Duration::hours(1)),
        created_date: time::now(),
    }
}

/// A code redeems once, even under concurrent redemption; a replay is recognised.
pub async fn codes_redeem_exactly_once(store: Arc<dyn Store>) {
    let user = new_user(&*store).await;
    let client = new_client(user.workspace_id);
    store.create_client(&client).await.unwrap();
    let code = code_for(&client, &user);
    store.save_code(&code).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            let hash = code.code_hash.clone();
            tokio::spawn(async move { store.redeem_code(&hash).await.unwrap() })
        })
        .collect();
    let mut redeemed = 0;
    for t in tasks {
        match t.await.unwrap() {
            Redemption::Redeemed(c) => {
                assert_eq!(c, code);
                redeemed += 1;
            }
            Redemption::Replayed(c) => assert_eq!(c.grant_id, code.grant_id),
            Redemption::Unknown => panic!("a saved code is known"),
        }
    }
    assert_eq!(redeemed, 1);
    assert_eq!(
        store.redeem_code(&hash_of(7)).await.unwrap(),
        Redemption::Unknown
    );
}

/// Tokens are found until revoked one by one, by grant, or with their client.
pub async fn tokens_revoke_by_token_grant_and_client(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let client = new_client(user.workspace_id);
    store.create_client(&client).await.unwrap();
    let code = code_for(&client, &user);
    store.save_code(&code).await.unwrap();
    let access = token_for(&code, TokenKind::Access);
    let refresh = token_for(&code, TokenKind::Refresh);
    store.save_token(&access).await.unwrap();
    store.save_token(&refresh).await.unwrap();
    assert_eq!(
        store.token(&access.token_hash).await.unwrap(),
        Some(access.clone())
    );
    assert_eq!(
        store.token(&refresh.token_hash).await.unwrap(),
        Some(refresh.clone())
    );

    assert_eq!(
        store.revoke_token(&access.token_hash).await.unwrap(),
        Some(access.clone())
    );
    assert_eq!(store.token(&access.token_hash).await.unwrap(), None);
    assert_eq!(store.revoke_token(&access.token_hash).await.unwrap(), None);

    let second = token_for(&code, TokenKind::Access);
    store.save_token(&second).await.unwrap();
    assert_eq!(store.revoke_grant(code.grant_id).await.unwrap(), 2);
    assert_eq!(store.token(&refresh.token_hash).await.unwrap(), None);

    // Deleting the client takes its codes and tokens with it; later tokens are refused.
    let code2 = code_for(&client, &user);
    store.save_code(&code2).await.unwrap();
    let t2 = token_for(&code2, TokenKind::Refresh);
    store.save_token(&t2).await.unwrap();
    assert!(
        store
            .delete_client(user.workspace_id, client.id)
            .await
            .unwrap()
    );
    assert_eq!(store.token(&t2.token_hash).await.unwrap(), None);
    assert_eq!(
        store.redeem_code(&code2.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    assert_err(
        store
            .save_token(&token_for(&code2, TokenKind::Access))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
}

/// Switching OAuth off revokes every token and unused code of the workspace (and only of it);
/// switching it on again revives none.
pub async fn disabling_oauth_revokes_the_workspace_grants(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let other = new_user(store).await;
    let ws = store
        .workspace_by_id(user.workspace_id)
        .await
        .unwrap()
        .unwrap();
    let mut grants = Vec::new();
    for u in [&user, &other] {
        let client = new_client(u.workspace_id);
        store.create_client(&client).await.unwrap();
        let used = code_for(&client, u);
        store.save_code(&used).await.unwrap();
        let unused = code_for(&client, u);
        store.save_code(&unused).await.unwrap();
        let tokens = [
            token_for(&used, TokenKind::Access),
            token_for(&used, TokenKind::Refresh),
        ];
        for t in &tokens {
            store.save_token(t).await.unwrap();
        }
        grants.push((unused, tokens));
    }
    assert!(store.set_oauth_enabled(&ws.name, false).await.unwrap());
    assert!(store.set_oauth_enabled(&ws.name, true).await.unwrap());
    let (unused, tokens) = &grants[0];
    for t in tokens {
        assert_eq!(store.token(&t.token_hash).await.unwrap(), None);
    }
    assert_eq!(
        store.redeem_code(&unused.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    let (unused, tokens) = &grants[1];
    for t in tokens {
        assert_eq!(
            store.token(&t.token_hash).await.unwrap().as_ref(),
            Some(t),
            "another workspace keeps its tokens"
        );
    }
    assert!(matches!(
        store.redeem_code(&unused.code_hash).await.unwrap(),
        Redemption::Redeemed(_)
    ));
}

/// Sessions round-trip and end; rate windows count per key and start over in a new window.
pub async fn sessions_and_rate_windows(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let session = Session {
        id_hash: hash_of(Uuid::new_v4().as_u128()),
        user_id: user.id,
        csrf_token: "csrf".into(),
        expires_at: time::now() + chrono::Duration::hours(1),
    };
    store.save_session(&session).await.unwrap();
    assert_eq!(
        store.session(&session.id_hash).await.unwrap(),
        Some(session.clone())
    );
    store.delete_session(&session.id_hash).await.unwrap();
    assert_eq!(store.session(&session.id_hash).await.unwrap(), None);

    let key = format!("login:{}", Uuid::new_v4());
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 0);
    assert_eq!(store.rate_hit(&key, 1000).await.unwrap(), 1);
    assert_eq!(store.rate_hit(&key, 1000).await.unwrap(), 2);
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 2);
    assert_eq!(store.rate_hit(&key, 2000).await.unwrap(), 1);
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 0);
    assert_eq!(store.rate_count(&key, 2000).await.unwrap(), 1);
}

/// A source for the search cases: tags `color` (TEXT, multi), `due` (DATE_TIME, mapped onto
/// the modified-date filter by a facet) and `folder` (HIERARCHICAL).
async fn search_source(store: &dyn RecordStore, workspace_id: WorkspaceId) -> (Source, Scope) {
    stored(store, search_source_in(workspace_id)).await
}

/// The search test source (RECORD type `docs`: tags color, due, folder with facets), built but
/// not stored.
fn search_source_in(workspace_id: WorkspaceId) -> Source {
    let tag = |name: &str, tag_type, data_type, multi| NewTagConfig {
        tag_type,
        name: name.into(),
        external_id: name.into(),
        data_type,
        allow_multiple_values: multi,
    };
    let facet = |name: &str, target| NewFacet {
        facet_type: FacetType::Tag,
        name: name.into(),
        tag_external_id: name.into(),
        target_type: target,
        allow_multiple_values: true,
    };
    NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "search".into(),
        name: "Search".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            complete_max_removal: None,
            name: "Docs".into(),
            external_id: "docs".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![
                tag("color", TagType::Simple, DataType::Text, true),
                tag("due", TagType::Simple, DataType::DateTime, false),
                tag("folder", TagType::Hierarchical, DataType::Text, false),
            ],
            facets: vec![
                facet("color", None),
                facet("due", Some(FacetTargetType::ModifiedDate)),
                facet("folder", None),
            ],
            templates: None,
        }],
    }
    .build(workspace_id, time::now())
    .expect("valid search source")
}

async fn put_doc(
    store: &dyn RecordStore,
    scope: Scope,
    id: &str,
    content: &str,
    tags: &[(&str, TagValue)],
) {
    let mut w = write(scope, id, None, None);
    w.content = content.into();
    for (tag, value) in tags {
        w.tags
            .entry((*tag).to_string())
            .or_default()
            .push(value.clone());
    }
    store.put_record(w).await.unwrap();
}

fn query(workspace_id: WorkspaceId, q: &str) -> IndexQuery {
    IndexQuery {
        workspace_id,
        text: q.into(),
        limit: 20,
        ..IndexQuery::default()
    }
}

/// Brings `index` up to the store's write log (building it first when it is new), then
/// searches it: what a server does between a write and a search, at once.
async fn searched(store: &dyn RecordStore, index: &dyn SearchIndex, query: &IndexQuery) -> Hits {
    if index.applied().unwrap().is_none() {
        crate::index::rebuild(store, index, &mut |_| {})
            .await
            .unwrap();
    }
    crate::index::catch_up(store, index).await.unwrap();
    index.search(query).unwrap()
}

fn ids(hits: &Hits) -> Vec<String> {
    let mut v: Vec<String> = hits.hits.iter().map(|h| h.external_id.clone()).collect();
    v.sort();
    v
}

fn text(s: &str) -> TagValue {
    TagValue::Text(s.into())
}

fn millis(y: i32, m: u32, d: u32) -> i64 {
    chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, y, m, d, 0, 0, 0)
        .unwrap()
        .timestamp_millis()
}

/// Words, phrases, accents and CJK are found; removed and other workspaces' records never are;
/// every kind of write reaches the index through the write log.
pub async fn search_finds_words_and_respects_liveness(
    store: &dyn RecordStore,
    index: &dyn SearchIndex,
) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "a",
        "The quarterly sales report for the Café in Zürich",
        &[],
    )
    .await;
    put_doc(
        store,
        scope,
        "b",
        "Sales figures, quarterly. Report follows.",
        &[],
    )
    .await;
    put_doc(store, scope, "c", "東京都の売上報告書", &[]).await;
    put_doc(store, scope, "d", "", &[]).await;
    let (_, other) = search_source(store, Uuid::new_v4()).await;
    put_doc(store, other, "x", "quarterly sales report", &[]).await;
    let find = |q: &str| {
        let q = query(ws, q);
        async move { searched(store, index, &q).await }
    };

    let hits = find("quarterly sales").await;
    assert_eq!(ids(&hits), ["a", "b"]);
    assert_eq!(hits.total, 2);
    assert_eq!(ids(&find("\"sales report\"").await), ["a"]);
    assert_eq!(ids(&find("cafe zurich").await), ["a"]);
    assert_eq!(ids(&find("CAFÉ").await), ["a"]);
    assert_eq!(ids(&find("売上").await), ["c"]);
    assert_eq!(ids(&find("東京").await), ["c"]);
    assert!(find("京東").await.hits.is_empty());
    assert!(find("nothing-here").await.hits.is_empty());
    // Browsing without words lists every live record, empty content included.
    assert_eq!(find("").await.total, 4);

    // Replaced content is what is found; a deleted record is gone from search.
    put_doc(store, scope, "b", "entirely different words", &[]).await;
    assert_eq!(ids(&find("quarterly").await), ["a"]);
    store.delete_record(&key(scope, "a")).await.unwrap();
    assert!(find("quarterly").await.hits.is_empty());
    // Revived by an upload: found again.
    put_doc(store, scope, "a", "quarterly again", &[]).await;
    assert_eq!(ids(&find("quarterly").await), ["a"]);

    // A COMPLETE close removes the unvisited records from search.
    let run = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let mut w = write(scope, "c", Some(run.sync_number), None);
    w.content = "東京都の売上報告書".into();
    store.put_record(w).await.unwrap();
    store
        .close_sync(scope, run.sync_number, CloseOperation::Complete)
        .await
        .unwrap();
    assert!(find("quarterly").await.hits.is_empty());
    assert_eq!(ids(&find("").await), ["c"]);
}

/// Ranking puts the better match first; cursor pages follow each other without overlap.
pub async fn search_ranks_and_pages(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "weak",
        &format!("apple {}", "filler ".repeat(200)),
        &[],
    )
    .await;
    put_doc(store, scope, "strong", "apple apple apple pie", &[]).await;
    put_doc(store, scope, "both", "apple pie with cream", &[]).await;
    for i in 0..25 {
        put_doc(
            store,
            scope,
            &format!("p{i:02}"),
            &format!("banana number {i}"),
            &[],
        )
        .await;
    }
    let hits = searched(store, index, &query(ws, "apple")).await;
    assert_eq!(hits.hits[0].external_id, "strong");
    // Every word outranks one word said often.
    let hits = searched(store, index, &query(ws, "apple cream")).await;
    assert_eq!(hits.hits[0].external_id, "both");
    assert_eq!(hits.total, 3);
    let mut q = query(ws, "banana");
    q.limit = 10;
    let mut seen = Vec::new();
    loop {
        let hits = searched(store, index, &q).await;
        assert_eq!(hits.total, 25);
        seen.extend(hits.hits.into_iter().map(|h| h.external_id));
        match hits.next_cursor {
            Some(cursor) => q.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 25);
}

/// Totals and facets count every match, and the best match is found however many newer ones
/// there are (the SQL stores once ranked only the newest 1,000 matches).
pub async fn search_counts_and_ranks_every_match(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "oldest",
        "zeta zeta zeta",
        &[("color", text("old"))],
    )
    .await;
    for i in 0..1010 {
        put_doc(
            store,
            scope,
            &format!("n{i:04}"),
            &format!("zeta and a longer text about other things, number {i}"),
            &[("color", text("new"))],
        )
        .await;
    }
    for i in 0..10 {
        store
            .delete_record(&key(scope, &format!("n{i:04}")))
            .await
            .unwrap();
    }
    let mut q = query(ws, "zeta");
    q.facet_tags = vec!["color".into()];
    let hits = searched(store, index, &q).await;
    assert_eq!(hits.total, 1001);
    assert_eq!(hits.hits[0].external_id, "oldest");
    assert_eq!(
        hits.facets["color"],
        [("new".to_string(), 1000), ("old".to_string(), 1)]
    );
    q.text.clear();
    assert_eq!(searched(store, index, &q).await.total, 1001);
    q.tags = vec![TagFilter {
        tag: "color".into(),
        values: vec!["old".into()],
    }];
    let hits = searched(store, index, &q).await;
    assert_eq!(ids(&hits), ["oldest"]);
    assert_eq!(hits.facets["color"], [("old".to_string(), 1)]);
}

/// Tag filters (OR within a tag, AND across tags), facets over the filtered set, and a DATE_TIME
/// tag mapped onto the modified-date filter.
pub async fn search_filters_and_facets(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (source, scope) = search_source(store, ws).await;
    let day = |d: u32| {
        TagValue::DateTime(
            chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2024, 1, d, 0, 0, 0).unwrap(),
        )
    };
    put_doc(
        store,
        scope,
        "r1",
        "report one",
        &[
            ("color", text("red")),
            ("color", text("blue")),
            ("due", day(1)),
        ],
    )
    .await;
    put_doc(
        store,
        scope,
        "r2",
        "report two",
        &[("color", text("red")), ("due", day(10))],
    )
    .await;
    put_doc(
        store,
        scope,
        "r3",
        "report three",
        &[("color", text("green"))],
    )
    .await;

    let mut q = query(ws, "report");
    q.facet_tags = vec!["color".into()];
    let hits = searched(store, index, &q).await;
    assert_eq!(hits.total, 3);
    assert_eq!(
        hits.facets["color"],
        vec![
            ("red".to_string(), 2),
            ("blue".to_string(), 1),
            ("green".to_string(), 1)
        ]
    );

    q.tags = vec![TagFilter {
        tag: "color".into(),
        values: vec!["blue".into(), "green".into()],
    }];
    let hits = searched(store, index, &q).await;
    assert_eq!(ids(&hits), ["r1", "r3"]);
    assert_eq!(
        hits.facets["color"],
        vec![
            ("blue".to_string(), 1),
            ("green".to_string(), 1),
            ("red".to_string(), 1)
        ]
    );
    q.tags.push(TagFilter {
        tag: "color".into(),
        values: vec!["red".into()],
    });
    assert_eq!(ids(&searched(store, index, &q).await), ["r1"]);

    // `due` is mapped onto the modified filter: r1 (Jan 1) and r2 (Jan 10) by their tag, r3 by its
    // real modification time (now).
    let mut q = query(ws, "");
    q.modified_to = Some(millis(2024, 1, 5));
    assert_eq!(ids(&searched(store, index, &q).await), ["r1"]);
    q.modified_to = None;
    q.modified_from = Some(millis(2024, 1, 5));
    assert_eq!(ids(&searched(store, index, &q).await), ["r2", "r3"]);
    q.modified_from = None;
    q.source_id = Some(source.id);
    q.object_type_id = Some(scope.object_type_id);
    assert_eq!(searched(store, index, &q).await.total, 3);
    q.source_id = Some(Uuid::new_v4());
    assert_eq!(searched(store, index, &q).await.total, 0);
}

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
}

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
    store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
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

/// Writes one `#[tokio::test]` per conformance case for a store. The search cases write to the
/// store and search through an index that follows its write log ([`crate::index::catch_up`]).
///
/// - `conformance_tests!(make, index)`: `make` is an async expression evaluating to `Arc<S>`
///   where `S` implements both store traits; it runs once per case. `index` is an expression
///   making an empty [`crate::index::SearchIndex`] (one per search case).
/// - `conformance_tests!(make, cleanup, index)`: `cleanup` is a closure taking that `Arc<S>`
///   and returning a future, run after a case passes (e.g. to drop the case's database).
/// - `conformance_tests!(optional make, cleanup, index)`: `make` yields `Option<Arc<S>>`;
///   `None` skips the case (for databases that are only sometimes configured).
#[macro_export]
macro_rules! conformance_tests {
    (optional $make:expr, $cleanup:expr, $index:expr) => {
        $crate::conformance_tests!(@all $make, $cleanup, $index);
    };
    ($make:expr, $index:expr) => {
        $crate::conformance_tests!($make, |_store| async {}, $index);
    };
    ($make:expr, $cleanup:expr, $index:expr) => {
        $crate::conformance_tests!(@all async { Some($make.await) }, $cleanup, $index);
    };
    (@all $make:expr, $cleanup:expr, $index:expr) => {
        $crate::conformance_tests!(@case $make, $cleanup, sources_roundtrip_within_their_workspace, ref);
        $crate::conformance_tests!(@case $make, $cleanup, sources_are_corrected_and_deleted, ref);
        $crate::conformance_tests!(@case $make, $cleanup, uploads_create_then_increment_versions, ref);
        $crate::conformance_tests!(@case $make, $cleanup, upload_outside_a_sync, ref);
        $crate::conformance_tests!(@case $make, $cleanup, writes_must_name_the_open_sync, ref);
        $crate::conformance_tests!(@case $make, $cleanup, writes_without_a_number_join_the_open_sync, ref);
        $crate::conformance_tests!(@case $make, $cleanup, stored_text_reads_back_identically, ref);
        $crate::conformance_tests!(@case $make, $cleanup, refused_input_is_invalid_on_every_store, ref);
        $crate::conformance_tests!(@case $make, $cleanup, touch_joins_the_sync_and_changes_nothing_else, ref);
        $crate::conformance_tests!(@case $make, $cleanup, close_complete_removes_untouched_records, ref);
        $crate::conformance_tests!(@case $make, $cleanup, fail_and_incremental_remove_nothing, ref);
        $crate::conformance_tests!(@case $make, $cleanup, sync_state_machine_misuse_conflicts, ref);
        $crate::conformance_tests!(@case $make, $cleanup, sync_counters_count_writes, ref);
        $crate::conformance_tests!(@case $make, $cleanup, delete_makes_a_revivable_tombstone, ref);
        $crate::conformance_tests!(@case $make, $cleanup, batches_answer_each_item_in_order, ref);
        $crate::conformance_tests!(@case $make, $cleanup, batch_sync_rules_apply_to_the_whole_batch, ref);
        $crate::conformance_tests!(@case $make, $cleanup, listing_pages_in_a_stable_order, ref);
        $crate::conformance_tests!(@case $make, $cleanup, mass_removal_guard_leaves_the_sync_open, ref);
        $crate::conformance_tests!(@case $make, $cleanup, change_feed_walks_a_snapshot_then_commit_order, ref);
        $crate::conformance_tests!(@case $make, $cleanup, change_feed_retention_makes_old_cursors_gone, ref);
        $crate::conformance_tests!(@case $make, $cleanup, webhooks_queue_claim_and_record_deliveries, ref);
        $crate::conformance_tests!(@case $make, $cleanup, concurrent_uploads_never_lose_a_version, arc);
        $crate::conformance_tests!(@case $make, $cleanup, two_syncs_never_open_at_once, arc);
        $crate::conformance_tests!(@case $make, $cleanup, complete_racing_uploads_keeps_their_records, arc);
        $crate::conformance_tests!(@case $make, $cleanup, identities_roundtrip, ref);
        $crate::conformance_tests!(@case $make, $cleanup, identities_by_id_and_token_revocation, ref);
        $crate::conformance_tests!(@case $make, $cleanup, oauth_clients_roundtrip, ref);
        $crate::conformance_tests!(@case $make, $cleanup, codes_redeem_exactly_once, store);
        $crate::conformance_tests!(@case $make, $cleanup, tokens_revoke_by_token_grant_and_client, ref);
        $crate::conformance_tests!(@case $make, $cleanup, disabling_oauth_revokes_the_workspace_grants, ref);
        $crate::conformance_tests!(@case $make, $cleanup, sessions_and_rate_windows, ref);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_finds_words_and_respects_liveness);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_ranks_and_pages);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_filters_and_facets);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_counts_and_ranks_every_match);
        $crate::conformance_tests!(@search $make, $cleanup, $index, folders_tree_and_counts);
        $crate::conformance_tests!(@case $make, $cleanup, write_log_replays_every_write, ref);
        $crate::conformance_tests!(@case $make, $cleanup, write_log_pages_in_position_order, ref);
    };
    (@search $make:expr, $cleanup:expr, $index:expr, $name:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let Some(store) = $make.await else {
                println!("skipped: store not configured");
                return;
            };
            let index = $index;
            $crate::testkit::$name(&*store, &index).await;
            ($cleanup)(store).await;
        }
    };
    (@case $make:expr, $cleanup:expr, $name:ident, ref) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let Some(store) = $make.await else {
                println!("skipped: store not configured");
                return;
            };
            $crate::testkit::$name(&*store).await;
            ($cleanup)(store).await;
        }
    };
    (@case $make:expr, $cleanup:expr, $name:ident, store) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let Some(store) = $make.await else {
                println!("skipped: store not configured");
                return;
            };
            let dyn_store: ::std::sync::Arc<dyn $crate::testkit::Store> = store.clone();
            $crate::testkit::$name(dyn_store).await;
            ($cleanup)(store).await;
        }
    };
    (@case $make:expr, $cleanup:expr, $name:ident, arc) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let Some(store) = $make.await else {
                println!("skipped: store not configured");
                return;
            };
            let dyn_store: ::std::sync::Arc<dyn $crate::RecordStore> = store.clone();
            $crate::testkit::$name(dyn_store).await;
            ($cleanup)(store).await;
        }
    };
}
