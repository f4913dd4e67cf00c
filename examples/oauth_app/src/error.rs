//! The app's error: an HTTP status and a message, shown as a small HTML page.

use std::fmt;

use poem::{
    IntoResponse, Response,
    error::ResponseError,
    http::{StatusCode, header},
};

use crate::{html, inlet::InletError};

/// An error shown to the user as an HTML page with its status.
#[derive(Debug)]
pub struct AppError {
    /// The response status.
    pub status: StatusCode,
    /// What went wrong, in words (escaped when shown).
    pub message: String,
    /// Whether the page offers to sign in again.
    pub sign_in: bool,
}

impl AppError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            sign_in: false,
        }
    }

    /// The same error with a "Sign in with Inlet" link.
    pub fn with_sign_in(mut self) -> Self {
        self.sign_in = true;
        self
    }

    /// The error page.
    pub fn page(&self) -> Response {
        page(self.status, &self.message, self.sign_in)
    }
}

/// An HTML error page with this status.
pub fn page(status: StatusCode, message: &str, sign_in: bool) -> Response {
    let body = html::error(
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error"),
        message,
        sign_in,
    );
    poem::web::Html(body)
        .with_status(status)
        .with_header(header::CACHE_CONTROL, "no-store")
        .into_response()
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AppError {}

impl ResponseError for AppError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn as_response(&self) -> Response {
        self.page()
    }
}

impl From<InletError> for AppError {
    /// Inlet's failures are the upstream's (502), except a refused token (401, sign in again).
    fn from(e: InletError) -> Self {
        match e {
            InletError::Unauthorized => {
                Self::new(StatusCode::UNAUTHORIZED, e.to_string()).with_sign_in()
            }
            other => Self::new(StatusCode::BAD_GATEWAY, other.to_string()),
        }
    }
}
