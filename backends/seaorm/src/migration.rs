//! Versioned schema migrations. One SQL text serves both databases: ids are TEXT (hyphenated
//! UUIDs), timestamps BIGINT milliseconds since the epoch, structured values JSON in TEXT.

mod accounts;
mod documents;
mod more_documents;

use accounts::M0022Accounts;
use documents::M0021Documents;
use more_documents::{M0023MoreDocuments, M0024GroupsAsDocuments};
use sea_orm_migration::{
    MigrationTrait, MigratorTrait, SchemaManager, async_trait,
    prelude::{ConnectionTrait, DbErr},
};

/// All migrations, oldest first.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(M0001Initial),
            Box::new(M0002OAuth),
            Box::new(M0003Search),
            Box::new(M0004SearchWindow),
            Box::new(M0005SearchInline),
            Box::new(M0006SearchWords),
            Box::new(M0007SourceExternalIds),
            Box::new(M0008WriteLog),
            Box::new(M0009FileNames),
            Box::new(M0010DropSqlSearch),
            Box::new(M0011RateLimitExpiry),
            Box::new(M0012ChangeFeed),
            Box::new(M0013Webhooks),
            Box::new(M0014HotTouches),
            Box::new(M0015DeploymentKeys),
            Box::new(M0016Access),
            Box::new(M0017WebhookOwners),
            Box::new(M0018Originals),
            Box::new(M0019Jobs),
            Box::new(M0020CopyMarks),
            Box::new(M0021Documents),
            Box::new(M0022Accounts),
            Box::new(M0023MoreDocuments),
            Box::new(M0024GroupsAsDocuments),
        ]
    }
}

/// Versions an earlier commit of main recorded under another name, with the name the same
/// change has now: the first m0023 also moved the access groups, which m0024 does today (it
/// finds their tables gone and does nothing).
const RENAMED: &[(&str, &str)] = &[(
    "m0023_folders_groups_webhooks_as_documents",
    "m0023_folders_webhooks_as_documents",
)];

/// Brings the schema up to date: renames the versions in [`RENAMED`], then applies every
/// migration not yet applied.
pub async fn up(db: &sea_orm::DatabaseConnection) -> Result<(), DbErr> {
    if SchemaManager::new(db).has_table("seaql_migrations").await? {
        for (old, new) in RENAMED {
            db.execute_raw(crate::stmt(
                db.get_database_backend(),
                "UPDATE seaql_migrations SET version = $1 WHERE version = $2",
                vec![(*new).into(), (*old).into()],
            ))
            .await?;
        }
    }
    Migrator::up(db, None).await
}

/// PostgreSQL: the first character of the scope tokens m0005 and m0006 wrote beside the words
/// (the full-text tables they made are dropped by m0010).
const PG_TOKEN_MARK: char = '#';

/// Sources, object types, sync runs, records, workspaces, users and API tokens.
struct M0001Initial;

impl sea_orm_migration::MigrationName for M0001Initial {
    fn name(&self) -> &str {
        "m0001_initial"
    }
}

