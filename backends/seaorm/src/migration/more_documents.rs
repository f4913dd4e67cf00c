//! m0023: folders (m0003) and webhook registrations (m0013, m0017) move into `documents` as
//! core keeps them ([`inlet_core::store::Folders`], [`inlet_core::webhook::WebhookStore`]):
//! each row is read as the type it stored, core's own functions say which documents hold it,
//! and the tables are dropped. (The delivery queue stays a table.) m0024 moves the access
//! groups (m0016) the same way ([`inlet_core::store::Groups`]).

use inlet_core::{
    access::{Group, Member},
    folder::Folder,
    store::{folders, groups, webhooks},
    webhook::{Event, Webhook},
};
use sea_orm_migration::{
    MigrationTrait, SchemaManager, async_trait,
    prelude::{ConnectionTrait, DbErr},
    sea_orm::{QueryResult, Value},
};

use super::documents::{bad, col, insert_puts};

/// The migration.
pub struct M0023MoreDocuments;

impl sea_orm_migration::MigrationName for M0023MoreDocuments {
    fn name(&self) -> &str {
        "m0023_folders_webhooks_as_documents"
    }
}

/// Rows read at once.
const PAGE: i64 = 500;

fn id(row: &QueryResult, c: &str) -> Result<uuid::Uuid, DbErr> {
    uuid::Uuid::parse_str(&col::<String>(row, c)?).map_err(bad)
}

/// A page of `sql` (ordered by its key, `$1` the page size, `$2`.. the last key read).
async fn page(
    db: &impl ConnectionTrait,
    sql: &str,
    after: Vec<Value>,
) -> Result<Vec<QueryResult>, DbErr> {
    let mut values: Vec<Value> = vec![PAGE.into()];
    values.extend(after);
    db.query_all_raw(crate::stmt(db.get_database_backend(), sql, values))
        .await
}

async fn move_folders(db: &impl ConnectionTrait) -> Result<(), DbErr> {
    let mut after: Option<(String, String, String)> = None;
    loop {
        let (sql, values) = match &after {
            None => (
                "SELECT source_id, tag, external_id, name, parent_external_id FROM folders \
                 ORDER BY source_id, tag, external_id LIMIT $1",
                vec![],
            ),
            Some((s, t, e)) => (
                "SELECT source_id, tag, external_id, name, parent_external_id FROM folders \
                 WHERE (source_id > $2) OR (source_id = $2 AND tag > $3) \
                 OR (source_id = $2 AND tag = $3 AND external_id > $4) \
                 ORDER BY source_id, tag, external_id LIMIT $1",
                vec![s.clone().into(), t.clone().into(), e.clone().into()],
            ),
        };
        let rows = page(db, sql, values).await?;
        for r in &rows {
            let folder = Folder {
                external_id: col(r, "external_id")?,
                name: col(r, "name")?,
                parent_external_id: col(r, "parent_external_id")?,
            };
            let tag: String = col(r, "tag")?;
            let writes = folders::folder_writes(id(r, "source_id")?, &tag, &folder, 0);
            insert_puts(db, writes.map_err(bad)?).await?;
        }
        match rows.last() {
            Some(r) if rows.len() as i64 == PAGE => {
                after = Some((col(r, "source_id")?, col(r, "tag")?, col(r, "external_id")?));
            }
            _ => return Ok(()),
        }
    }
}

async fn move_webhooks(db: &impl ConnectionTrait) -> Result<(), DbErr> {
    let sql = "SELECT id, workspace_id, url, events, secret, created_ms, owner_id FROM webhooks";
    let rows = db
        .query_all_raw(crate::stmt(db.get_database_backend(), sql, vec![]))
        .await?;
    for r in &rows {
        let events: Vec<Event> = serde_json::from_str(&col::<String>(r, "events")?).map_err(bad)?;
        let ms: i64 = col(r, "created_ms")?;
        let owner: Option<String> = col(r, "owner_id")?;
        let hook = Webhook {
            id: id(r, "id")?,
            workspace_id: id(r, "workspace_id")?,
            url: col(r, "url")?,
            events,
            secret: col(r, "secret")?,
            created_date: chrono::DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| bad(format!("time {ms}")))?,
            owner: owner
                .map(|o| uuid::Uuid::parse_str(&o).map_err(bad))
                .transpose()?,
        };
        insert_puts(db, webhooks::webhook_writes(&hook, 0).map_err(bad)?).await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for M0023MoreDocuments {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        move_folders(db).await?;
        move_webhooks(db).await?;
        for table in ["folders", "webhooks"] {
            db.execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        Ok(())
    }
}

/// m0024: access groups (m0016) move into `documents`, each group with its member index
/// ([`groups::group_writes`]), and their tables are dropped. A database that has no
/// `access_groups` table already keeps its groups as documents (an earlier m0023 moved them).
pub struct M0024GroupsAsDocuments;

impl sea_orm_migration::MigrationName for M0024GroupsAsDocuments {
    fn name(&self) -> &str {
        "m0024_groups_as_documents"
    }
}

async fn move_groups(db: &impl ConnectionTrait) -> Result<(), DbErr> {
    let mut after: Option<(String, String)> = None;
    loop {
        let (sql, values) = match &after {
            None => (
                "SELECT source_id, external_id, workspace_id, members FROM access_groups \
                 ORDER BY source_id, external_id LIMIT $1",
                vec![],
            ),
            Some((s, e)) => (
                "SELECT source_id, external_id, workspace_id, members FROM access_groups \
                 WHERE (source_id > $2) OR (source_id = $2 AND external_id > $3) \
                 ORDER BY source_id, external_id LIMIT $1",
                vec![s.clone().into(), e.clone().into()],
            ),
        };
        let rows = page(db, sql, values).await?;
        for r in &rows {
            let members: Vec<Member> =
                serde_json::from_str(&col::<String>(r, "members")?).map_err(bad)?;
            let group = Group {
                source_id: id(r, "source_id")?,
                external_id: col(r, "external_id")?,
                members,
            };
            let writes = groups::group_writes(id(r, "workspace_id")?, &group, None, 0);
            insert_puts(db, writes.map_err(bad)?).await?;
        }
        match rows.last() {
            Some(r) if rows.len() as i64 == PAGE => {
                after = Some((col(r, "source_id")?, col(r, "external_id")?));
            }
            _ => return Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl MigrationTrait for M0024GroupsAsDocuments {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if !manager.has_table("access_groups").await? {
            return Ok(());
        }
        let db = manager.get_connection();
        move_groups(db).await?;
        for table in ["access_group_members", "access_groups"] {
            db.execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        Ok(())
    }
}
