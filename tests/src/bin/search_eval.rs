//! Relevance benchmark (issue: search that answers questions). Run in release, from the
//! checkout, with `../shared` beside it:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin search-eval            # CACM, every column
//! cargo run --release -p inlet-tests --bin search-eval -- path/to/collection
//! ```
//!
//! Reads a SMART-format collection (`cacm.all`, `query.text`, `qrels.text`; default
//! `../shared/relevance/cacm`) and measures, over the judged queries, nDCG@10 (binary gain,
//! log2 discount), MAP@100, P@10, the queries with no result and p50/p95 latency for:
//! - `baseline`: tantivy's plain BM25 in this process — the `en_stem` tokenizer, title and
//!   abstract as two fields, the query an OR of its words (the reference the issue names);
//! - `index`: Inlet's search index (`inlet-search-tantivy`) in this process, without HTTP,
//!   typo tolerant as the API is by default; `no typos`: the same with it off;
//! - `http`: Inlet over HTTP — a server on a fresh SQLite database on a loopback port, every
//!   document uploaded as a RECORD (file name = title, file body = abstract), every query sent
//!   as written to `GET /api/v1/search?limit=100`. With
//!   `INLET_EVAL_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test` the server runs on a
//!   fresh PostgreSQL schema beside a second replica, and visibility is timed on both.
//!
//! `INLET_EVAL_TYPOS=1` gives every question one typo first (a swapped, dropped or replaced
//! letter in one word of six letters or more, seeded by the question's id).

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    time::{Duration, Instant},
};

use inlet_core::index::{IndexBatch, IndexDoc, IndexQuery, SearchIndex};
use inlet_search_tantivy::TantivyIndex;
use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, SourcePaths, TestServer, file_form};
use tantivy::{
    Index, TantivyDocument, Term,
    collector::TopDocs,
    query::{BooleanQuery, Occur, Query, TermQuery},
    schema::{IndexRecordOption, STORED, STRING, Schema, TEXT, TextFieldIndexing, TextOptions},
};
use uuid::Uuid;

/// Results a query asks for.
const DEPTH: usize = 100;

struct Doc {
    id: String,
    title: String,
    body: String,
}

/// Fields of a SMART record: `.X` marker → text.
fn records(text: &str) -> Vec<(String, HashMap<char, String>)> {
    let mut out: Vec<(String, HashMap<char, String>)> = Vec::new();
    let mut field: Option<char> = None;
    for line in text.lines() {
        if let Some(id) = line.strip_prefix(".I ") {
            out.push((id.trim().to_string(), HashMap::new()));
            field = None;
        } else if line.len() == 2 && line.starts_with('.') {
            field = line.chars().nth(1);
        } else if let (Some(f), Some((_, fields))) = (field, out.last_mut()) {
            let entry = fields.entry(f).or_default();
            if !entry.is_empty() {
                entry.push('\n');
            }
            entry.push_str(line);
        }
    }
    out
}

fn read(path: &PathBuf) -> String {
    // The collection is Latin-1 safe; read bytes and map each to its char.
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes.iter().map(|&b| b as char).collect()
}

struct Metrics {
    ndcg10: f64,
    map100: f64,
    p10: f64,
    empty: usize,
    p50: Duration,
    p95: Duration,
}

fn evaluate(
    queries: &[(String, String)],
    qrels: &HashMap<String, HashSet<String>>,
    mut run: impl FnMut(&str) -> Vec<String>,
) -> Metrics {
    let (mut ndcg, mut map, mut p10, mut empty) = (0.0, 0.0, 0.0, 0);
    let mut times = Vec::new();
    let mut judged = 0.0;
    for (qid, text) in queries {
        let Some(relevant) = qrels.get(qid) else {
            continue;
        };
        judged += 1.0;
        let started = Instant::now();
        let ranked = run(text);
        times.push(started.elapsed());
        if ranked.is_empty() {
            empty += 1;
        }
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, d)| relevant.contains(*d))
            .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
            .sum();
        let ideal: f64 = (0..relevant.len().min(10))
            .map(|i| 1.0 / ((i + 2) as f64).log2())
            .sum();
        ndcg += dcg / ideal;
        let mut hits = 0.0;
        let mut precision_sum = 0.0;
        for (i, d) in ranked.iter().take(DEPTH).enumerate() {
            if relevant.contains(d) {
                hits += 1.0;
                precision_sum += hits / (i + 1) as f64;
            }
        }
        map += precision_sum / relevant.len().min(DEPTH) as f64;
        p10 += ranked
            .iter()
            .take(10)
            .filter(|d| relevant.contains(*d))
            .count() as f64
            / 10.0;
    }
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    Metrics {
        ndcg10: ndcg / judged,
        map100: map / judged,
        p10: p10 / judged,
        empty,
        p50: at(0.5),
        p95: at(0.95),
    }
}