const M0001_UP: &[&str] = &[
    "CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        oauth_enabled BOOLEAN NOT NULL,
        created_date BIGINT NOT NULL)",
    "CREATE TABLE users (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        email TEXT NOT NULL,
        email_key TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_date BIGINT NOT NULL)",
    "CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id),
        token_hash TEXT NOT NULL UNIQUE,
        created_date BIGINT NOT NULL)",
    "CREATE TABLE sources (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL)",
    "CREATE INDEX sources_workspace ON sources (workspace_id, seq)",
    "CREATE TABLE object_types (
        id TEXT PRIMARY KEY,
        source_id TEXT NOT NULL REFERENCES sources(id),
        workspace_id TEXT NOT NULL,
        name TEXT NOT NULL,
        current_sync BIGINT NOT NULL DEFAULT 0,
        open_sync BIGINT,
        complete_floor BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE sync_runs (
        object_type_id TEXT NOT NULL REFERENCES object_types(id),
        sync_number BIGINT NOT NULL,
        operation TEXT NOT NULL,
        state TEXT NOT NULL,
        close_operation TEXT,
        started_at BIGINT NOT NULL,
        closed_at BIGINT,
        removed BIGINT NOT NULL DEFAULT 0,
        kept BIGINT,
        PRIMARY KEY (object_type_id, sync_number))",
    // Write counters are spread over shards so concurrent writers of one sync do not queue on one
    // row; a sync's counters are the sums.
    "CREATE TABLE sync_counters (
        object_type_id TEXT NOT NULL,
        sync_number BIGINT NOT NULL,
        shard INTEGER NOT NULL,
        uploaded BIGINT NOT NULL,
        touched BIGINT NOT NULL,
        unchanged BIGINT NOT NULL,
        extraction_failures BIGINT NOT NULL,
        PRIMARY KEY (object_type_id, sync_number, shard))",
    "CREATE TABLE records (
        id TEXT PRIMARY KEY,
        object_type_id TEXT NOT NULL REFERENCES object_types(id),
        external_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        title TEXT NOT NULL,
        url TEXT,
        content TEXT NOT NULL,
        tags TEXT NOT NULL,
        external_checksum TEXT,
        created_date BIGINT NOT NULL,
        modified_date BIGINT NOT NULL,
        modified_by TEXT NOT NULL,
        sync_number BIGINT NOT NULL,
        removed BOOLEAN NOT NULL,
        extraction TEXT NOT NULL,
        UNIQUE (object_type_id, external_id))",
    "CREATE INDEX records_live_by_sync ON records (object_type_id, sync_number) WHERE NOT removed",
];

#[async_trait::async_trait]
impl MigrationTrait for M0001Initial {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0001_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// OAuth clients and logos, authorization codes, issued tokens, login sessions and rate-limit
/// windows.
struct M0002OAuth;

impl sea_orm_migration::MigrationName for M0002OAuth {
    fn name(&self) -> &str {
        "m0002_oauth"
    }
}

const M0002_UP: &[&str] = &[
    "CREATE TABLE oauth_clients (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        created_date BIGINT NOT NULL,
        body TEXT NOT NULL)",
    "CREATE INDEX oauth_clients_workspace ON oauth_clients (workspace_id, created_date)",
    // Logos are small (capped by the server) and stored base64 in TEXT: one type on both
    // databases.
    "CREATE TABLE oauth_logos (
        client_id TEXT PRIMARY KEY,
        content_type TEXT NOT NULL,
        data TEXT NOT NULL)",
    "CREATE TABLE oauth_codes (
        code_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        used BOOLEAN NOT NULL,
        expires_at BIGINT NOT NULL,
        body TEXT NOT NULL)",
    "CREATE INDEX oauth_codes_client ON oauth_codes (client_id)",
    "CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at)",
    "CREATE TABLE oauth_tokens (
        token_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        grant_id TEXT NOT NULL,
        expires_at BIGINT,
        body TEXT NOT NULL)",
    "CREATE INDEX oauth_tokens_client ON oauth_tokens (client_id)",
    "CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id)",
    "CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at)",
    "CREATE TABLE oauth_sessions (
        id_hash TEXT PRIMARY KEY,
        expires_at BIGINT NOT NULL,
        body TEXT NOT NULL)",
    "CREATE INDEX oauth_sessions_expiry ON oauth_sessions (expires_at)",
    "CREATE TABLE rate_limits (
        rate_key TEXT PRIMARY KEY,
        window_start BIGINT NOT NULL,
        hits BIGINT NOT NULL)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0002OAuth {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0002_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// Search: the tag index (`record_tags`), the full-text index (SQLite FTS5 `records_fts`,
/// PostgreSQL `record_search` with a GIN index; dropped by m0010) and HIERARCHICAL folders.
struct M0003Search;

impl sea_orm_migration::MigrationName for M0003Search {
    fn name(&self) -> &str {
        "m0003_search"
    }
}

const M0003_COMMON: &[&str] = &[
    "CREATE TABLE record_tags (
        record_id TEXT NOT NULL,
        tag TEXT NOT NULL,
        value TEXT NOT NULL,
        num BIGINT)",
    // Covering for the facet join (record → its tag values) and the per-record lookups.
    "CREATE INDEX record_tags_record ON record_tags (record_id, tag, value, num)",
    "CREATE INDEX record_tags_tag_value ON record_tags (tag, value)",
    "CREATE TABLE folders (
        source_id TEXT NOT NULL,
        tag TEXT NOT NULL,
        external_id TEXT NOT NULL,
        name TEXT NOT NULL,
        parent_external_id TEXT,
        PRIMARY KEY (source_id, tag, external_id))",
];

