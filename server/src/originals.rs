//! Originals on the HTTP side (DESIGN 7b): an upload's bytes go to the blob store before its
//! record commits ([`keep`]); a download reads them back whole, as one byte range, or not at
//! all when the client's copy is current ([`Download`]); a background task sweeps blobs no
//! record names ([`start_sweeping`]).

use std::ops::Range;

use inlet_core::{
    WorkspaceId,
    blob::{BlobKey, Original, Sweeper},
    time,
};
use poem::{IntoResponse, Response, http::StatusCode};
use poem_openapi::{
    ApiResponse,
    payload::Payload,
    registry::{MetaSchema, MetaSchemaRef, Registry},
};

use crate::{problem::ApiError, state::AppState, upload::SpooledFile};

/// Why a download or re-extraction finds nothing on a deployment that keeps no originals.
pub const NOT_KEPT: &str =
    "this deployment keeps no originals of uploaded files (--keep-originals=false)";

/// Writes the file's bytes to the blob store under their SHA-256 (before the record that
/// names them commits) and answers what the record keeps; `None` when originals are not kept.
/// An unreachable or full store is a 503 and nothing is stored.
pub async fn keep(
    state: &AppState,
    workspace_id: WorkspaceId,
    file: &SpooledFile,
) -> Result<Option<Original>, ApiError> {
    let Some(blobs) = &state.blobs else {
        return Ok(None);
    };
    let bytes = file
        .bytes()
        .await
        .map_err(|e| ApiError::internal(format!("cannot read the spooled upload: {e}")))?;
    let original = Original::of(&bytes);
    blobs
        .put(&BlobKey::new(workspace_id, &original), bytes)
        .await
        .map_err(unavailable)?;
    state.metrics.original_kept(original.size);
    Ok(Some(original))
}

/// A blob store failure as the client sees it (the store's own words go to the log).
pub fn unavailable(e: inlet_core::Error) -> ApiError {
    tracing::warn!(error = %e, "blob store failed");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "the store of original files is unavailable (unreachable or full); nothing was \
         stored, retry later",
    )
}

/// The bytes of an original, sent with its own media type.
pub struct OriginalBody {
    /// The bytes (all, or the range asked for).
    pub bytes: Vec<u8>,
    /// The format's media type (`application/pdf`), `application/octet-stream` when unknown.
    pub media_type: String,
}

impl Payload for OriginalBody {
    const CONTENT_TYPE: &'static str = "application/octet-stream";

    fn check_content_type(_content_type: &str) -> bool {
        true
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Inline(Box::new(MetaSchema::new_with_format("string", "binary")))
    }
}

impl IntoResponse for OriginalBody {
    fn into_response(self) -> Response {
        Response::builder()
            .content_type(self.media_type)
            .body(self.bytes)
    }
}

/// A problem document as the answer of a documented status (416).
pub struct ProblemBody(pub ApiError);

impl Payload for ProblemBody {
    const CONTENT_TYPE: &'static str = "application/problem+json";

    fn check_content_type(content_type: &str) -> bool {
        content_type == Self::CONTENT_TYPE
    }

    fn schema_ref() -> MetaSchemaRef {
        <poem_openapi::payload::Json<crate::problem::Problem> as Payload>::schema_ref()
    }

    fn register(registry: &mut Registry) {
        <poem_openapi::payload::Json<crate::problem::Problem> as Payload>::register(registry);
    }
}

impl IntoResponse for ProblemBody {
    fn into_response(self) -> Response {
        self.0.into_response()
    }
}

/// The answer of a download.
#[derive(ApiResponse)]
pub enum Download {
    /// The original file, byte for byte as uploaded, with its stored file name and the media
    /// type of its detected format.
    #[oai(status = 200)]
    Whole(
        OriginalBody,
        /// `attachment; filename*=UTF-8''<the uploaded file name>`.
        #[oai(header = "Content-Disposition")]
        String,
        /// The SHA-256 of the bytes, quoted: send it in `If-None-Match` to skip an unchanged
        /// download.
        #[oai(header = "ETag")]
        String,
        /// `bytes`: ranges are served.
        #[oai(header = "Accept-Ranges")]
        String,
    ),
    /// The one byte range asked for in `Range`.
    #[oai(status = 206)]
    Part(
        OriginalBody,
        /// As for 200.
        #[oai(header = "Content-Disposition")]
        String,
        /// As for 200.
        #[oai(header = "ETag")]
        String,
        /// `bytes <first>-<last>/<size>`.
        #[oai(header = "Content-Range")]
        String,
    ),
    /// `If-None-Match` names the current original: nothing is sent.
    #[oai(status = 304)]
    NotModified(
        /// As for 200.
        #[oai(header = "ETag")]
        String,
    ),
    /// The range starts beyond the file.
    #[oai(status = 416)]
    Unsatisfiable(
        ProblemBody,
        /// `bytes */<size>`.
        #[oai(header = "Content-Range")]
        String,
    ),
}

