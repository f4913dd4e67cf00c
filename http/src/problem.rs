//! Errors as `application/problem+json` (RFC 9457): one [`ApiError`] type for every handler of
//! the API and the authorization server, and the mapping from core errors.

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
/// (the server's request log): an operator sees why a client's request was refused.
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
