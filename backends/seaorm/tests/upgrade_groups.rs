//! Upgrading across m0024: access groups stored in the tables of earlier versions are
//! documents after it, on SQLite and PostgreSQL: read back whole, found by each member (and a
//! nested group by its parent's members), replaced and deleted by the same rules; the old
//! tables are gone. A database an earlier main wrote with groups already moved (its m0023
//! under another name) opens too.

use inlet_core::{
    access::{self, Group, Member},
    store::prelude::*,
};
use inlet_store_seaorm::{Migrator, SeaOrmStore};
use sea_orm::{ConnectionTrait, Database, Statement};
use sea_orm_migration::MigratorTrait;
use uuid::Uuid;

mod common;

fn group(source: Uuid, id: &str, members: &[&str]) -> Group {
    let members = members.iter().map(|m| Member::parse(m).unwrap()).collect();
    Group::new(source, id, members).unwrap()
}

async fn groups_survive(url: &str) {
    let ws = Uuid::new_v4();
    let source = inlet_core::testkit::test_source(ws);
    let s = source.id;
    let all = group(s, "all", &["user:bo@x.test", "group:team/eng"]);
    let team = group(s, "team/eng", &["user:ann@x.test", "user:al@x.test"]);

    // The database as m0023 left it, groups in their tables.
    let db = Database::connect(url).await.unwrap();
    Migrator::up(&db, Some(23)).await.unwrap();
    let backend = db.get_database_backend();
    common::old_source(&db, &source).await;
    for g in [&all, &team] {
        db.execute_raw(common::statement(
            backend,
            "INSERT INTO access_groups (source_id, external_id, workspace_id, members) \
             VALUES ($1, $2, $3, $4)",
            vec![
                s.to_string().into(),
                g.external_id.clone().into(),
                ws.to_string().into(),
                serde_json::to_string(&g.members).unwrap().into(),
            ],
        ))
        .await
        .unwrap();
        for member in g.member_terms() {
            db.execute_raw(common::statement(
                backend,
                "INSERT INTO access_group_members (workspace_id, member, source_id, group_id) \
                 VALUES ($1, $2, $3, $4)",
                vec![
                    ws.to_string().into(),
                    member.into(),
                    s.to_string().into(),
                    g.external_id.clone().into(),
                ],
            ))
            .await
            .unwrap();
        }
    }
    db.close().await.unwrap();
    let store = SeaOrmStore::connect(url).await.unwrap();

    // Whole, in externalId order, and found by each member.
    assert_eq!(
        store.list_groups(ws, s, None, 10).await.unwrap(),
        [all.clone(), team.clone()]
    );
    for g in [&all, &team] {
        for member in g.member_terms() {
            assert_eq!(
                store.groups_containing(ws, &[member]).await.unwrap(),
                [g.term()]
            );
        }
    }
    // A member of the nested group reads what the outer group may read.
    let viewer = access::expand("ann@x.test", &[], |terms| {
        let store = &store;
        async move { store.groups_containing(ws, &terms).await }
    })
    .await
    .unwrap();
    let terms = viewer.terms().unwrap();
    assert!(terms.contains(&all.term()) && terms.contains(&team.term()));

    // Replaced and deleted by the same rules: a member taken out is no longer found.
    let smaller = group(s, "team/eng", &["user:ann@x.test"]);
    assert!(
        !store.put_group(ws, &smaller).await.unwrap(),
        "a replacement"
    );
    let al = access::user_term("al@x.test");
    assert!(store.groups_containing(ws, &[al]).await.unwrap().is_empty());
    assert!(store.delete_group(ws, s, "all").await.unwrap());
    assert_eq!(store.list_groups(ws, s, None, 10).await.unwrap(), [smaller]);

    // The old tables are gone.
    common::assert_gone(
        store.connection(),
        &["access_groups", "access_group_members"],
    )
    .await;
}

/// A database written by the commit whose m0023 moved groups as well (recorded as
/// `m0023_folders_groups_webhooks_as_documents`, no m0024): its version is renamed, m0024 finds
/// no tables to move, and its groups are read.
async fn first_m0023_opens(url: &str) {
    let ws = Uuid::new_v4();
    let store = SeaOrmStore::connect(url).await.unwrap();
    let source = inlet_core::testkit::test_source(ws);
    store.create_source(&source).await.unwrap();
    let team = group(source.id, "team", &["user:ann@x.test"]);
    assert!(store.put_group(ws, &team).await.unwrap());
    let db = store.connection();
    let backend = db.get_database_backend();
    for sql in [
        "DELETE FROM seaql_migrations WHERE version = 'm0024_groups_as_documents'",
        "UPDATE seaql_migrations SET version = 'm0023_folders_groups_webhooks_as_documents' \
         WHERE version = 'm0023_folders_webhooks_as_documents'",
    ] {
        db.execute_raw(Statement::from_string(backend, sql))
            .await
            .unwrap();
    }
    drop(store);

    let store = SeaOrmStore::connect(url).await.unwrap();
    assert_eq!(
        store.list_groups(ws, source.id, None, 10).await.unwrap(),
        std::slice::from_ref(&team)
    );
    assert_eq!(
        store
            .groups_containing(ws, &[access::user_term("ann@x.test")])
            .await
            .unwrap(),
        [team.term()]
    );
}

#[tokio::test]
async fn sqlite_groups_survive_m0024() {
    common::on_sqlite(|url| async move { groups_survive(&url).await }).await;
}

#[tokio::test]
async fn postgres_groups_survive_m0024() {
    common::on_postgres(|url| async move { groups_survive(&url).await }).await;
}

#[tokio::test]
async fn sqlite_database_of_the_first_m0023_opens() {
    common::on_sqlite(|url| async move { first_m0023_opens(&url).await }).await;
}

#[tokio::test]
async fn postgres_database_of_the_first_m0023_opens() {
    common::on_postgres(|url| async move { first_m0023_opens(&url).await }).await;
}
