//! Errors as `application/problem+json` (RFC 9457): one [`ApiError`] type for every handler, the
//! mapping from core errors, and the catch-all that turns framework errors into problem bodies.

use std::fmt;

use inlet_core::Error;
use poem::{
    IntoResponse, Response,
    error::ResponseError,
    http::{StatusCode, header},
};
use poem_openapi::{
    ApiResponse, Object,
    registry::{MetaMediaType, MetaResponse, MetaResponses, Registry},
    types::{ToJSON, Type},
};

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An RFC 9457 problem document.
#[derive(Debug, Clone, Object)]
pub struct Problem {
    /// A URI naming the problem type; `about:blank` means the status says it all.
    #[oai(rename = "type")]
    pub problem_type: String,
    /// Short summary: the status's reason phrase.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong with this request.
    pub detail: String,
    /// On a 5xx answer: the request's id (also in `X-Request-Id`), to quote when reporting it;
    /// the cause is logged under it.
    #[oai(rename = "requestId", skip_serializing_if_is_none)]
    pub request_id: Option<String>,
    /// On a 410 of the change feed: the earliest cursor still served (a walk from the start).
    #[oai(rename = "earliestCursor", skip_serializing_if_is_none)]
    pub earliest_cursor: Option<String>,
    /// On a 409 of `createSource`: the id of the workspace's source that already has this
    /// externalId (to update it with `PATCH /api/v1/sources/{id}` or delete it).
    #[oai(rename = "existingSourceId", skip_serializing_if_is_none)]
    pub existing_source_id: Option<uuid::Uuid>,
}

/// The error of every API operation: a status and a human-readable detail.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// The problem's detail text.
    pub detail: String,
    /// `WWW-Authenticate` challenge of a 401 (HTTP Basic when absent).
    pub challenge: Option<String>,
    /// The problem's `earliestCursor` (a 410 of the change feed).
    pub earliest_cursor: Option<String>,
    /// The problem's `existingSourceId` (a 409 of `createSource`).
    pub existing_source_id: Option<uuid::Uuid>,
}

impl ApiError {
    /// An error with this status and detail.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Self {
            status,
            detail: detail.into(),
            challenge: None,
            earliest_cursor: None,
            existing_source_id: None,
        }
    }

    /// 400 Bad Request.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 401 Unauthorized.
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, detail)
    }

    /// 401 for a Bearer token that is unknown, expired or revoked (RFC 6750 3.1).
    pub fn invalid_token(detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let mut e = Self::unauthorized(detail.clone());
        e.challenge = Some(format!(
            "Bearer realm=\"inlet\", error=\"invalid_token\", error_description=\"{}\"",
            detail.replace(['"', '\\'], "'")
        ));
        e
    }

    /// 403 Forbidden.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, detail)
    }

    /// 404 Not Found.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, detail)
    }

    /// 409 Conflict.
    pub fn conflict(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, detail)
    }

    /// 413 Payload Too Large.
    pub fn too_large(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, detail)
    }

    /// 500, for bugs only; the detail is logged, not shown.
    pub fn internal(detail: impl fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; the server log has the details",
        )
    }

    /// The problem body this error answers with.
    pub fn problem(&self) -> Problem {
        Problem {
            problem_type: "about:blank".into(),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            request_id: None,
            earliest_cursor: self.earliest_cursor.clone(),
            existing_source_id: self.existing_source_id,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.detail)
    }
}

impl std::error::Error for ApiError {}

impl From<Error> for ApiError {
    fn from(err: Error) -> Self {
        match err {
            Error::NotFound(m) => Self::not_found(m),
            Error::Conflict(m) => Self::conflict(m),
            Error::PreconditionFailed(m) => Self::new(StatusCode::PRECONDITION_FAILED, m),
            Error::Invalid(m) => Self::bad_request(m),
            Error::Forbidden(m) => Self::forbidden(m),
            Error::Gone(m) => Self::new(StatusCode::GONE, m),
            Error::Unavailable(m) => {
                // The database's own words go to the log (with the request id of the span), never
                // to the caller: they name the database and how its statements are built.
                tracing::warn!(error = %m, "storage unavailable");
                Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "storage unavailable, retry later",
                )
            }
            other => Self::internal(other),
        }
    }
}

impl ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn as_response(&self) -> Response {
        let body = self.problem().to_json_string();
        let mut resp = Response::builder()
            .status(self.status)
            .content_type(PROBLEM_JSON)
            .body(body);
        resp.set_data(Reason(self.detail.clone()));
        if self.status == StatusCode::UNAUTHORIZED {
            let challenge = self
                .challenge
                .as_deref()
                .and_then(|c| header::HeaderValue::from_str(c).ok())
                .unwrap_or(header::HeaderValue::from_static(
                    "Basic realm=\"inlet\", charset=\"UTF-8\"",
                ));
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        resp
    }
}

