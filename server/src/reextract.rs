//! Re-extraction in the service: the background worker that works on queued jobs
//! ([`start`]), the run after an upgrade (`--reextract-after-upgrade`), and the command
//! `inlet admin reextract` ([`run`]) with a progress bar on a terminal and a line per thousand
//! records otherwise. Which records and the rules of a run are
//! `inlet_core::ingest::reextract`'s; reading goes through [`crate::extraction::reread`], below
//! uploads.

use std::{io::IsTerminal, time::Duration, time::Instant};

use inlet_core::{
    blob::BlobStore,
    extract::Limits,
    ingest::reextract::{self, Checkpoint, Origin, Plan, Progress, Selection},
    record::Extraction,
    store::jobs::JobQuery,
};

use crate::{Settings, config, extraction, reader, state::AppState};

/// How long a worker holds a job without saving its progress before another may take it over
/// (a worker saves at least every third of it, so only a stopped worker loses its hold).
pub const LEASE: Duration = Duration::from_secs(15);

/// How often finished jobs past their retention are purged.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// How often an idle worker looks for queued jobs (a job queued on this replica wakes it at
/// once).
const POLL: Duration = Duration::from_secs(5);

/// Starts the background worker (when originals are kept), after queueing the run after an
/// upgrade if the settings ask for it.
pub fn start(state: &AppState) {
    let Some(blobs) = state.blobs.clone() else {
        return;
    };
    let state = state.clone();
    tokio::spawn(async move {
        if state.settings.reextract_after_upgrade
            && let Err(e) = after_upgrade(&state).await
        {
            tracing::warn!(error = %e, "cannot queue the re-extraction after an upgrade");
        }
        let owner = uuid::Uuid::new_v4().to_string();
        let mut purged: Option<Instant> = None;
        loop {
            if purged.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
                purged = Some(Instant::now());
                if let Err(e) = reextract::purge(&*state.records).await {
                    tracing::warn!(error = %e, "cannot purge old re-extraction jobs");
                }
            }
            let reader = state.reader.clone();
            let versions = |f: &str| reader.version(f);
            match reextract::claim(&*state.records, &owner, LEASE, &versions).await {
                Ok(Some((row, job))) => {
                    tracing::info!(job = %row.id, "re-extraction started");
                    let id = row.id;
                    let reader = state.reader.clone();
                    let metrics = state.metrics.clone();
                    let outcome = reextract::work(
                        &*state.records,
                        &*blobs,
                        row,
                        job,
                        LEASE,
                        &|f| reader.version(f),
                        |workspace, bytes| {
                            let state = state.clone();
                            async move {
                                let e = extraction::reread(&state, workspace, bytes).await;
                                (e.text, e.extraction)
                            }
                        },
                        &|p| metrics.reextraction(Some(p)),
                    )
                    .await;
                    state.metrics.reextraction(None);
                    match outcome {
                        Ok(()) => tracing::info!(job = %id, "re-extraction ended"),
                        Err(e) => tracing::warn!(job = %id, error = %e, "re-extraction stopped"),
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "cannot look for re-extraction jobs"),
            }
            let _ = tokio::time::timeout(POLL, state.reextract_wake.notified()).await;
        }
    });
}

/// Queues a re-extraction of every workspace when this binary's extractor versions differ from
/// those the last run after an upgrade was queued with (none queued yet counts as different),
/// unless one is still open.
async fn after_upgrade(state: &AppState) -> inlet_core::Result<()> {
    let versions = reader::versions(&*state.reader);
    let jobs = state
        .records
        .list_jobs(&JobQuery {
            kind: reextract::KIND.into(),
            workspace_id: None,
            open_only: false,
            limit: usize::MAX,
        })
        .await?;
    let last = jobs
        .iter()
        .filter(|r| r.workspace_id.is_none())
        .map(reextract::Job::from_row)
        .find(|j| j.as_ref().is_ok_and(|j| j.origin == Origin::Upgrade))
        .transpose()?;
    if last.is_some_and(|j| !j.state.finished() || j.versions == versions) {
        return Ok(());
    }
    let row = reextract::enqueue(
        &*state.records,
        None,
        Selection::default(),
        false,
        Origin::Upgrade,
        versions,
    )
    .await?;
    tracing::info!(job = %row.id, "re-extraction queued after an upgrade");
    Ok(())
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

/// Prints a command-line run's progress.
struct Printer {
    terminal: bool,
    bar: indicatif::ProgressBar,
}

#[async_trait::async_trait]
impl Checkpoint for Printer {
    async fn reached(&mut self, p: &Progress, _: uuid::Uuid, _: bool) -> inlet_core::Result<bool> {
        let line = format!(
            "{} records looked at, {} due, {} read again, {} without an original, {} changed \
             meanwhile, {} missing",
            p.seen, p.due, p.reread, p.no_original, p.changed_meanwhile, p.missing
        );
        if self.terminal {
            self.bar.set_message(line);
            self.bar.tick();
        } else if p.seen.is_multiple_of(1000) {
            eprintln!("{line}");
        }
        Ok(true)
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
    let mut printer = Printer { terminal, bar };
    let done = reextract::run(
        records,
        blobs,
        plan,
        &|f| reader::Reader::version(&reader::Linked, f),
        |_, bytes| read(bytes, &settings),
        &mut printer,
    )
    .await?;
    printer.bar.finish_and_clear();
    Ok(done)
}
