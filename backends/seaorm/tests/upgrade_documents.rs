//! Upgrading across m0023: folder trees and webhook registrations stored in the tables of
//! earlier versions are documents after it, on SQLite and PostgreSQL: read back whole, found
//! the ways they were found (a folder by its tag, a webhook by its workspace and by a claimed
//! delivery), and kept to the same rules (no cycle, a webhook's deletion takes its
//! deliveries); the old tables are gone.

use chrono::{DateTime, Utc};
use inlet_core::{
    Error,
    folder::Folder,
    store::prelude::*,
    webhook::{ClaimRules, Deliveries, Delivery, Event, Webhook, WebhookStore},
};
use inlet_store_seaorm::{Migrator, SeaOrmStore};
use sea_orm::{ConnectionTrait, Database, Value};
use sea_orm_migration::MigratorTrait;
use uuid::Uuid;

mod common;

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

fn folder(id: &str, parent: Option<&str>) -> Folder {
    Folder {
        external_id: id.into(),
        name: id.to_uppercase(),
        parent_external_id: parent.map(Into::into),
    }
}

async fn everything_survives(url: &str) {
    let ws = Uuid::new_v4();
    let source = inlet_core::testkit::test_source(ws);
    let s = source.id;
    let hook = Webhook {
        id: Uuid::new_v4(),
        workspace_id: ws,
        url: "https://hooks.example.test/old".into(),
        events: vec![Event::SyncCompleted, Event::SyncFailed],
        secret: "whsec_old".into(),
        created_date: at(1_700_000_000_000),
        owner: Some(Uuid::new_v4()),
    };
    let queued = Delivery::pending(
        Uuid::new_v4(),
        &hook,
        Event::SyncFailed,
        "{}".into(),
        at(1_700_000_000_500),
    );

    // The database as m0022 left it.
    let db = Database::connect(url).await.unwrap();
    Migrator::up(&db, Some(22)).await.unwrap();
    let backend = db.get_database_backend();
    let run =
        |sql: &str, values: Vec<Value>| db.execute_raw(common::statement(backend, sql, values));
    common::old_source(&db, &source).await;
    for f in [folder("root", None), folder("sub", Some("root"))] {
        run(
            "INSERT INTO folders (source_id, tag, external_id, name, parent_external_id) \
             VALUES ($1, 'folder', $2, $3, $4)",
            vec![
                s.to_string().into(),
                f.external_id.into(),
                f.name.into(),
                f.parent_external_id.into(),
            ],
        )
        .await
        .unwrap();
    }
    run(
        "INSERT INTO webhooks (id, workspace_id, url, events, secret, created_ms, owner_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        vec![
            hook.id.to_string().into(),
            ws.to_string().into(),
            hook.url.clone().into(),
            serde_json::to_string(&hook.events).unwrap().into(),
            hook.secret.clone().into(),
            1_700_000_000_000i64.into(),
            hook.owner.map(|o| o.to_string()).into(),
        ],
    )
    .await
    .unwrap();
    db.close().await.unwrap();
    let store = SeaOrmStore::connect(url).await.unwrap();
    store
        .queue_deliveries(std::slice::from_ref(&queued))
        .await
        .unwrap();

    // Folders: the tree, its rules, found by its tag.
    let listed = store.list_folders(ws, s, "folder").await.unwrap();
    assert_eq!(
        listed,
        [(folder("root", None), 0), (folder("sub", Some("root")), 0)]
    );
    assert!(store.folder_exists(s, "folder", "sub").await.unwrap());
    assert!(matches!(
        store
            .put_folder(ws, s, "folder", &folder("root", Some("sub")))
            .await,
        Err(Error::Invalid(_))
    ));
    assert!(
        store
            .put_folder(ws, s, "folder", &folder("leaf", Some("sub")))
            .await
            .unwrap()
    );

    // Webhooks: listed, joined to a claimed delivery, deleted with their deliveries.
    assert_eq!(
        store.list_webhooks(ws).await.unwrap(),
        std::slice::from_ref(&hook)
    );
    let claimed = store
        .claim_deliveries(Utc::now(), Utc::now(), &ClaimRules::any(10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].1, hook);
    assert!(store.delete_webhook(ws, hook.id).await.unwrap());
    assert!(
        store
            .list_deliveries(ws, hook.id, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // The old tables are gone.
    common::assert_gone(store.connection(), &["folders", "webhooks"]).await;
}

#[tokio::test]
async fn sqlite_folders_and_webhooks_survive_m0023() {
    common::on_sqlite(|url| async move { everything_survives(&url).await }).await;
}

#[tokio::test]
async fn postgres_folders_and_webhooks_survive_m0023() {
    common::on_postgres(|url| async move { everything_survives(&url).await }).await;
}