/// The detail a problem answer carries, kept on the response for the request's log line
/// ([`crate::ops`]): an operator sees why a client's request was refused.
#[derive(Clone)]
pub struct Reason(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.as_response()
    }
}

/// Statuses documented on every operation.
const DOCUMENTED: [(u16, &str); 8] = [
    (
        400,
        "The request is malformed or breaks a rule; `detail` says which.",
    ),
    (401, "Missing or invalid credentials."),
    (403, "The credentials do not allow this."),
    (
        404,
        "No such source, object type, record or sync in your workspace.",
    ),
    (409, "The request conflicts with the sync state."),
    (412, "`If-Match` does not match the stored checksum."),
    (413, "The upload exceeds the maximum size."),
    (503, "Storage is unavailable; retry later."),
];

impl ApiResponse for ApiError {
    fn meta() -> MetaResponses {
        MetaResponses {
            responses: DOCUMENTED
                .iter()
                .map(|(status, description)| MetaResponse {
                    description,
                    status: Some(*status),
                    status_range: None,
                    content: vec![MetaMediaType {
                        content_type: PROBLEM_JSON,
                        schema: <Problem as Type>::schema_ref(),
                    }],
                    headers: vec![],
                })
                .collect(),
        }
    }

    fn register(registry: &mut Registry) {
        <Problem as Type>::register(registry);
    }
}

/// The detail of a 401 on endpoints that take either scheme.
const AUTH_REQUIRED: &str = "authentication required: HTTP Basic with your e-mail and API token \
                             (curl -u you@example.com:TOKEN), or an OAuth2 access token as \
                             `Authorization: Bearer`";

/// What a parameter of this name must be, in the API's words.
fn expected(name: &str, reason: &str) -> String {
    let lower = reason.to_ascii_lowercase();
    if lower.contains("uuid") {
        return match name {
            "sourceId" => {
                "a UUID: the source's `id` from the create-source answer, not its externalId".into()
            }
            "objectTypeId" => "a UUID: an object type's `id` (`sourceObjectTypes[].id` of the \
                               create-source answer), not its externalId"
                .into(),
            "tagConfigId" | "facetId" => format!(
                "a UUID: the `id` of a {} in the create-source answer",
                if name == "facetId" {
                    "facet"
                } else {
                    "tag config"
                }
            ),
            _ => "a UUID: the `id` the API answered when it was created".into(),
        };
    }
    if lower.contains("minimum(0)") {
        return "a number of 0 or more".into();
    }
    if lower.contains("integer") {
        return match name {
            "syncNumber" => "an integer: the `syncNumber` the open-sync answer gave".into(),
            _ => "an integer".into(),
        };
    }
    if lower.contains("boolean") {
        return "true or false".into();
    }
    if lower.contains("date-time") {
        return "an RFC 3339 timestamp such as 2026-11-22T10:42:10.123+00:00".into();
    }
    if name == "match" {
        return "`any` (records holding any word, best first; the default) or `all` (records \
                holding every word)"
            .into();
    }
    "a valid value for it (see the API reference at /docs)".into()
}

/// A value as a detail quotes it: JSON-escaped, at most 60 characters.
/// How many characters of an unmatched path a 404 shows.
const MAX_PATH_SHOWN: usize = 2048;

fn quoted(value: &str) -> String {
    let cut: String = value.chars().take(60).collect();
    let more = if cut.len() < value.len() { "…" } else { "" };
    format!("{}{more}", serde_json::Value::String(cut))
}

