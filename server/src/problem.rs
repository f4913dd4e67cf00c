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
}

impl ApiError {
    /// An error with this status and detail.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Self {
            status,
            detail: detail.into(),
            challenge: None,
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

    fn problem(&self) -> Problem {
        Problem {
            problem_type: "about:blank".into(),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
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
            Error::Unavailable(m) => {
                tracing::warn!(error = %m, "storage unavailable");
                Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("storage unavailable, retry later: {m}"),
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
        "authentication required: HTTP Basic with your e-mail and API token, or an OAuth2 Bearer token".to_string()
    } else {
        detail
    };
    ApiError::new(status, detail).into_response()
}
