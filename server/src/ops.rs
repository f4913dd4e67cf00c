//! Operations: request ids and access logs, Prometheus metrics (`/metrics`), liveness
//! (`/healthz`) and readiness (`/readyz`).
//!
//! Every request gets an id: the caller's `X-Request-Id` when it is a short token, a new one
//! otherwise. It is echoed in the response header and carried by the `request` tracing span, so
//! every log line written while serving the request (JSON logs include the span's fields) can be
//! joined to it.

use std::{sync::Arc, time::Instant};

use poem::{
    Endpoint, IntoResponse, PathPattern, Request, Response, handler,
    http::{HeaderValue, Method, StatusCode, header},
    web::{Data, Json},
};
use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};
use tracing::Instrument;

use crate::AppState;

/// Header carrying the request id, both ways.
pub const REQUEST_ID: &str = "x-request-id";

/// Longest caller-supplied request id kept (longer or odd ones are replaced).
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// Route label of requests no route matched (keeps the label set bounded). Matched routes are
/// labelled with the API document's path template (`/api/v1/sources/{sourceId}`).
pub const UNMATCHED: &str = "unmatched";

/// The method a request is logged and counted under: one of a closed set, `OTHER` for any
/// method outside it (clients may invent methods; the label set must stay bounded).
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// The route a request is logged and counted under: the API document's template for the path
/// ([`crate::routes::find`]), else the literal route poem matched (`/healthz`, `/oauth/authorize`,
/// `/docs/*`), else [`UNMATCHED`]. Never the raw path, so the label set stays bounded.
pub fn route_label(path: &str, matched: Option<&str>) -> String {
    if let Some(route) = crate::routes::find(path) {
        return route.template.clone();
    }
    if path == "/" {
        return "/".into();
    }
    match matched.filter(|p| !p.is_empty()) {
        Some(pattern) => pattern
            .split('/')
            .map(|seg| match seg.as_bytes().first() {
                Some(b':') => format!("{{{}}}", &seg[1..]),
                Some(b'*') => "*".into(),
                _ => seg.to_string(),
            })
            .collect::<Vec<_>>()
            .join("/"),
        None => UNMATCHED.into(),
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExtractionLabels {
    format: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SyncLabels {
    operation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RemovalLabels {
    reason: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The service's Prometheus metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: HistogramFamily<RouteLabels>,
    extractions: Family<ExtractionLabels, Counter>,
    sync_closes: Family<SyncLabels, Counter>,
    records_removed: Family<RemovalLabels, Counter>,
    webhook_attempts: Family<WebhookLabels, Counter>,
    index: IndexGauges,
    originals: OriginalGauges,
    reextraction: ReextractionGauges,
}

/// Re-extraction in this process: files read again since start, and the job it works on.
#[derive(Default)]
struct ReextractionGauges {
    read: Counter,
    seen: Gauge,
    due: Gauge,
    reread: Gauge,
    running: Gauge,
}

/// The blob store of originals: written since start, and what the last sweep found.
#[derive(Default)]
struct OriginalGauges {
    written: Counter,
    written_bytes: Counter,
    blobs: Gauge,
    bytes: Gauge,
    waiting: Gauge,
    swept: Counter,
}

/// The search index's state, set at each scrape.
#[derive(Default)]
struct IndexGauges {
    applied: Gauge,
    head: Gauge,
    ready: Gauge,
    rebuilt: Gauge,
    bytes: Gauge,
    ocr: Gauge,
}

fn latency_histogram() -> Histogram {
    // 1 ms to ~33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("inlet");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by method, route and status",
            requests.clone(),
        );
        let latency: HistogramFamily<RouteLabels> =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by method and route, until the response head",
            latency.clone(),
        );
        let extractions = Family::<ExtractionLabels, Counter>::default();
        registry.register(
            "extractions",
            "Text extractions by detected format and outcome (ok, truncated, failed)",
            extractions.clone(),
        );
        let sync_closes = Family::<SyncLabels, Counter>::default();
        registry.register(
            "sync_closes",
            "Sync runs closed, by close operation",
            sync_closes.clone(),
        );
        let records_removed = Family::<RemovalLabels, Counter>::default();
        registry.register(
            "records_removed",
            "Records removed, by reason (sync: not seen by a COMPLETE sync; delete: DELETE call)",
            records_removed.clone(),
        );
        let webhook_attempts = Family::<WebhookLabels, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts, by outcome (delivered, failed)",
            webhook_attempts.clone(),
        );
        let index = IndexGauges::default();
        for (name, help, gauge) in [
            (
                "ocr_available",
                "1 when OCR of images and scanned pages runs (the tesseract command works)",
                &index.ocr,
            ),
            (
                "search_index_applied_position",
                "Write-log position the search index has applied",
                &index.applied,
            ),
            (
                "search_index_head_position",
                "Write-log head last seen by the search index",
                &index.head,
            ),
            (
                "search_index_ready",
                "1 once the search index has caught up with the database",
                &index.ready,
            ),
            (
                "search_index_rebuild_records",
                "Records indexed by the running rebuild (0 when none runs)",
                &index.rebuilt,
            ),
            (
                "search_index_bytes",
                "Size of the search index",
                &index.bytes,
            ),
        ] {
            registry.register(name, help, gauge.clone());
        }
        let originals = OriginalGauges::default();
        registry.register(
            "originals_written",
            "Originals written to the blob store (one per stored upload)",
            originals.written.clone(),
        );
        registry.register(
            "originals_written_bytes",
            "Bytes of originals written to the blob store",
            originals.written_bytes.clone(),
        );
        registry.register(
            "originals_swept",
            "Originals the sweep removed (no live record named them for the grace period)",
            originals.swept.clone(),
        );
        for (name, help, gauge) in [
            (
                "originals_blobs",
                "Blobs in the store of originals at the last sweep",
                &originals.blobs,
            ),
            (
                "originals_bytes",
                "Bytes in the store of originals at the last sweep",
                &originals.bytes,
            ),
            (
                "originals_unreferenced",
                "Blobs no live record names, waiting out their grace at the last sweep",
                &originals.waiting,
            ),
        ] {
            registry.register(name, help, gauge.clone());
        }
        let reextraction = ReextractionGauges::default();
        registry.register(
            "reextraction_reads",
            "Originals read again by re-extraction in this process",
            reextraction.read.clone(),
        );
        for (name, help, gauge) in [
            (
                "reextraction_running",
                "Re-extraction jobs this process works on (0 or 1)",
                &reextraction.running,
            ),
            (
                "reextraction_seen",
                "Records the current (or last) re-extraction job looked at",
                &reextraction.seen,
            ),
            (
                "reextraction_due",
                "Records the current (or last) re-extraction job selected",
                &reextraction.due,
            ),
            (
                "reextraction_reread",
                "Records the current (or last) re-extraction job read again and stored",
                &reextraction.reread,
            ),
        ] {
            registry.register(name, help, gauge.clone());
        }
        Self {
            registry,
            reextraction,
            requests,
            latency,
            extractions,
            sync_closes,
            records_removed,
            webhook_attempts,
            index,
            originals,
        }
    }
}

