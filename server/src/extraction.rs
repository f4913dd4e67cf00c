//! Runs text extraction off the async runtime: bounded by a pool shared fairly between
//! workspaces ([`crate::fair`]), under a time budget, with
//! every failure turned into empty content plus a logged reason (spec 2.4). Uploads wait for
//! their turn; a re-extraction ([`reread`]) takes a slot only when no upload waits and another
//! stays free, so it never delays an upload by more than the extraction it already started.

use std::{sync::Arc, time::Instant};

use inlet_core::{
    WorkspaceId,
    extract::{Limits, Turns},
    record::Extraction,
};

use crate::{
    fair::{ExtractionTurns, FairPermit},
    state::AppState,
    upload::SpooledFile,
};

/// Bytes to read: an upload's spooled file, or an original read back from the blob store.
enum Input {
    Spooled(SpooledFile),
    Bytes(Vec<u8>),
}

impl Input {
    fn head(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        match self {
            Self::Spooled(f) => f.head(n),
            Self::Bytes(b) => Ok(b[..n.min(b.len())].to_vec()),
        }
    }

    fn read_all(self) -> std::io::Result<Vec<u8>> {
        match self {
            Self::Spooled(f) => f.read_all(),
            Self::Bytes(b) => Ok(b),
        }
    }
}

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

/// Extracts the text of a spooled file of `workspace`. Never fails: problems become
/// [`Extraction::failure`].
pub async fn extract(
    state: &AppState,
    workspace: WorkspaceId,
    file: SpooledFile,
    label: &str,
) -> Extracted {
    // Every file waits for a slot of the extraction pool, fairly between workspaces.
    let slot = state.extraction_pool.acquire(workspace).await;
    extract_in(state, slot, Input::Spooled(file), label).await
}

/// Reads an original of `workspace` again, below uploads: waits until the extraction pool has
/// no upload waiting and a slot to spare, checking every `POLL`.
pub async fn reread(state: &AppState, workspace: WorkspaceId, bytes: Vec<u8>) -> Extracted {
    const POLL: std::time::Duration = std::time::Duration::from_millis(25);
    let slot = loop {
        if let Some(slot) = state.extraction_pool.try_acquire_spare(workspace) {
            break slot;
        }
        tokio::time::sleep(POLL).await;
    };
    state.metrics.reextraction_read();
    extract_in(state, slot, Input::Bytes(bytes), "re-extraction").await
}

async fn extract_in(state: &AppState, slot: FairPermit, mut file: Input, label: &str) -> Extracted {
    // An image is read by OCR, under OCR's time budget. OCR lends the extraction slot back
    // while it waits for and runs Tesseract (fair::ExtractionTurns), so OCR never holds up
    // other extractions.
    let image = file
        .head(IMAGE_MAGIC_BYTES)
        .is_ok_and(|head| inlet_extractors::ocr::is_image(&head));
    let budget = if image {
        state.settings.ocr.time_budget
    } else {
        state.settings.extraction_timeout
    };
    let limits = Limits {
        max_chars: state.settings.max_chars,
        deadline: Some(Instant::now() + budget),
        ..Limits::default()
    };
    let turns: Arc<dyn Turns> = Arc::new(ExtractionTurns::new(
        slot,
        state.extraction_pool.clone(),
        state.ocr_pool.clone(),
    ));
    let reader = state.reader.clone();
    let task = tokio::task::spawn_blocking(move || {
        // The slot lives as long as the extraction, even one the caller stopped waiting for.
        let bytes = file.read_all()?;
        Ok::<_, std::io::Error>(reader.read(&bytes, &limits, turns))
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
    kept(outcome)
}

/// What a record keeps of an extraction's outcome.
pub fn kept(outcome: inlet_extractors::Outcome) -> Extracted {
    // NUL is the one character no store keeps in text (inlet_core::input).
    let text = inlet_core::input::strip_nul(outcome.text);
    Extracted {
        extraction: Extraction {
            format: outcome.format.map(Into::into),
            version: outcome.version,
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