const M0003_SQLITE: &[&str] = &[
    // The body was normalized text (words separated by spaces); unicode61 split it on them.
    "CREATE VIRTUAL TABLE records_fts USING fts5(record_id UNINDEXED, body, tokenize = 'unicode61')",
];

const M0003_POSTGRES: &[&str] = &[
    "CREATE TABLE record_search (
        record_id TEXT PRIMARY KEY,
        vector TSVECTOR NOT NULL)",
    "CREATE INDEX record_search_vector ON record_search USING GIN (vector)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0003Search {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let dialect = match db.get_database_backend() {
            sea_orm::DbBackend::Postgres => M0003_POSTGRES,
            _ => M0003_SQLITE,
        };
        for sql in M0003_COMMON.iter().chain(dialect) {
            db.execute_unprepared(sql).await?;
        }
        // Filled by m0004, whose index this one's statements no longer write.
        Ok(())
    }
}

/// The search window (`SearchQuery::cap`): index entries carry a write sequence (newest
/// first) and tokens for the record's workspace, source, object type and tag values, so the
/// full-text index alone finds a query's matches in the order the window takes them. (Its
/// backfill went with the SQL search: m0010 drops these tables and writes the tag rows.)
struct M0004SearchWindow;

impl sea_orm_migration::MigrationName for M0004SearchWindow {
    fn name(&self) -> &str {
        "m0004_search_window"
    }
}

const M0004_SQLITE: &[&str] = &[
    "ALTER TABLE records ADD COLUMN search_doc INTEGER",
    "DROP TABLE records_fts",
    "CREATE VIRTUAL TABLE records_fts USING fts5(record_id UNINDEXED, body, meta, \
     tokenize = 'unicode61')",
    "DELETE FROM record_tags",
];

const M0004_POSTGRES: &[&str] = &[
    "CREATE SEQUENCE record_search_doc",
    "DELETE FROM record_search",
    "DELETE FROM record_tags",
    // Defaults keep an older replica's inserts working while it drains (its entries lack the
    // tokens until the record is written again; docs/operators.md asks for a stop-start).
    "ALTER TABLE record_search ADD COLUMN meta TSVECTOR NOT NULL DEFAULT ''",
    "ALTER TABLE record_search ADD COLUMN doc BIGINT NOT NULL DEFAULT nextval('record_search_doc')",
    "CREATE INDEX record_search_meta ON record_search USING GIN (meta)",
    "CREATE INDEX record_search_by_doc ON record_search (doc)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0004SearchWindow {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let dialect = match db.get_database_backend() {
            sea_orm::DbBackend::Postgres => M0004_POSTGRES,
            _ => M0004_SQLITE,
        };
        for sql in dialect {
            db.execute_unprepared(sql).await?;
        }
        // Its entries were written by a backfill until m0010 dropped the full-text index;
        // m0010 writes the tag rows cleared here.
        Ok(())
    }
}

/// PostgreSQL: the words move out of `record_search` into `record_words`, stored in the row
/// (`STORAGE MAIN`) rather than in TOAST, so testing or ranking a candidate reads one page
/// instead of four to five; the vector also holds the record's scope tokens (marked with
/// [`PG_TOKEN_MARK`]) and its write sequence, so a query without tag filters
/// reads `record_words` alone. `record_search` keeps the narrow part (tokens and write
/// sequence), which tag filters and browsing scan. Both are rewritten in write order, which
/// keeps newest-first scans sequential; live records without an entry are then indexed.
/// SQLite: no change.
struct M0005SearchInline;

impl sea_orm_migration::MigrationName for M0005SearchInline {
    fn name(&self) -> &str {
        "m0005_search_inline"
    }
}