/// tantivy's plain BM25: `en_stem`, two fields, OR of the query's words.
fn baseline(docs: &[Doc]) -> impl FnMut(&str) -> Vec<String> {
    let mut b = Schema::builder();
    let id = b.add_text_field("id", STRING | STORED);
    let en = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let title = b.add_text_field("title", en.clone());
    let body = b.add_text_field("body", en);
    let _ = TEXT;
    let index = Index::create_in_ram(b.build());
    let mut writer = index.writer(100_000_000).expect("writer");
    for d in docs {
        let mut doc = TantivyDocument::new();
        doc.add_text(id, &d.id);
        doc.add_text(title, &d.title);
        doc.add_text(body, &d.body);
        writer.add_document(doc).expect("add");
    }
    writer.commit().expect("commit");
    let reader = index.reader().expect("reader");
    let mut analyzer = index.tokenizers().get("en_stem").expect("en_stem");
    move |text: &str| {
        let mut words = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while let Some(t) = stream.next() {
            words.push(t.text.clone());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = words
            .iter()
            .flat_map(|w| {
                [title, body].map(|f| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(f, w),
                        IndexRecordOption::WithFreqs,
                    ));
                    (Occur::Should, q)
                })
            })
            .collect();
        let searcher = reader.searcher();
        let top = searcher
            .search(
                &BooleanQuery::new(clauses),
                &TopDocs::with_limit(DEPTH).order_by_score(),
            )
            .expect("search");
        top.into_iter()
            .map(|(_, a)| {
                let doc: TantivyDocument = searcher.doc(a).expect("doc");
                use tantivy::schema::Value;
                doc.get_first(id)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }
}

/// `text` with one typo (DESIGN 7's typo tolerance is measured with it): in one of its words
/// of six letters or more, chosen by `seed`, two letters swapped, one dropped or one replaced
/// (never the first). Unchanged when it has no such word.
fn with_typo(text: &str, seed: u64) -> String {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let words: Vec<(usize, &str)> = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 6)
        .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
        .collect();
    if words.is_empty() {
        return text.to_string();
    }
    let (at, word) = words[rng.random_range(0..words.len())];
    let mut letters: Vec<u8> = word.as_bytes().to_vec();
    let i = rng.random_range(1..letters.len() - 1);
    match rng.random_range(0..3) {
        0 => letters.swap(i, i + 1),
        1 => {
            letters.remove(i);
        }
        _ => {
            let was = letters[i].to_ascii_lowercase();
            let mut by = was;
            while by == was {
                by = b'a' + rng.random_range(0..26u8);
            }
            letters[i] = by;
        }
    }
    let typo = String::from_utf8(letters).unwrap_or_else(|_| word.to_string());
    format!("{}{typo}{}", &text[..at], &text[at + word.len()..])
}

fn inlet_index(docs: &[Doc], typos: bool) -> impl FnMut(&str) -> Vec<String> {
    let index = TantivyIndex::in_memory().expect("index");
    let ws = Uuid::from_u128(1);
    let upserts = docs
        .iter()
        .enumerate()
        .map(|(n, d)| IndexDoc {
            record_id: Uuid::from_u128(n as u128 + 1),
            workspace_id: ws,
            source_id: Uuid::from_u128(2),
            object_type_id: Uuid::from_u128(3),
            external_id: d.id.clone(),
            title: d.title.clone(),
            content: d.body.clone(),
            ..IndexDoc::default()
        })
        .collect();
    index
        .apply(IndexBatch {
            upserts,
            deletes: vec![],
            position: Some(1),
            deleted_sources: vec![],
        })
        .expect("apply");
    move |text: &str| {
        index
            .search(&IndexQuery {
                workspace_id: ws,
                text: text.to_string(),
                limit: DEPTH as u32,
                typos,
                ..Default::default()
            })
            .expect("search")
            .hits
            .into_iter()
            .map(|h| h.external_id)
            .collect()
    }
}

