//! Typo tolerance over HTTP (DESIGN 7): a misspelt word finds the records of the word meant,
//! the answer says which words it was searched as and marks them in snippets; `typos=false`
//! and the server's `--typo-tolerance off` search the words as written.

use inlet_server::config::Settings;
use inlet_tests::{SourcePaths, TestServer, record_source};

async fn fruit_drive(s: &TestServer) {
    let source = s.create_source(record_source("fruit")).await;
    let p = SourcePaths::of(&source, 0);
    let texts = [
        ("a", "pineapples grow in warm places"),
        ("b", "pineapples and bananas for breakfast"),
        ("c", "a crate of pineapples arrived"),
        ("d", "apples and pears"),
    ];
    for (id, text) in texts {
        s.upload_text(&p, id, text).await;
    }
}

#[tokio::test]
async fn a_misspelt_word_finds_the_word_meant_and_says_so() {
    let s = TestServer::start().await;
    fruit_drive(&s).await;
    let found = s.search(&[("q", "pinapples")]).await;
    assert_eq!(found["total"], 3, "{found}");
    assert_eq!(
        found["corrections"],
        serde_json::json!([{"word": "pinapples", "matched": ["pineapples"]}])
    );
    for r in found["results"].as_array().unwrap() {
        let snippet = r["snippet"].as_str().unwrap();
        assert!(snippet.contains("<mark>pineapples</mark>"), "{snippet}");
    }
    // Asked not to, the word is searched as written, and the word meant suggested.
    let exact = s.search(&[("q", "pinapples"), ("typos", "false")]).await;
    assert_eq!(exact["total"], 0);
    assert!(exact.get("corrections").is_none(), "{exact}");
    assert_eq!(exact["suggestion"], "pineapples");
    let meant = s.search(&[("q", "pineapples"), ("typos", "false")]).await;
    assert_eq!(meant["total"], 3);
    assert!(meant.get("suggestion").is_none(), "{meant}");
    // A word spelt right is not corrected; short words and quoted phrases never are.
    let right = s.search(&[("q", "pineapples")]).await;
    assert_eq!(right["total"], 3);
    assert!(right.get("corrections").is_none(), "{right}");
    assert_eq!(s.search(&[("q", "pear")]).await["total"], 1);
    assert_eq!(
        s.search(&[("q", "peer")]).await["total"],
        0,
        "4 letters: no typo"
    );
    let quoted = s.search(&[("q", "\"pinapples arrived\"")]).await;
    assert_eq!(quoted["total"], 0, "{quoted}");
}

#[tokio::test]
async fn the_server_setting_turns_typo_tolerance_off_unless_a_search_asks() {
    let settings = Settings {
        typo_tolerance: false,
        ..Settings::default()
    };
    let s = TestServer::start_with(settings).await;
    fruit_drive(&s).await;
    assert_eq!(s.search(&[("q", "pinapples")]).await["total"], 0);
    let asked = s.search(&[("q", "pinapples"), ("typos", "true")]).await;
    assert_eq!(asked["total"], 3, "{asked}");
}
