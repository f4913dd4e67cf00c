//! Document metadata in the record's `extraction` block (issue 16 point 7), stored with the
//! record on every store and shown by `GET .../objects/{externalId}`; the record's title still
//! follows the spec's rule (the file name), not the document's own title.

use inlet_tests::{TestServer, corpus_file, file_form};
use reqwest::Method;
use serde_json::{Value, json};

async fn upload_and_read(s: &TestServer, name: &str, bytes: Vec<u8>) -> Value {
    let p = s.record_source().await;
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("doc")))
        .multipart(file_form(name, bytes))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let answered: Value = resp.json().await.unwrap();
    let stored: Value = s
        .req(Method::GET, &p.object("doc"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // The upload's answer and the stored record say the same.
    assert_eq!(
        answered["extraction"]["metadata"], stored["extraction"]["metadata"],
        "{answered}\n{stored}"
    );
    stored
}

#[tokio::test]
async fn metadata_is_stored_and_shown_on_every_store() {
    for server in [TestServer::start().await, TestServer::start_sqlite().await] {
        let record = upload_and_read(
            &server,
            "ciml.pdf",
            corpus_file("pdf/a_course_in_machine_learning_ciml_v0_9_all.pdf"),
        )
        .await;
        let m = &record["extraction"]["metadata"];
        assert_eq!(m["title"], "A Course in Machine Learning", "{record}");
        assert_eq!(m["authors"], json!(["Hal Daumé III"]));
        assert_eq!(m["created"], "2015-09-23T08:00:01-04:00");
        assert_eq!(m["language"], "eng");
        assert!(m["pages"].as_u64().is_some_and(|p| p > 100));
        // The spec's title rule: the normalized file name.
        assert_eq!(record["title"], "ciml.pdf");
    }
}

#[tokio::test]
async fn nothing_known_means_no_metadata_block() {
    let s = TestServer::start().await;
    let record = upload_and_read(&s, "noise.bin", corpus_file("bad/random.bin")).await;
    assert!(record["extraction"].get("metadata").is_none(), "{record}");
}
