//! `inlet admin reextract`: reads records again from their originals when an extractor
//! improved, or the ones that failed (`inlet_core::ingest::reextract` decides which), with a
//! progress bar on a terminal and a line per thousand records otherwise. A stopped run loses
//! nothing: each record read again carries its new extractor version, so the next run skips it.

use std::{io::IsTerminal, time::Instant};

use inlet_core::{
    blob::BlobStore,
    extract::Limits,
    ingest::reextract::{self, Plan, Progress},
    record::Extraction,
};

use crate::{Settings, config, extraction};

/// The current version of each format's extractor in this binary.
pub fn current_version(format: &str) -> Option<u32> {
    inlet_extractors::registry().get(format).map(|i| i.version)
}

/// Reads `bytes` as an upload is read (the same extractors, time budget and output cap), off
/// the async runtime.
pub async fn read(bytes: Vec<u8>, settings: &Settings) -> (String, Extraction) {
    let limits = Limits {
        max_chars: settings.max_chars,
        deadline: Some(Instant::now() + settings.extraction_timeout),
        ..Limits::default()
    };
    match tokio::task::spawn_blocking(move || inlet_extractors::extract(&bytes, &limits)).await {
        Ok(outcome) => {
            let kept = extraction::kept(outcome);
            (kept.text, kept.extraction)
        }
        Err(e) => (
            String::new(),
            Extraction {
                failure: Some(format!("extraction task failed: {e}")),
                ..Extraction::default()
            },
        ),
    }
}

/// Runs a re-extraction over the stores and blob store given, printing progress to standard
/// error; answers the final counts.
pub async fn run(
    records: &dyn inlet_core::RecordStore,
    blobs: &dyn BlobStore,
    plan: &Plan,
) -> inlet_core::Result<Progress> {
    let settings = Settings {
        extraction_timeout: config::DEFAULT_EXTRACTION_TIMEOUT,
        ..Settings::default()
    };
    let terminal = std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::new_spinner();
    if !terminal {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut report = |p: &Progress, _: uuid::Uuid| {
        let line = format!(
            "{} records looked at, {} due, {} read again, {} without an original, {} changed \
             meanwhile, {} missing",
            p.seen, p.due, p.reread, p.no_original, p.changed_meanwhile, p.missing
        );
        if terminal {
            bar.set_message(line);
            bar.tick();
        } else if p.seen.is_multiple_of(1000) {
            eprintln!("{line}");
        }
    };
    let done = reextract::run(
        records,
        blobs,
        plan,
        &current_version,
        |bytes| read(bytes, &settings),
        &mut report,
    )
    .await?;
    bar.finish_and_clear();
    Ok(done)
}
