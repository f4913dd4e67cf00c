//! The backend conformance suite: every store runs these cases through the public traits.
//!
//! A store crate's test file calls [`conformance_tests!`](crate::conformance_tests) with an async
//! expression that yields a fresh `Arc` of the store (implementing both traits); the macro writes
//! one `#[tokio::test]` per case so failures are named by behaviour.

use uuid::Uuid;

use crate::{
    Error, RecordStore, TokenStore, WorkspaceId,
    record::{Extraction, RecordKey, RecordWrite, Scope, Touch},
    source::{
        CUSTOM, DataType, NewObjectType, NewSource, NewTagConfig, Source, SourceDataType, TagType,
    },
    sync::SyncEvent,
    tag::Tags,
    time,
};

mod access;
mod accounts;
mod batch;
mod blobs;
mod changes;
mod documents;
mod folders;
mod ingest;
mod input;
mod jobs;
mod log;
mod oauth;
mod records;
mod search;
mod sources;
mod syncs;
mod webhooks;

pub use access::*;
pub use accounts::*;
pub use batch::*;
pub use blobs::*;
pub use changes::*;
pub use documents::*;
pub use folders::*;
pub use ingest::*;
pub use input::*;
pub use jobs::*;
pub use log::*;
pub use oauth::*;
pub use records::*;
pub use search::*;
pub use sources::*;
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
            default_access: Default::default(),
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
            version: None,
            chars: 10,
            truncated: false,
            failure: None,
            metadata: None,
        },
        modified_by: "tester@example.test".into(),
        access: None,
        original: None,
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
        $crate::conformance_tests!(@case $make, $cleanup, webhook_claims_are_fair_and_done_deliveries_expire, ref);
        $crate::conformance_tests!(@case $make, $cleanup, member_webhooks_hear_only_what_the_member_may_read, ref);
        $crate::conformance_tests!(@case $make, $cleanup, concurrent_uploads_never_lose_a_version, arc);
        $crate::conformance_tests!(@case $make, $cleanup, two_syncs_never_open_at_once, arc);
        $crate::conformance_tests!(@case $make, $cleanup, complete_racing_uploads_keeps_their_records, arc);
        $crate::conformance_tests!(@case $make, $cleanup, access_lists_roundtrip_and_are_logged, ref);
        $crate::conformance_tests!(@case $make, $cleanup, groups_mirror_and_expand, ref);
        $crate::conformance_tests!(@case $make, $cleanup, listings_keep_what_a_reader_may_read, ref);
        $crate::conformance_tests!(@case $make, $cleanup, originals_are_swept_once_nothing_names_them, ref);
        $crate::conformance_tests!(@case $make, $cleanup, documents_are_written_all_or_nothing, ref);
        $crate::conformance_tests!(@case $make, $cleanup, jobs_are_written_compare_and_set, ref);
        $crate::conformance_tests!(@case $make, $cleanup, reextraction_jobs_resume_and_can_be_cancelled, ref);
        $crate::conformance_tests!(@case $make, $cleanup, rereads_never_overwrite_a_newer_upload, ref);
        $crate::conformance_tests!(@case $make, $cleanup, identities_roundtrip, ref);
        $crate::conformance_tests!(@case $make, $cleanup, deployment_keys_are_stored_once, ref);
        $crate::conformance_tests!(@case $make, $cleanup, passwords_are_reset_by_user, ref);
        $crate::conformance_tests!(@case $make, $cleanup, identities_by_id_and_token_revocation, ref);
        $crate::conformance_tests!(@case $make, $cleanup, oauth_clients_roundtrip, ref);
        $crate::conformance_tests!(@case $make, $cleanup, codes_redeem_exactly_once, store);
        $crate::conformance_tests!(@case $make, $cleanup, revocations_race_without_failing, store);
        $crate::conformance_tests!(@case $make, $cleanup, tokens_revoke_by_token_grant_and_client, ref);
        $crate::conformance_tests!(@case $make, $cleanup, disabling_oauth_revokes_the_workspace_grants, ref);
        $crate::conformance_tests!(@case $make, $cleanup, sessions_and_rate_windows, ref);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_finds_words_and_respects_liveness);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_ranks_and_pages);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_filters_and_facets);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_counts_and_ranks_every_match);
        $crate::conformance_tests!(@search $make, $cleanup, $index, folders_tree_and_counts);
        $crate::conformance_tests!(@search $make, $cleanup, $index, search_requests_are_checked_and_built);
        $crate::conformance_tests!(@case $make, $cleanup, write_log_replays_every_write, ref);
        $crate::conformance_tests!(@case $make, $cleanup, write_log_pages_in_position_order, ref);
        $crate::conformance_tests!(@case $make, $cleanup, a_backlog_is_applied_in_commits_of_several_pages, ref);
        $crate::conformance_tests!(@case $make, $cleanup, ingest_write_rules_table, ref);
        $crate::conformance_tests!(@case $make, $cleanup, ingest_checksum_skip_table, ref);
        $crate::conformance_tests!(@case $make, $cleanup, ingest_removal_guard_table, ref);
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
