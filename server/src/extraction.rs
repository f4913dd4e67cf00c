//! Runs text extraction off the async runtime: bounded by a semaphore, under a time budget, with
//! every failure turned into empty content plus a logged reason (spec 2.4).

use std::time::Instant;

use inlet_core::{extract::Limits, record::Extraction};

use crate::{state::AppState, upload::SpooledFile};

/// Extra time the async side waits beyond the budget before giving up on a blocking extraction
/// that ignores its deadline.
const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Bytes read from the start of a file to tell an image (for the OCR pool).
const IMAGE_MAGIC_BYTES: usize = 32;

/// Text and outcome of one extraction.
#[derive(Debug)]
pub struct Extracted {
    /// The text kept (empty on failure).
    pub text: String,
    /// What happened.
    pub extraction: Extraction,
}

/// Extracts the text of a spooled file. Never fails: problems become [`Extraction::failure`].
pub async fn extract(state: &AppState, mut file: SpooledFile, label: &str) -> Extracted {
    // An image is read by OCR: its own pool and time budget, so OCR never holds the permits
    // (or the budget) of other formats' extractions.
    let image = file
        .head(IMAGE_MAGIC_BYTES)
        .is_ok_and(|head| inlet_extractors::ocr::is_image(&head));
    let (permits, budget) = if image {
        (&state.ocr_permits, state.settings.ocr.time_budget)
    } else {
        (&state.extraction_permits, state.settings.extraction_timeout)
    };
    let limits = Limits {
        max_chars: state.settings.max_chars,
        deadline: Some(Instant::now() + budget),
        ..Limits::default()
    };
    let permit = match permits.clone().acquire_owned().await {
        Ok(p) => p,
        Err(e) => return failed(state, label, format!("extraction unavailable: {e}")),
    };
    let task = tokio::task::spawn_blocking(move || {
        // The permit lives as long as the extraction, even one the caller stopped waiting for.
        let _permit = permit;
        let bytes = file.read_all()?;
        Ok::<_, std::io::Error>(inlet_extractors::extract(&bytes, &limits))
    });
    let outcome = match tokio::time::timeout(budget + GRACE, task).await {
        Err(_) => return failed(state, label, "time budget exceeded".into()),
        Ok(Err(join)) => return failed(state, label, format!("extraction task failed: {join}")),
        Ok(Ok(Err(io))) => {
            return failed(
                state,
                label,
                format!("cannot read the spooled upload: {io}"),
            );
        }
        Ok(Ok(Ok(outcome))) => outcome,
    };
    let result = if outcome.failure.is_some() {
        "failed"
    } else if outcome.truncated {
        "truncated"
    } else {
        "ok"
    };
    state.metrics.extraction(outcome.format, result);
    if let Some(reason) = &outcome.failure {
        tracing::warn!(
            record = label,
            format = outcome.format.unwrap_or("unknown"),
            reason = %reason,
            kept_chars = outcome.text.chars().count(),
            "extraction failed"
        );
    }
    // NUL is the one character no store keeps in text (inlet_core::input).
    let text = inlet_core::input::strip_nul(outcome.text);
    Extracted {
        extraction: Extraction {
            format: outcome.format.map(Into::into),
            chars: text.chars().count() as u64,
            truncated: outcome.truncated,
            failure: outcome.failure,
            metadata: (!outcome.metadata.is_empty()).then_some(outcome.metadata),
        },
        text,
    }
}

fn failed(state: &AppState, label: &str, reason: String) -> Extracted {
    state.metrics.extraction(None, "failed");
    tracing::warn!(record = label, reason = %reason, "extraction failed");
    Extracted {
        text: String::new(),
        extraction: Extraction {
            failure: Some(reason),
            metadata: None,
            ..Extraction::default()
        },
    }
}