impl Metrics {
    /// Counts one answered request.
    pub fn request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.into(),
                route: route.into(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                method: method.into(),
                route: route.into(),
            })
            .observe(seconds);
    }

    /// Counts one extraction: `format` as detected (`unknown` when none matched), `outcome` one of
    /// `ok`, `truncated`, `failed`.
    pub fn extraction(&self, format: Option<&str>, outcome: &str) {
        self.extractions
            .get_or_create(&ExtractionLabels {
                format: format.unwrap_or("unknown").into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts a closed sync (`COMPLETE`, `COMPLETE_INCREMENTAL`, `FAIL`) and the records it
    /// removed.
    pub fn sync_closed(&self, operation: &str, removed: u64) {
        self.sync_closes
            .get_or_create(&SyncLabels {
                operation: operation.into(),
            })
            .inc();
        self.removed("sync", removed);
    }

    /// Counts an original read again by re-extraction.
    pub fn reextraction_read(&self) {
        self.reextraction.read.inc();
    }

    /// Shows the progress of the re-extraction job this process works on (`None`: none now).
    pub fn reextraction(&self, progress: Option<&inlet_core::ingest::reextract::Progress>) {
        let gauge = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.reextraction.running.set(i64::from(progress.is_some()));
        if let Some(p) = progress {
            self.reextraction.seen.set(gauge(p.seen));
            self.reextraction.due.set(gauge(p.due));
            self.reextraction.reread.set(gauge(p.reread));
        }
    }

    /// Counts an original written to the blob store.
    pub fn original_kept(&self, bytes: u64) {
        self.originals.written.inc();
        self.originals.written_bytes.inc_by(bytes);
    }

    /// Records what a sweep of the blob store found and removed.
    pub fn blobs_swept(&self, report: &inlet_core::blob::SweepReport) {
        let gauge = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let kept = report.blobs.saturating_sub(report.removed);
        self.originals.blobs.set(gauge(kept));
        self.originals
            .bytes
            .set(gauge(report.bytes.saturating_sub(report.removed_bytes)));
        self.originals.waiting.set(gauge(report.waiting));
        self.originals.swept.inc_by(report.removed);
    }

    /// Counts a webhook delivery attempt.
    pub fn webhook_attempt(&self, delivered: bool) {
        self.webhook_attempts
            .get_or_create(&WebhookLabels {
                outcome: if delivered { "delivered" } else { "failed" }.into(),
            })
            .inc();
    }

    /// Counts `n` removed records for `reason` (`sync` or `delete`).
    pub fn removed(&self, reason: &str, n: u64) {
        self.records_removed
            .get_or_create(&RemovalLabels {
                reason: reason.into(),
            })
            .inc_by(n);
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// The id of the request being served (request data, for handlers that want to log it).
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

fn acceptable(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_REQUEST_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// Middleware: assigns the request id, runs the request inside a `request` span, turns errors
/// into problem+json responses ([`crate::problem::catch_all`]), puts the id on every response,
/// logs one access line and records the request metrics under the matched route's pattern.
pub async fn observe<E: Endpoint>(
    next: Arc<E>,
    mut req: Request,
    metrics: Arc<Metrics>,
) -> poem::Result<Response> {
    let id = req
        .header(REQUEST_ID)
        .filter(|v| acceptable(v))
        .map_or_else(|| uuid::Uuid::new_v4().simple().to_string(), str::to_owned);
    req.set_data(RequestId(id.clone()));
    let method = method_label(req.method());
    let path = req.uri().path().to_owned();
    let span = tracing::info_span!("request", request_id = %id, method = %method);
    let start = Instant::now();
    let result = next.call(req).instrument(span.clone()).await;
    let (status, route, result) = match result {
        Ok(output) => {
            let mut response = output.into_response();
            let route = response.data::<PathPattern>().map(|p| p.0.to_string());
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert(REQUEST_ID, value);
            }
            (response.status(), route, response)
        }
        Err(err) => {
            let route = err.data::<PathPattern>().map(|p| p.0.to_string());
            let mut response = crate::problem::catch_all(err).await;
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert(REQUEST_ID, value);
            }
            (response.status(), route, response)
        }
    };
    // A refusal's log line says why (the problem's detail: the caller's own input at most,
    // never a credential); 5xx details are logged where they happen.
    let reason = status
        .is_client_error()
        .then(|| result.data::<crate::problem::Reason>().map(|r| r.0.clone()))
        .flatten();
    let result = with_request_id(result, &id).await;
    let seconds = start.elapsed().as_secs_f64();
    // poem reports an empty pattern when only the root nest matched (an unknown path).
    let route = route_label(&path, route.as_deref());
    metrics.request(method, &route, status.as_u16(), seconds);
    span.in_scope(|| match &reason {
        Some(reason) => tracing::info!(
            status = status.as_u16(),
            route = %route,
            ms = (seconds * 1000.0 * 1000.0).round() / 1000.0,
            reason = %reason,
            "request"
        ),
        None => tracing::info!(
            status = status.as_u16(),
            route = %route,
            ms = (seconds * 1000.0 * 1000.0).round() / 1000.0,
            "request"
        ),
    });
    Ok(result)
}

/// A 5xx problem body carries the request id (`requestId`), so a report names the log lines that
/// hold the cause; the body itself stays generic.
async fn with_request_id(response: Response, id: &str) -> Response {
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/problem+json"));
    if !response.status().is_server_error() || !is_problem {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = body.into_bytes().await.unwrap_or_default();
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut problem)) => {
            problem.insert(
                "requestId".into(),
                serde_json::Value::String(id.to_string()),
            );
            serde_json::to_vec(&problem).unwrap_or_else(|_| bytes.to_vec())
        }
        _ => bytes.to_vec(),
    };
    let mut response = Response::from_parts(parts, poem::Body::from(body));
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

/// Middleware: `X-Content-Type-Options: nosniff` on every response, so browsers never guess a
/// type other than the one declared (an uploaded file's text shown as HTML, say), and
/// `Cache-Control: no-store` on every response that may carry a secret ([`carries_secrets`]).
pub async fn nosniff<E: Endpoint>(next: E, req: Request) -> poem::Result<Response> {
    let secret = carries_secrets(req.uri().path());
    let mut response = match next.call(req).await {
        Ok(output) => output.into_response(),
        Err(err) => err.into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if secret {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(response)
}

/// Whether responses to `path` may carry a secret (an OAuth client's secret, a new API token,
/// OAuth tokens and codes): they are answered with `Cache-Control: no-store`, so no cache
/// along the way keeps them.
fn carries_secrets(path: &str) -> bool {
    ["/api/v1/oauthclients", "/api/v1/apitokens", "/oauth/"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// Middleware: `GET /` (and `HEAD /`) answers the start page ([`index`]); every other request
/// goes on.
pub async fn start_page<E: Endpoint>(next: E, req: Request) -> poem::Result<Response> {
    let method = req.method();
    if req.uri().path() == "/" && (method == Method::GET || method == Method::HEAD) {
        let accept = req.header(header::ACCEPT).unwrap_or_default();
        return Ok(index(accept));
    }
    next.call(req).await.map(IntoResponse::into_response)
}

/// Links of the start page: (path, what it is).
const START_LINKS: [(&str, &str); 4] = [
    ("/docs", "API documentation"),
    ("/api/v1/openapi.json", "OpenAPI document"),
    ("/healthz", "liveness"),
    ("/readyz", "readiness"),
];

/// The start page: a small HTML page linking the documentation, the OpenAPI document and the
/// health checks, with the version; JSON when the client accepts JSON and not HTML.
pub fn index(accept: &str) -> Response {
    let version = env!("CARGO_PKG_VERSION");
    if accept.contains("application/json") && !accept.contains("text/html") {
        let links: serde_json::Map<String, serde_json::Value> = START_LINKS
            .iter()
            .map(|(path, _)| {
                let key = match *path {
                    "/api/v1/openapi.json" => "openapi",
                    other => other.trim_start_matches('/'),
                };
                (key.to_string(), serde_json::Value::from(*path))
            })
            .collect();
        return Json(serde_json::json!({
            "name": "inlet",
            "version": version,
            "links": links,
        }))
        .into_response();
    }
    let items: String = START_LINKS
        .iter()
        .map(|(path, what)| format!("<li><a href=\"{path}\">{path}</a> — {what}</li>"))
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Inlet</title></head>\n\
         <body><h1>Inlet</h1><p>Version {version}</p><ul>{items}</ul></body></html>\n"
    )
    .with_content_type("text/html; charset=utf-8")
    .into_response()
}

/// `GET /healthz`: the process is up (no dependency checked).
#[handler]
pub fn healthz() -> impl IntoResponse {
    Json(serde_json::json!({ "status": "ok" }))
}

/// `GET /readyz`: the process can serve requests — its database answered a round trip. 503
/// (`database unavailable`, the cause in the log) otherwise, so a load balancer takes the replica
/// out of rotation.
#[handler]
pub async fn readyz(state: Data<&AppState>) -> Response {
    let started = Instant::now();
    let (applied, head) = state.indexer.positions();
    let indexing = !state.indexer.is_ready();
    let index = serde_json::json!({
        "status": if indexing { "building" } else { "ok" },
        "applied": applied,
        "head": head,
        "rebuilt": state.indexer.rebuild_progress(),
    });
    let ocr = ocr_detail();
    // The store of originals: uploads fail while it is unreachable, so the replica is not ready.
    let originals = match &state.blobs {
        None => "off",
        Some(blobs) => match blobs.check().await {
            Ok(()) => "ok",
            Err(e) => {
                tracing::warn!(error = %e, "readiness check of the blob store failed");
                "unavailable"
            }
        },
    };
    match state.records.ping().await {
        Ok(()) if originals == "unavailable" => {
            let mut response = Json(serde_json::json!({
                "status": "unavailable",
                "database": "ok",
                "originals": originals,
                "index": index,
                "ocr": ocr,
                "detail": "the store of original files is unavailable",
            }))
            .into_response();
            response.set_status(StatusCode::SERVICE_UNAVAILABLE);
            response
        }
        Ok(()) if indexing && !state.settings.serve_while_indexing => {
            let mut response = Json(serde_json::json!({
                "status": "indexing",
                "database": "ok",
                "originals": originals,
                "index": index,
                "ocr": ocr,
                "detail": "the search index is being built from the database",
            }))
            .into_response();
            response.set_status(StatusCode::SERVICE_UNAVAILABLE);
            response
        }
        Ok(()) => Json(serde_json::json!({
            "status": "ok",
            "database": "ok",
            "originals": originals,
            "index": index,
            "ocr": ocr,
            "ms": started.elapsed().as_millis() as u64,
        }))
        .into_response(),
        Err(e) => {
            // The database's own words (hosts, drivers, SQL) go to the log, not to the caller.
            tracing::warn!(error = %e, "readiness check failed");
            let mut response = Json(serde_json::json!({
                "status": "unavailable",
                "database": "unavailable",
                "detail": "database unavailable",
            }))
            .into_response();
            response.set_status(StatusCode::SERVICE_UNAVAILABLE);
            response
        }
    }
}

/// OCR's state for `/readyz`: on with its version and languages, or off with the reason (OCR
/// off does not make the service unready: such files are stored without text).
fn ocr_detail() -> serde_json::Value {
    let status = inlet_extractors::ocr::status();
    if status.available {
        serde_json::json!({
            "status": "ok",
            "version": status.version,
            "languages": status.languages,
        })
    } else {
        serde_json::json!({
            "status": "off",
            "detail": "OCR is not available: images and scanned pages are stored without text",
        })
    }
}

/// `GET /metrics`: the Prometheus text exposition.
#[handler]
pub fn prometheus(state: Data<&AppState>) -> impl IntoResponse {
    let gauges = &state.metrics.index;
    let (applied, head) = state.indexer.positions();
    let as_gauge = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    gauges.applied.set(as_gauge(applied));
    gauges.head.set(as_gauge(head));
    gauges.ready.set(i64::from(state.indexer.is_ready()));
    gauges
        .rebuilt
        .set(as_gauge(state.indexer.rebuild_progress().unwrap_or(0)));
    gauges.bytes.set(as_gauge(state.index.size_bytes()));
    gauges
        .ocr
        .set(i64::from(inlet_extractors::ocr::status().available));
    state
        .metrics
        .encode()
        .with_content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_from_callers_are_kept_only_when_sane() {
        assert!(acceptable("abc-123_x.y:z"));
        assert!(!acceptable(""));
        assert!(!acceptable("has space"));
        assert!(!acceptable("newline\nheader"));
        assert!(!acceptable(&"a".repeat(MAX_REQUEST_ID_LEN + 1)));
    }

    #[test]
    fn metrics_are_exposed_in_text_format() {
        let m = Metrics::default();
        m.request("GET", "/api/v1/sources", 200, 0.004);
        m.extraction(Some("pdf"), "ok");
        m.sync_closed("COMPLETE", 3);
        m.removed("delete", 1);
        let text = m.encode();
        assert!(text.contains(
            r#"inlet_http_requests_total{method="GET",route="/api/v1/sources",status="200"} 1"#
        ));
        assert!(text.contains("inlet_http_request_duration_seconds_bucket"));
        assert!(text.contains(r#"inlet_extractions_total{format="pdf",outcome="ok"} 1"#));
        assert!(text.contains(r#"inlet_sync_closes_total{operation="COMPLETE"} 1"#));
        assert!(text.contains(r#"inlet_records_removed_total{reason="sync"} 3"#));
        assert!(text.contains(r#"inlet_records_removed_total{reason="delete"} 1"#));
    }
}