async fn http(
    docs: &[Doc],
    queries: &[(String, String)],
) -> HashMap<String, (Vec<String>, Duration)> {
    // With `INLET_EVAL_POSTGRES_URL`, two replicas over one fresh PostgreSQL schema: every
    // write goes to the first, and the probe is timed on both (the second follows the same
    // write log through the database, DESIGN 7).
    let pg = match std::env::var("INLET_EVAL_POSTGRES_URL") {
        Ok(base) if !base.is_empty() => {
            Some(inlet_tests::postgres::Schema::create(&base, "inlet_eval").await)
        }
        _ => None,
    };
    let (server, replica) = match &pg {
        Some(schema) => (
            TestServer::start_on(&schema.url, Default::default()).await,
            Some(TestServer::start_on(&schema.url, Default::default()).await),
        ),
        None => (TestServer::start_sqlite().await, None),
    };
    let source = server.record_source().await;
    let paths: SourcePaths = source;
    // Visibility under ingest load (DESIGN 7): while the collection is uploaded, a probe
    // uploads a record with a word of its own every 50 ms and times how long after the
    // upload's answer search finds it, on each replica.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probe = {
        let client = server.client.clone();
        let object = server.url(&paths.object("probe"));
        let mut searches = vec![server.url("/search")];
        searches.extend(replica.iter().map(|r| r.url("/search")));
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut delays: Vec<Vec<Duration>> = vec![Vec::new(); searches.len()];
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let word = format!("zqprobe{i}x");
                let resp = client
                    .put(format!("{object}-{i}/file"))
                    .basic_auth(ADMIN_EMAIL, Some(ADMIN_TOKEN))
                    .multipart(file_form("probe.txt", word.clone().into_bytes()))
                    .send()
                    .await
                    .expect("probe upload");
                assert!(resp.status().is_success());
                let answered = Instant::now();
                let mut pending: Vec<usize> = (0..searches.len()).collect();
                while !pending.is_empty() {
                    let mut still = Vec::new();
                    for r in pending {
                        let found: serde_json::Value = client
                            .get(&searches[r])
                            .basic_auth(ADMIN_EMAIL, Some(ADMIN_TOKEN))
                            .query(&[("q", word.as_str())])
                            .send()
                            .await
                            .expect("probe search")
                            .json()
                            .await
                            .expect("json");
                        if found["total"].as_u64() == Some(1) {
                            delays[r].push(answered.elapsed());
                        } else {
                            still.push(r);
                        }
                    }
                    pending = still;
                    assert!(
                        answered.elapsed() < Duration::from_secs(30),
                        "probe never found"
                    );
                    if !pending.is_empty() {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            delays
        })
    };
    let started = Instant::now();
    for d in docs {
        let name = d.title.replace(['/', '\\', '\n'], " ");
        let resp = server
            .req(
                reqwest::Method::PUT,
                &format!("{}/file", paths.object(&d.id)),
            )
            .multipart(file_form(&name, d.body.clone().into_bytes()))
            .send()
            .await
            .expect("upload");
        assert!(
            resp.status().is_success(),
            "upload {}: {}",
            d.id,
            resp.status()
        );
    }
    eprintln!("http: {} uploads in {:.1?}", docs.len(), started.elapsed());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let store = if pg.is_some() { "PostgreSQL" } else { "SQLite" };
    for (r, mut delays) in probe.await.expect("probe").into_iter().enumerate() {
        delays.sort();
        let at = |p: f64| delays[((delays.len() as f64 * p) as usize).min(delays.len() - 1)];
        println!(
            "visibility under ingest, {store}, {} ({} probes while uploading): p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            if r == 0 {
                "the replica written to"
            } else {
                "a second replica"
            },
            delays.len(),
            at(0.5).as_secs_f64() * 1000.0,
            at(0.99).as_secs_f64() * 1000.0,
            delays[delays.len() - 1].as_secs_f64() * 1000.0
        );
    }
    // Search may trail the writes (DESIGN 7): wait until the last document is found.
    let deadline = Instant::now() + Duration::from_secs(30);
    let last = &docs[docs.len() - 1];
    loop {
        let resp: serde_json::Value = server
            .req(reqwest::Method::GET, "/search")
            .query(&[("q", last.title.as_str()), ("limit", "100")])
            .send()
            .await
            .expect("search")
            .json()
            .await
            .expect("json");
        let found = resp["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x["externalId"] == last.id.as_str()));
        if found || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut out = HashMap::new();
    for (qid, text) in queries {
        let started = Instant::now();
        let resp: serde_json::Value = server
            .req(reqwest::Method::GET, "/search")
            .query(&[("q", text.as_str()), ("limit", "100")])
            .send()
            .await
            .expect("search")
            .json()
            .await
            .expect("json");
        let took = started.elapsed();
        let ids = resp["results"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|x| x["externalId"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        out.insert(qid.clone(), (ids, took));
    }
    drop(replica);
    if let Some(schema) = pg {
        schema.drop().await;
    }
    out
}

fn row(name: &str, m: &Metrics) {
    println!(
        "| {name:<8} | {:.3} | {:.3} | {:.3} | {:>2} | {:>7.2} | {:>7.2} |",
        m.ndcg10,
        m.map100,
        m.p10,
        m.empty,
        m.p50.as_secs_f64() * 1000.0,
        m.p95.as_secs_f64() * 1000.0
    );
}

#[tokio::main]
async fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/relevance/cacm"));
    let docs: Vec<Doc> = records(&read(&dir.join("cacm.all")))
        .into_iter()
        .map(|(id, f)| Doc {
            id,
            title: f.get(&'T').cloned().unwrap_or_default().replace('\n', " "),
            body: f.get(&'W').cloned().unwrap_or_default(),
        })
        .collect();
    let mut queries: Vec<(String, String)> = records(&read(&dir.join("query.text")))
        .into_iter()
        .map(|(id, f)| (id, f.get(&'W').cloned().unwrap_or_default()))
        .collect();
    // `INLET_EVAL_TYPOS=1`: every question with one typo ([`with_typo`], seeded by its id).
    let typos = std::env::var_os("INLET_EVAL_TYPOS").is_some();
    if typos {
        for (id, text) in &mut queries {
            *text = with_typo(text, id.parse().unwrap_or(0));
        }
    }
    let mut qrels: HashMap<String, HashSet<String>> = HashMap::new();
    for line in read(&dir.join("qrels.text")).lines() {
        let mut cols = line.split_whitespace();
        if let (Some(q), Some(d)) = (cols.next(), cols.next()) {
            let q = q.trim_start_matches('0').to_string();
            qrels.entry(q).or_default().insert(d.to_string());
        }
    }
    println!(
        "{}{}: {} documents, {} queries, {} judged",
        dir.display(),
        if typos {
            " (one typo per question)"
        } else {
            ""
        },
        docs.len(),
        queries.len(),
        queries
            .iter()
            .filter(|(q, _)| qrels.contains_key(q))
            .count()
    );
    println!("| run      | nDCG@10 | MAP@100 | P@10 | no result | p50 ms | p95 ms |");
    println!("|----------|---------|---------|------|-----------|--------|--------|");
    let base = evaluate(&queries, &qrels, baseline(&docs));
    row("baseline", &base);
    let index = evaluate(&queries, &qrels, inlet_index(&docs, true));
    row("index", &index);
    let exact = evaluate(&queries, &qrels, inlet_index(&docs, false));
    row("no typos", &exact);
    if std::env::var_os("INLET_EVAL_NO_HTTP").is_none() {
        let answers = http(&docs, &queries).await;
        let mut times = answers.clone();
        let over_http = evaluate(&queries, &qrels, |text| {
            let qid = queries
                .iter()
                .find(|(_, t)| t == text)
                .map(|(q, _)| q.clone())
                .unwrap_or_default();
            times.remove(&qid).map(|(ids, _)| ids).unwrap_or_default()
        });
        // The closure above only replays answers: take latency from the HTTP round trips.
        let mut took: Vec<Duration> = queries
            .iter()
            .filter(|(q, _)| qrels.contains_key(q))
            .filter_map(|(q, _)| answers.get(q).map(|(_, t)| *t))
            .collect();
        took.sort();
        let at = |p: f64| took[((took.len() as f64 * p) as usize).min(took.len() - 1)];
        row(
            "http",
            &Metrics {
                p50: at(0.5),
                p95: at(0.95),
                ..over_http
            },
        );
    }
}