/// What a `Range` header asks of a file of `size` bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The whole file (no header, a unit other than bytes, several ranges, or a malformed
    /// header: RFC 9110 lets a server ignore those).
    Whole,
    /// These bytes.
    Part(Range<u64>),
    /// A range wholly beyond the file.
    Unsatisfiable,
}

/// Reads a `Range` header (`bytes=0-99`, `bytes=100-`, `bytes=-100`) against a file of `size`.
pub fn wanted(range: Option<&str>, size: u64) -> Wanted {
    let Some(spec) = range.and_then(|r| r.trim().strip_prefix("bytes=")) else {
        return Wanted::Whole;
    };
    if spec.contains(',') {
        return Wanted::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Wanted::Whole;
    };
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (number(first), number(last), last.trim().is_empty()) {
        // bytes=-N: the last N bytes.
        (None, Some(n), _) if first.trim().is_empty() => {
            if n == 0 {
                Wanted::Unsatisfiable
            } else {
                Wanted::Part(size.saturating_sub(n)..size)
            }
        }
        (Some(a), None, true) if a < size => Wanted::Part(a..size),
        (Some(a), Some(b), _) if a <= b && a < size => Wanted::Part(a..size.min(b + 1)),
        (Some(a), _, _) if a >= size => Wanted::Unsatisfiable,
        _ => Wanted::Whole,
    }
}

/// Whether an `If-None-Match` header names `etag` (or `*`), weak tags compared weakly.
pub fn matches(if_none_match: Option<&str>, etag: &str) -> bool {
    if_none_match.is_some_and(|h| {
        h.split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == etag)
    })
}

/// `attachment; filename*=UTF-8''<percent-encoded name>` (RFC 6266), with an ASCII fallback.
pub fn disposition(file_name: &str) -> String {
    let ascii: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let encoded =
        percent_encoding::utf8_percent_encode(file_name, percent_encoding::NON_ALPHANUMERIC);
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// Sweeps the blob store every [`crate::config::Settings::blob_sweep_interval`] (when
/// originals are kept), removing blobs no live record has named for the grace period.
pub fn start_sweeping(state: &AppState) {
    let Some(blobs) = state.blobs.clone() else {
        return;
    };
    let (records, metrics) = (state.records.clone(), state.metrics.clone());
    let (grace, every) = (
        state.settings.originals_grace,
        state.settings.blob_sweep_interval,
    );
    tokio::spawn(async move {
        let mut sweeper = Sweeper::new(grace);
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            match sweeper.sweep(&*blobs, &*records, time::now()).await {
                Ok(report) => {
                    metrics.blobs_swept(&report);
                    if report.removed > 0 {
                        tracing::info!(
                            removed = report.removed,
                            kept = report.blobs - report.removed,
                            "swept originals no record names"
                        );
                    }
                }
                Err(e) => tracing::warn!(error = %e, "sweeping the blob store failed"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_as_rfc_9110_has_them() {
        assert_eq!(wanted(None, 10), Wanted::Whole);
        assert_eq!(wanted(Some("bytes=0-3"), 10), Wanted::Part(0..4));
        assert_eq!(wanted(Some("bytes=4-"), 10), Wanted::Part(4..10));
        assert_eq!(wanted(Some("bytes=-3"), 10), Wanted::Part(7..10));
        assert_eq!(wanted(Some("bytes=-30"), 10), Wanted::Part(0..10));
        assert_eq!(wanted(Some("bytes=5-100"), 10), Wanted::Part(5..10));
        assert_eq!(wanted(Some("bytes=10-"), 10), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=-0"), 10), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=0-1,4-5"), 10), Wanted::Whole);
        assert_eq!(wanted(Some("bytes=5-2"), 10), Wanted::Whole);
        assert_eq!(wanted(Some("items=0-1"), 10), Wanted::Whole);
        assert_eq!(wanted(Some("bytes=x-1"), 10), Wanted::Whole);
    }

    #[test]
    fn etags_match_strongly_or_by_star() {
        assert!(matches(Some("\"abc\""), "\"abc\""));
        assert!(matches(Some("\"x\", W/\"abc\""), "\"abc\""));
        assert!(matches(Some("*"), "\"abc\""));
        assert!(!matches(Some("\"abd\""), "\"abc\""));
        assert!(!matches(None, "\"abc\""));
    }

    #[test]
    fn file_names_are_given_twice_for_old_and_new_clients() {
        assert_eq!(
            disposition("Q3 plan.pdf"),
            "attachment; filename=\"Q3 plan.pdf\"; filename*=UTF-8''Q3%20plan%2Epdf"
        );
        assert_eq!(
            disposition("Grüße \"x\".txt"),
            "attachment; filename=\"Gr__e _x_.txt\"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%22x%22%2Etxt"
        );
    }
}