/// The media types an operation's body may have, from the document.
fn accepted_media(method: &str, path: &str) -> Vec<String> {
    crate::routes::find(path)
        .and_then(|r| r.operation(method))
        .and_then(|op| op.pointer("/requestBody/content"))
        .and_then(serde_json::Value::as_object)
        .map(|c| {
            c.keys()
                .map(|m| m.split(';').next().unwrap_or(m).trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Rewrites a framework error of the request `method path` in the API's words: parameters named
/// as the document names them, what was expected, and what to do. Errors already in our words
/// pass through.
pub fn explain(err: poem::Error, method: &str, path: &str, query: &str) -> poem::Error {
    use poem_openapi::error::{
        ContentTypeError, ParseMultipartError, ParseParamError, ParsePathError,
        ParseRequestPayloadError,
    };
    if err.is::<ApiError>() {
        return err;
    }
    let detail = if let Some(e) = err.downcast_ref::<ParsePathError>() {
        // poem-openapi numbers path parameters (`param0`) in the order the template has them.
        let route = crate::routes::find(path);
        let index = e
            .name
            .strip_prefix("param")
            .and_then(|n| n.parse::<usize>().ok());
        let name = route
            .zip(index)
            .and_then(|(r, i)| r.param_names().nth(i))
            .unwrap_or(e.name);
        let got = route
            .and_then(|r| {
                path.split('/')
                    .enumerate()
                    .find(|(i, _)| r.param_at(*i) == Some(name))
            })
            .map(|(_, raw)| format!(" (got {})", quoted(raw)))
            .unwrap_or_default();
        format!(
            "path parameter {name} must be {}{got}",
            expected(name, &e.reason)
        )
    } else if let Some(e) = err.downcast_ref::<ParseParamError>() {
        let got = query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == e.name)
            .map(|(_, v)| format!(" (got {})", quoted(v)))
            .unwrap_or_default();
        let place = if query
            .split('&')
            .any(|p| p.split('=').next() == Some(e.name))
        {
            "query parameter"
        } else {
            "parameter"
        };
        format!(
            "{place} {} must be {}{got}",
            e.name,
            expected(e.name, &e.reason)
        )
    } else if let Some(e) = err.downcast_ref::<ParseRequestPayloadError>() {
        if e.reason.contains("Expected input type") || e.reason.contains("occurred while parsing") {
            "the request body does not match the operation's schema; see the API reference at \
             /docs"
                .to_string()
        } else {
            format!("the request body is not valid JSON: {}", e.reason)
        }
    } else if let Some(e) = err.downcast_ref::<ParseMultipartError>() {
        format!("malformed multipart body: {}", e.reason)
    } else if let Some(e) = err.downcast_ref::<ContentTypeError>() {
        let accepted = accepted_media(method, path);
        let how = if accepted.iter().any(|m| m == "multipart/form-data") {
            "send multipart/form-data with the file in a part named `file`".to_string()
        } else if accepted.is_empty() {
            "send no body".to_string()
        } else {
            format!(
                "send the body as {} (set Content-Type)",
                accepted.join(" or ")
            )
        };
        match e {
            ContentTypeError::NotSupported { content_type } => {
                format!(
                    "Content-Type {} is not accepted here: {how}",
                    quoted(content_type)
                )
            }
            ContentTypeError::ExpectContentType => {
                format!("the request has no Content-Type: {how}")
            }
        }
    } else if err.status() == StatusCode::UNAUTHORIZED {
        let basic_only = crate::routes::find(path)
            .and_then(|r| r.operation(method))
            .and_then(|op| op.get("security"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|s| s.iter().all(|req| req.get("basicAuth").is_some()));
        if basic_only {
            "this endpoint takes HTTP Basic only: a workspace user's e-mail and API token \
             (curl -u you@example.com:TOKEN); OAuth2 Bearer tokens are not accepted here"
                .to_string()
        } else {
            AUTH_REQUIRED.to_string()
        }
    } else if err.status() == StatusCode::NOT_FOUND {
        let whole = serde_json::Value::String(path.chars().take(MAX_PATH_SHOWN).collect());
        match crate::routes::split_param(path) {
            Some((route, name, value)) => format!(
                "no endpoint {method} {whole}; if {name} is {}, percent-encode each '/' in it \
                 as %2F ({})",
                serde_json::Value::String(value.clone()),
                route
                    .template
                    .replace(&format!("{{{name}}}"), &value.replace('/', "%2F"))
            ),
            None => format!("no endpoint {method} {whole}; the API reference is at /docs"),
        }
    } else if err.status() == StatusCode::METHOD_NOT_ALLOWED {
        let allowed: Vec<String> = crate::routes::find(path)
            .map(|r| {
                ["get", "put", "post", "delete", "patch"]
                    .iter()
                    .filter(|m| r.operation(m).is_some())
                    .map(|m| m.to_ascii_uppercase())
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "{method} is not allowed on {}; it allows {}",
            quoted(path),
            allowed.join(", ")
        )
    } else {
        return err;
    };
    ApiError::new(err.status(), detail).into()
}

/// Turns any error leaving the app into a problem+json response (framework errors such as a bad
/// path parameter, malformed JSON, an unknown route or missing credentials included).
pub async fn catch_all(err: poem::Error) -> Response {
    if err.is::<ApiError>() {
        return err.into_response();
    }
    let status = err.status();
    let detail = err.to_string();
    if status.is_server_error() {
        return ApiError::internal(detail).into_response();
    }
    let detail = if status == StatusCode::UNAUTHORIZED {
        AUTH_REQUIRED.to_string()
    } else {
        detail
    };
    ApiError::new(status, detail).into_response()
}
