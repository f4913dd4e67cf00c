//! Scale-out proof (DESIGN 10): two `inlet serve` processes on different loopback ports over one
//! PostgreSQL database, started at the same moment, take uploads into one open sync concurrently;
//! the sync is closed through one of them; every record's version and membership must add up.
//! Runs when `INLET_TEST_POSTGRES_URL` is set (required when `INLET_REQUIRE_POSTGRES=1`).

use inlet_tests::process::InletProcess;
use reqwest::{Client, Method, multipart};
use serde_json::{Value, json};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "scale@example.test";
const TOKEN: &str = "scale-out-token";

fn replica(database: &str) -> InletProcess {
    InletProcess::spawn(
        INLET,
        database,
        &[
            ("INLET_ADMIN_EMAIL", EMAIL),
            ("INLET_ADMIN_API_TOKEN", TOKEN),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_share_one_sync_over_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    let database = schema.url.clone();

    // Both start at once: migrations and bootstrap must tolerate each other.
    let (mut a, mut b) = (replica(&database), replica(&database));
    let client = Client::new();
    a.ready(&client).await;
    b.ready(&client).await;
    let req = |r: &InletProcess, m: Method, path: &str| r.request(&client, m, path, (EMAIL, TOKEN));

    let ot = a
        .record_source(&client, (EMAIL, TOKEN), "scale")
        .await
        .object_type();

    // Sync 1 through B: 60 records, all kept.
    assert_eq!(
        req(&b, Method::POST, &format!("{ot}/syncs"))
            .json(&json!({"operation": "START_INITIAL"}))
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
    for i in 0..60 {
        let r = if i % 2 == 0 { &a } else { &b };
        let form = multipart::Form::new().part(
            "file",
            multipart::Part::bytes(format!("doc {i}").into_bytes()).file_name(format!("{i}.txt")),
        );
        let resp = req(
            r,
            Method::PUT,
            &format!("{ot}/objects/d{i}/file?syncNumber=1"),
        )
        .multipart(form)
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), 201);
    }
    let closed: Value = req(&a, Method::PUT, &format!("{ot}/syncs/1"))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(closed["kept"], 60);

    // Sync 2 opened through A; uploads through both replicas at once: d0..d39 each uploaded
    // three times (twice through A, once through B), d40..d49 touched through B, d50..d59 left out.
    assert_eq!(
        req(&a, Method::POST, &format!("{ot}/syncs"))
            .json(&json!({"operation": "START"}))
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
    let mut tasks = Vec::new();
    for round in 0..3 {
        for i in 0..40 {
            let r = if round == 1 {
                b.api.clone()
            } else {
                a.api.clone()
            };
            let (client, ot) = (client.clone(), ot.clone());
            tasks.push(tokio::spawn(async move {
                let form = multipart::Form::new().part(
                    "file",
                    multipart::Part::bytes(format!("doc {i} round {round}").into_bytes())
                        .file_name(format!("{i}.txt")),
                );
                client
                    .put(format!("{r}{ot}/objects/d{i}/file?syncNumber=2"))
                    .basic_auth(EMAIL, Some(TOKEN))
                    .multipart(form)
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            }));
        }
    }
    for i in 40..50 {
        let (client, ot, r) = (client.clone(), ot.clone(), b.api.clone());
        tasks.push(tokio::spawn(async move {
            client
                .put(format!("{r}{ot}/objects/d{i}?syncNumber=2"))
                .basic_auth(EMAIL, Some(TOKEN))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }));
    }
    for t in tasks {
        let status = t.await.unwrap();
        assert!(status == 200 || status == 204, "status {status}");
    }
    let closed: Value = req(&b, Method::PUT, &format!("{ot}/syncs/2"))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(closed["removed"], 10, "{closed}");
    assert_eq!(closed["kept"], 50, "{closed}");
    assert_eq!(closed["uploaded"], 120, "{closed}");
    assert_eq!(closed["touched"], 10, "{closed}");

    for i in 0..60 {
        let r = if i % 2 == 0 { &b } else { &a };
        let rec: Value = req(r, Method::GET, &format!("{ot}/objects/d{i}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        match i {
            0..40 => {
                assert_eq!(rec["version"], 4, "d{i}: {rec}");
                assert_eq!(rec["syncNumber"], 2);
                assert_eq!(rec["removed"], false);
            }
            40..50 => {
                assert_eq!(rec["version"], 1, "d{i}");
                assert_eq!(rec["syncNumber"], 2);
                assert_eq!(rec["removed"], false);
            }
            _ => {
                assert_eq!(rec["removed"], true, "d{i}");
                assert_eq!(rec["syncNumber"], 1);
            }
        }
    }
    drop((a, b));
    schema.drop().await;
}
