//! The one error type of Inlet's core and stores; the server maps it to problem+json in one place.

/// What went wrong, in terms a caller can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The addressed object does not exist (or belongs to another workspace).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the current state (e.g. sync state machine misuse).
    #[error("{0}")]
    Conflict(String),
    /// A precondition such as `If-Match` did not hold.
    #[error("{0}")]
    PreconditionFailed(String),
    /// The input is malformed or violates a rule.
    #[error("{0}")]
    Invalid(String),
    /// The caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// What was asked for is no longer kept (a change-feed cursor behind the log's retention).
    #[error("{0}")]
    Gone(String),
    /// The storage backend is unavailable (unreachable, pool exhausted, disk full); retry later.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Any other backend failure.
    #[error("backend error: {source}")]
    Backend {
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// Shorthand for [`Error::NotFound`].
    pub fn not_found(msg: impl Into<String>) -> Self {
        Self::NotFound(msg.into())
    }
    /// Shorthand for [`Error::Conflict`].
    pub fn conflict(msg: impl Into<String>) -> Self {
        Self::Conflict(msg.into())
    }
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Self::Invalid(msg.into())
    }
    /// Wraps any backend error.
    pub fn backend(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Backend {
            source: Box::new(source),
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