fn m0005_postgres() -> Vec<String> {
    let mark = PG_TOKEN_MARK;
    vec![
        "CREATE TABLE record_words (
            record_id TEXT PRIMARY KEY,
            vector TSVECTOR NOT NULL,
            doc BIGINT NOT NULL)"
            .into(),
        "ALTER TABLE record_words ALTER COLUMN vector SET STORAGE MAIN".into(),
        // Scope tokens are `w`, `s` and `o` followed by hex; tag tokens start with `t`.
        format!(
            "INSERT INTO record_words (record_id, vector, doc) \
             SELECT record_id, vector || array_to_tsvector(ARRAY(\
             SELECT '{mark}' || m.lexeme FROM unnest(meta) m WHERE m.lexeme ~ '^[wso]')), doc \
             FROM record_search ORDER BY doc"
        ),
        "CREATE TABLE record_search_narrow (
            record_id TEXT PRIMARY KEY,
            meta TSVECTOR NOT NULL,
            doc BIGINT NOT NULL DEFAULT nextval('record_search_doc'))"
            .into(),
        "INSERT INTO record_search_narrow (record_id, meta, doc) \
         SELECT record_id, meta, doc FROM record_search ORDER BY doc"
            .into(),
        "DROP TABLE record_search".into(),
        "ALTER TABLE record_search_narrow RENAME TO record_search".into(),
        "ALTER INDEX record_search_narrow_pkey RENAME TO record_search_pkey".into(),
        "CREATE INDEX record_search_meta ON record_search USING GIN (meta)".into(),
        // One entry and one words row per write sequence: the two join on it.
        "CREATE UNIQUE INDEX record_search_by_doc ON record_search (doc)".into(),
        "CREATE INDEX record_words_vector ON record_words USING GIN (vector)".into(),
        "CREATE UNIQUE INDEX record_words_by_doc ON record_words (doc)".into(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for M0005SearchInline {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() != sea_orm::DbBackend::Postgres {
            return Ok(());
        }
        for sql in m0005_postgres() {
            db.execute_unprepared(&sql).await?;
        }
        // The backfill writes the current layout, m0006's: it runs there.
        Ok(())
    }
}

/// PostgreSQL: word lookups read narrow rows. `record_search` gains `words`, the record's words
/// without positions plus all its tokens (scope and tags) marked with
/// [`PG_TOKEN_MARK`], stored out of the row (`STORAGE EXTERNAL`) and indexed by
/// GIN; the GIN index on `record_words` goes. A rare word's matches are then found and ordered
/// by reading `record_search` rows (~70 bytes each) instead of `record_words` rows (3–4 KB
/// each); a bitmap scan of an AND query never rechecks, so it never reads the out-of-row value.
/// `record_words` keeps the positioned words in the row for newest-first scans, phrases and
/// ranking. SQLite: no change. (m0010 drops these tables.)
struct M0006SearchWords;

impl sea_orm_migration::MigrationName for M0006SearchWords {
    fn name(&self) -> &str {
        "m0006_search_words"
    }
}

fn m0006_postgres() -> Vec<String> {
    let mark = PG_TOKEN_MARK;
    vec![
        // A new table written in write order rather than an UPDATE in place, which would leave
        // a dead version of every entry until vacuumed, in the way of newest-first scans.
        "CREATE TABLE record_search_words (
            record_id TEXT PRIMARY KEY,
            meta TSVECTOR NOT NULL,
            words TSVECTOR NOT NULL,
            doc BIGINT NOT NULL DEFAULT nextval('record_search_doc'))"
            .into(),
        "ALTER TABLE record_search_words ALTER COLUMN words SET STORAGE EXTERNAL".into(),
        // record_words.vector already holds the marked scope tokens; the tag tokens come from
        // `meta` (which holds every token unmarked). An entry without words (there should be
        // none) is left out.
        format!(
            "INSERT INTO record_search_words (record_id, meta, words, doc) \
             SELECT s.record_id, s.meta, strip(w.vector || array_to_tsvector(ARRAY(\
             SELECT '{mark}' || m.lexeme FROM unnest(s.meta) m))), s.doc \
             FROM record_search s JOIN record_words w ON w.doc = s.doc ORDER BY s.doc"
        ),
        "DROP TABLE record_search".into(),
        "ALTER TABLE record_search_words RENAME TO record_search".into(),
        "ALTER INDEX record_search_words_pkey RENAME TO record_search_pkey".into(),
        "CREATE INDEX record_search_meta ON record_search USING GIN (meta)".into(),
        "CREATE UNIQUE INDEX record_search_by_doc ON record_search (doc)".into(),
        "DROP INDEX record_words_vector".into(),
        "CREATE INDEX record_search_words ON record_search USING GIN (words)".into(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for M0006SearchWords {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() != sea_orm::DbBackend::Postgres {
            return Ok(());
        }
        for sql in m0006_postgres() {
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }
}

/// A source's externalId is unique in its workspace: `sources.external_id` with a unique index.
/// Databases from before may hold duplicates; the oldest source of each externalId takes it, the
/// others keep NULL (they stay readable, and can be renamed or deleted).
struct M0007SourceExternalIds;

impl sea_orm_migration::MigrationName for M0007SourceExternalIds {
    fn name(&self) -> &str {
        "m0007_source_external_ids"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0007SourceExternalIds {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let external_id = match db.get_database_backend() {
            sea_orm::DbBackend::Postgres => "(body::json ->> 'externalId')",
            _ => "json_extract(body, '$.externalId')",
        };
        for sql in [
            "ALTER TABLE sources ADD COLUMN external_id TEXT".to_string(),
            format!(
                "UPDATE sources SET external_id = {external_id} WHERE NOT EXISTS (\
                 SELECT 1 FROM sources o WHERE o.workspace_id = sources.workspace_id \
                 AND {other} = {external_id} \
                 AND (o.seq < sources.seq OR (o.seq = sources.seq AND o.id < sources.id)))",
                other = external_id.replace("body", "o.body"),
            ),
            "CREATE UNIQUE INDEX sources_external_id ON sources (workspace_id, external_id)"
                .to_string(),
        ] {
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }
}

/// The write log the search index follows (`inlet_core::index`): each record carries the
/// position of its last logged write (`records.change_pos`, 0 for records written before this
/// migration, which an index build reads by scanning), `change_head` hands out positions in
/// commit order, and `change_log` holds the entries that are not one record's (a COMPLETE
/// close, a deleted source).
struct M0008WriteLog;

impl sea_orm_migration::MigrationName for M0008WriteLog {
    fn name(&self) -> &str {
        "m0008_write_log"
    }
}

const M0008_UP: &[&str] = &[
    "ALTER TABLE records ADD COLUMN change_pos BIGINT NOT NULL DEFAULT 0",
    "CREATE INDEX records_change_pos ON records (change_pos)",
    "CREATE TABLE change_head (id INTEGER PRIMARY KEY, pos BIGINT NOT NULL)",
    "INSERT INTO change_head (id, pos) VALUES (1, 0)",
    "CREATE TABLE change_log (
        pos BIGINT PRIMARY KEY,
        kind TEXT NOT NULL,
        object_type_id TEXT,
        source_id TEXT,
        from_sync BIGINT,
        to_sync BIGINT)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0008WriteLog {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0008_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// The file name as uploaded (`records.file_name`), searched with the title: the title's
/// normalization keeps ASCII only. Records from before have none (their title still matches).
struct M0009FileNames;

impl sea_orm_migration::MigrationName for M0009FileNames {
    fn name(&self) -> &str {
        "m0009_file_names"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0009FileNames {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE records ADD COLUMN file_name TEXT")
            .await?;
        Ok(())
    }
}

/// Search moved to the search index (`inlet_core::index`), which every store's write log feeds:
/// the SQL full-text tables go (SQLite `records_fts` and `records.search_doc`; PostgreSQL
/// `record_search`, `record_words` and their sequence). `record_tags` stays: it counts the
/// records of each folder. Live records without tag rows (m0004 cleared them for a backfill
/// that wrote the full-text index too) get them here.
struct M0010DropSqlSearch;

impl sea_orm_migration::MigrationName for M0010DropSqlSearch {
    fn name(&self) -> &str {
        "m0010_drop_sql_search"
    }
}

const M0010_SQLITE: &[&str] = &[
    "DROP TABLE IF EXISTS records_fts",
    "ALTER TABLE records DROP COLUMN search_doc",
];

const M0010_POSTGRES: &[&str] = &[
    "DROP TABLE IF EXISTS record_words",
    "DROP TABLE IF EXISTS record_search",
    "DROP SEQUENCE IF EXISTS record_search_doc",
];

#[async_trait::async_trait]
impl MigrationTrait for M0010DropSqlSearch {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let dialect = match db.get_database_backend() {
            sea_orm::DbBackend::Postgres => M0010_POSTGRES,
            _ => M0010_SQLITE,
        };
        for sql in dialect {
            db.execute_unprepared(sql).await?;
        }
        crate::folders::backfill_tag_rows(db).await
    }
}

/// Rate-limit counters expire: an index on `rate_limits.window_start` lets each failure remove
/// the counters whose window ended more than a day before (`inlet_core::token::RATE_RETENTION_MS`).
struct M0011RateLimitExpiry;

impl sea_orm_migration::MigrationName for M0011RateLimitExpiry {
    fn name(&self) -> &str {
        "m0011_rate_limit_expiry"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0011RateLimitExpiry {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("CREATE INDEX rate_limits_window ON rate_limits (window_start)")
            .await?;
        Ok(())
    }
}

/// The change feed reads one workspace's log and purges what is past the retention:
/// `change_log` rows gain their workspace (and closes their source) and the time they were
/// logged, and `change_head.floor` holds the last position purged. Rows from before are dated
/// now, so they stay for one retention.
struct M0012ChangeFeed;

impl sea_orm_migration::MigrationName for M0012ChangeFeed {
    fn name(&self) -> &str {
        "m0012_change_feed"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0012ChangeFeed {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let now = chrono::Utc::now().timestamp_millis();
        for sql in [
            "ALTER TABLE change_log ADD COLUMN workspace_id TEXT".to_string(),
            "ALTER TABLE change_log ADD COLUMN created_ms BIGINT NOT NULL DEFAULT 0".to_string(),
            format!("UPDATE change_log SET created_ms = {now}"),
            "UPDATE change_log SET \
             workspace_id = (SELECT o.workspace_id FROM object_types o \
                 WHERE o.id = change_log.object_type_id), \
             source_id = (SELECT o.source_id FROM object_types o \
                 WHERE o.id = change_log.object_type_id) \
             WHERE kind = 'closed'"
                .to_string(),
            "CREATE INDEX change_log_created ON change_log (created_ms)".to_string(),
            "ALTER TABLE change_head ADD COLUMN floor BIGINT NOT NULL DEFAULT 0".to_string(),
        ] {
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }
}

/// Webhooks and their delivery queue (`inlet_core::webhook`): deliveries wait in the database,
/// so they survive a restart; `next_attempt_ms` orders the due ones.
struct M0013Webhooks;

impl sea_orm_migration::MigrationName for M0013Webhooks {
    fn name(&self) -> &str {
        "m0013_webhooks"
    }
}

const M0013_UP: &[&str] = &[
    "CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secret TEXT NOT NULL,
        created_ms BIGINT NOT NULL)",
    "CREATE INDEX webhooks_workspace ON webhooks (workspace_id, created_ms)",
    "CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        attempts BIGINT NOT NULL,
        state TEXT NOT NULL,
        next_attempt_ms BIGINT,
        last_attempt_ms BIGINT,
        last_status BIGINT,
        last_error TEXT)",
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_ms)",
    "CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, created_ms)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0013Webhooks {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0013_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// Touches stop moving index entries: `records_live_by_sync` indexed the column every touch
/// writes, so each touch of a sync rewrote an index entry (and on PostgreSQL could never be a
/// HOT update, leaving a dead row version in every index per touch). Closes count and expand
/// their removals by scanning the object type's rows instead, once per close. On PostgreSQL the
/// table also keeps free room in each page (fillfactor 70) so a touch's new row version can stay
/// on its page.
struct M0014HotTouches;

impl sea_orm_migration::MigrationName for M0014HotTouches {
    fn name(&self) -> &str {
        "m0014_hot_touches"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0014HotTouches {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX IF EXISTS records_live_by_sync")
            .await?;
        if db.get_database_backend() == sea_orm::DbBackend::Postgres {
            db.execute_unprepared("ALTER TABLE records SET (fillfactor = 70)")
                .await?;
        }
        Ok(())
    }
}

/// The deployment's secret keys (`Accounts::deployment_key`), shared by every replica: the
/// change feed encrypts its cursors with one.
struct M0015DeploymentKeys;

impl sea_orm_migration::MigrationName for M0015DeploymentKeys {
    fn name(&self) -> &str {
        "m0015_deployment_keys"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0015DeploymentKeys {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE TABLE deployment_keys (name TEXT PRIMARY KEY, secret TEXT NOT NULL)",
            )
            .await?;
        Ok(())
    }
}

/// Access lists on records (`access`, JSON; NULL follows the object type's default, which
/// is what every record written before it gets: readable by everyone) and the groups sources
/// mirror, with one row per (group, member term) for expanding a reader's groups.
struct M0016Access;

impl sea_orm_migration::MigrationName for M0016Access {
    fn name(&self) -> &str {
        "m0016_access"
    }
}

const M0016_UP: &[&str] = &[
    "ALTER TABLE records ADD COLUMN access TEXT",
    "CREATE TABLE access_groups (
        source_id TEXT NOT NULL,
        external_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        members TEXT NOT NULL,
        PRIMARY KEY (source_id, external_id))",
    "CREATE TABLE access_group_members (
        workspace_id TEXT NOT NULL,
        member TEXT NOT NULL,
        source_id TEXT NOT NULL,
        group_id TEXT NOT NULL,
        PRIMARY KEY (workspace_id, member, source_id, group_id))",
    "CREATE INDEX access_group_members_group ON access_group_members (source_id, group_id)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0016Access {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0016_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// The member who registered a webhook (`owner_id`; NULL for an administrator's, which every
/// webhook written before it was).
struct M0017WebhookOwners;

impl sea_orm_migration::MigrationName for M0017WebhookOwners {
    fn name(&self) -> &str {
        "m0017_webhook_owners"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0017WebhookOwners {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE webhooks ADD COLUMN owner_id TEXT")
            .await?;
        Ok(())
    }
}

/// The original a record names in the blob store (`original_sha256`, `original_size`; NULL for
/// records stored before originals were kept), indexed for the sweep's look-ups.
struct M0018Originals;

impl sea_orm_migration::MigrationName for M0018Originals {
    fn name(&self) -> &str {
        "m0018_originals"
    }
}

const M0018_UP: &[&str] = &[
    "ALTER TABLE records ADD COLUMN original_sha256 TEXT",
    "ALTER TABLE records ADD COLUMN original_size BIGINT",
    "CREATE INDEX records_original ON records (original_sha256)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0018Originals {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0018_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// m0019: background jobs' state ([`inlet_core::store::Jobs`]).
struct M0019Jobs;

impl sea_orm_migration::MigrationName for M0019Jobs {
    fn name(&self) -> &str {
        "m0019_jobs"
    }
}

const M0019_UP: &[&str] = &[
    "CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, workspace_id TEXT, \
     created_ms BIGINT NOT NULL, finished BOOLEAN NOT NULL, body TEXT NOT NULL, \
     revision BIGINT NOT NULL)",
    "CREATE INDEX jobs_open ON jobs (kind, finished, created_ms)",
];

#[async_trait::async_trait]
impl MigrationTrait for M0019Jobs {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for sql in M0019_UP {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// m0020: the mark an unfinished copy leaves in its target (`crate::copy`).
struct M0020CopyMarks;

impl sea_orm_migration::MigrationName for M0020CopyMarks {
    fn name(&self) -> &str {
        "m0020_copy_marks"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0020CopyMarks {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE TABLE copy_marks (id INTEGER PRIMARY KEY, source TEXT NOT NULL, \
                 started_ms BIGINT NOT NULL)",
            )
            .await?;
        Ok(())
    }
}
