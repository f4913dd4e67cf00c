//! Re-extraction (DESIGN 7b): reading records again from their originals when an extractor
//! improved (its version is newer than the one that read the record), or on demand for the
//! records that failed. The rules live here: which records are read again, and that a reading
//! never overwrites a newer upload ([`crate::record::Reread`]). Extracting is the caller's (it
//! owns the extractors and their pools). Files attached to STRUCTURED records are not read
//! again (their text sits inside the record's JSON, placed by its templates).
//!
//! A run is either done at once ([`run`], the command line) or kept as a [`Job`] in the store
//! ([`enqueue`], [`claim`], [`work`]): a serving process works on it in the background, saving
//! where it reached after every record read again, so a restart resumes it without reading a
//! finished record twice, and replicas sharing a store take turns through a lease.

use std::{collections::BTreeMap, collections::HashMap, future::Future, time::Duration};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Error, RecordStore, Result, WorkspaceId,
    blob::{BlobKey, BlobStore},
    record::{Extraction, Record, RecordKey, Reread, Scope},
    source::SourceDataType,
    store::jobs::{JobQuery, JobRow},
    time::{self, Timestamp},
};

/// The kind of a re-extraction [`JobRow`].
pub const KIND: &str = "reextract";

/// Open jobs a workspace may have queued or running at once.
pub const MAX_OPEN_JOBS: usize = 5;

/// Jobs a listing answers (newest first).
pub const LIST_LIMIT: usize = 100;

/// How long a finished job stays readable: 30 days ([`purge`]).
pub const RETENTION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Removes jobs that finished and were asked for more than [`RETENTION`] ago.
pub async fn purge(store: &dyn RecordStore) -> Result<u64> {
    let before = time::now() - chrono::TimeDelta::from_std(RETENTION).unwrap_or_default();
    store.purge_jobs(KIND, before).await
}

/// Records a scan reads from the store at once.
const PAGE: usize = 200;

/// Which records a run reads again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// Only records of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<WorkspaceId>,
    /// Only records of this format (`pdf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Only records of this source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<Uuid>,
    /// Only records whose extraction failed (unreadable, unrecognized, timed out), whatever
    /// version read them.
    #[serde(default)]
    pub failed_only: bool,
    /// Every selected record, whatever version read it (on demand); otherwise only those an
    /// older extractor read.
    #[serde(default)]
    pub all: bool,
}

/// One run: which records, from where, and whether to read them or only count them.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Which records.
    pub selection: Selection,
    /// Count what would be read again, reading nothing.
    pub dry_run: bool,
    /// Start after this record id (where a stopped run reached); `None`: the start.
    pub after: Option<Uuid>,
}

/// What a run did, counted as it goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// Live records looked at.
    pub seen: u64,
    /// Records selected and due: read again (or, in a dry run, that would be).
    pub due: u64,
    /// Read again and stored.
    pub reread: u64,
    /// Selected but without an original (stored before originals were kept): skipped.
    pub no_original: u64,
    /// Changed by an upload (or removed) while being read: left as the upload made them.
    pub changed_meanwhile: u64,
    /// Whose original is missing from the blob store: skipped (logged by the caller).
    pub missing: u64,
}

/// Whether `record` is read again under `selection`, given the current version of each
/// format's extractor: a live record of the selected format and source that was read by an
/// older version than today's (or by none that recorded its version), or, with
/// [`Selection::failed_only`], whose extraction failed. Unrecognized files are read again only
/// as failed ones.
pub fn is_due(
    record: &Record,
    selection: &Selection,
    current: &(dyn Fn(&str) -> Option<u32> + Sync),
) -> bool {
    let e = &record.extraction;
    if record.removed
        || selection.source_id.is_some_and(|s| s != record.source_id)
        || selection
            .format
            .as_deref()
            .is_some_and(|f| e.format.as_deref() != Some(f))
    {
        return false;
    }
    if selection.failed_only {
        return e.failure.is_some();
    }
    if selection.all {
        return true;
    }
    match e.format.as_deref().and_then(current) {
        Some(now) => e.version.is_none_or(|then| then < now),
        None => false,
    }
}

/// Reads again every record `is_due` selects, page by page in record id order from the plan's
/// `after`, storing each new reading unless the record changed meanwhile; `extract` reads a
/// workspace's bytes into text. The checkpoint is told after each record the counts, the id
/// reached (to resume from after a stop) and whether the record was read again; the run stops
/// early when it answers `false`. A dry run counts without reading.
pub async fn run<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    plan: &Plan,
    current: &(dyn Fn(&str) -> Option<u32> + Sync),
    extract: F,
    checkpoint: &mut dyn Checkpoint,
) -> Result<Progress>
where
    F: Fn(WorkspaceId, Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    run_from(
        store,
        blobs,
        plan,
        Progress::default(),
        current,
        extract,
        checkpoint,
    )
    .await
}

/// [`run`], counting on from `counts` (what the run did before it stopped).
async fn run_from<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    plan: &Plan,
    mut counts: Progress,
    current: &(dyn Fn(&str) -> Option<u32> + Sync),
    extract: F,
    checkpoint: &mut dyn Checkpoint,
) -> Result<Progress>
where
    F: Fn(WorkspaceId, Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    let (selection, mut after) = (&plan.selection, plan.after);
    // Whether each object type holds files (RECORD), by id.
    let mut files: HashMap<Uuid, bool> = HashMap::new();
    loop {
        let page = store.scan_live(after, PAGE).await?;
        let ended = page.len() < PAGE;
        for (workspace_id, record) in page {
            after = Some(record.id);
            if selection.workspace_id.is_some_and(|w| w != workspace_id) {
                continue;
            }
            counts.seen += 1;
            if !files.contains_key(&record.object_type.id) {
                let source = store.get_source(workspace_id, record.source_id).await?;
                for ot in &source.object_types {
                    files.insert(ot.id, ot.source_data_type == SourceDataType::Record);
                }
            }
            let holds_files = files.get(&record.object_type.id).copied() == Some(true);
            let mut read = false;
            if holds_files && is_due(&record, selection, current) {
                counts.due += 1;
                if !plan.dry_run {
                    read =
                        reread(store, blobs, workspace_id, &record, &extract, &mut counts).await?;
                }
            }
            if !checkpoint.reached(&counts, record.id, read).await? {
                return Ok(counts);
            }
        }
        if ended {
            return Ok(counts);
        }
    }
}

async fn reread<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    workspace_id: crate::WorkspaceId,
    record: &Record,
    extract: &F,
    counts: &mut Progress,
) -> Result<bool>
where
    F: Fn(WorkspaceId, Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    let Some(original) = &record.original else {
        counts.no_original += 1;
        return Ok(false);
    };
    let Some(bytes) = blobs
        .get(&BlobKey::new(workspace_id, original), None)
        .await?
    else {
        counts.missing += 1;
        return Ok(false);
    };
    let (content, extraction) = extract(workspace_id, bytes).await;
    let reread = Reread {
        key: RecordKey {
            scope: Scope {
                workspace_id,
                source_id: record.source_id,
                object_type_id: record.object_type.id,
            },
            external_id: record.external_id.clone(),
        },
        version: record.version,
        sha256: original.sha256.clone(),
        content,
        extraction,
    };
    match store.store_reread(reread).await? {
        Some(_) => counts.reread += 1,
        None => counts.changed_meanwhile += 1,
    }
    Ok(true)
}

/// Told where a run reached after each record.
#[async_trait]
pub trait Checkpoint: Send {
    /// The counts so far, the last record looked at and whether it was read again (rather than
    /// skipped); `false` stops the run.
    async fn reached(&mut self, progress: &Progress, after: Uuid, read: bool) -> Result<bool>;
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobState {
    /// Waiting for a serving process to take it.
    Queued,
    /// Being worked on (or its worker stopped; another takes it when the lease ends).
    Running,
    /// Every selected record was looked at.
    Done,
    /// Stopped by a store or blob store error (in [`Job::error`]).
    Failed,
    /// Stopped by an administrator.
    Cancelled,
}

impl JobState {
    /// Whether the job ended.
    pub fn finished(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Cancelled)
    }
}

/// Who asked for a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Origin {
    /// An administrator, through the API.
    Api,
    /// A serving process that found newer extractors than the last such job read with.
    Upgrade,
}

/// A worker's hold on a running job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The worker (a serving process).
    pub owner: String,
    /// When another worker may take the job over.
    pub until: Timestamp,
}

/// A re-extraction kept in the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    /// Which records.
    pub selection: Selection,
    /// Only counting.
    pub dry_run: bool,
    /// Who asked.
    pub origin: Origin,
    /// Where it is.
    pub state: JobState,
    /// What it did so far.
    pub progress: Progress,
    /// The last record looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Uuid>,
    /// Each format's extractor version when the job was asked for.
    #[serde(default)]
    pub versions: BTreeMap<String, u32>,
    /// When a worker first took it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The worker holding it while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl Job {
    /// The job kept in `row`.
    pub fn from_row(row: &JobRow) -> Result<Self> {
        serde_json::from_value(row.body.clone()).map_err(Error::backend)
    }

    fn as_row(&self, row: &JobRow) -> Result<JobRow> {
        Ok(JobRow {
            finished: self.state.finished(),
            body: serde_json::to_value(self).map_err(Error::backend)?,
            ..row.clone()
        })
    }
}

/// Writes `job` over `row` if nobody wrote it since `row` was read; answers the new row.
async fn save(store: &dyn RecordStore, row: &JobRow, job: &Job) -> Result<Option<JobRow>> {
    let next = job.as_row(row)?;
    if store.put_job(&next, row.revision).await? {
        Ok(Some(JobRow {
            revision: row.revision + 1,
            ..next
        }))
    } else {
        Ok(None)
    }
}

/// Queues a job (`workspace_id` `None`: every workspace's records); `409`-style
/// [`Error::Conflict`] when the workspace has [`MAX_OPEN_JOBS`] open already.
pub async fn enqueue(
    store: &dyn RecordStore,
    workspace_id: Option<WorkspaceId>,
    selection: Selection,
    dry_run: bool,
    origin: Origin,
    versions: BTreeMap<String, u32>,
) -> Result<JobRow> {
    let open = store
        .list_jobs(&JobQuery {
            kind: KIND.into(),
            workspace_id,
            open_only: true,
            limit: MAX_OPEN_JOBS,
        })
        .await?;
    if workspace_id.is_some() && open.len() >= MAX_OPEN_JOBS {
        return Err(Error::Conflict(format!(
            "at most {MAX_OPEN_JOBS} re-extractions may be queued or running at once"
        )));
    }
    let job = Job {
        selection: Selection {
            workspace_id,
            ..selection
        },
        dry_run,
        origin,
        state: JobState::Queued,
        progress: Progress::default(),
        after: None,
        versions,
        started_at: None,
        finished_at: None,
        error: None,
        lease: None,
    };
    let row = JobRow {
        id: Uuid::new_v4(),
        kind: KIND.into(),
        workspace_id,
        created_at: time::now(),
        finished: false,
        body: serde_json::to_value(&job).map_err(Error::backend)?,
        revision: 0,
    };
    if !store.put_job(&row, 0).await? {
        return Err(Error::Conflict("a job with this id exists".into()));
    }
    Ok(JobRow { revision: 1, ..row })
}

/// Cancels job `id` of `workspace_id` unless it ended; answers it as it is now (`None`: no such
/// job in that workspace).
pub async fn cancel(
    store: &dyn RecordStore,
    workspace_id: WorkspaceId,
    id: Uuid,
) -> Result<Option<JobRow>> {
    loop {
        let Some(row) = store.get_job(id).await? else {
            return Ok(None);
        };
        if row.kind != KIND || row.workspace_id != Some(workspace_id) {
            return Ok(None);
        }
        let mut job = Job::from_row(&row)?;
        if job.state.finished() {
            return Ok(Some(row));
        }
        job.state = JobState::Cancelled;
        job.finished_at = Some(time::now());
        job.lease = None;
        if let Some(saved) = save(store, &row, &job).await? {
            return Ok(Some(saved));
        }
    }
}

/// Takes the oldest open job nobody holds (queued, or running with its lease ended) for
/// `owner`, holding it for `lease`. A worker whose extractors are older than those a job was
/// asked with (`current` gives its versions) leaves the job to a newer one: during a rolling
/// upgrade, an old replica would find nothing due and end the job unread.
pub async fn claim(
    store: &dyn RecordStore,
    owner: &str,
    lease: Duration,
    current: &(dyn Fn(&str) -> Option<u32> + Sync),
) -> Result<Option<(JobRow, Job)>> {
    let open = store
        .list_jobs(&JobQuery {
            kind: KIND.into(),
            workspace_id: None,
            open_only: true,
            limit: usize::MAX,
        })
        .await?;
    let now = time::now();
    for row in open.iter().rev() {
        let mut job = Job::from_row(row)?;
        let newer = job
            .versions
            .iter()
            .any(|(format, v)| current(format).is_none_or(|mine| mine < *v));
        if newer || job.lease.as_ref().is_some_and(|l| l.until > now) {
            continue;
        }
        job.state = JobState::Running;
        job.started_at.get_or_insert(now);
        job.lease = Some(Lease {
            owner: owner.into(),
            until: now + lease,
        });
        if let Some(saved) = save(store, row, &job).await? {
            return Ok(Some((saved, job)));
        }
    }
    Ok(None)
}

/// Works on a claimed job to its end (or until it is cancelled, or its lease is lost), saving
/// where it reached after every record read again and at least every `lease / 3`, and telling
/// `watch` the counts after each record.
#[allow(clippy::too_many_arguments)]
pub async fn work<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    row: JobRow,
    job: Job,
    lease: Duration,
    current: &(dyn Fn(&str) -> Option<u32> + Sync),
    extract: F,
    watch: &(dyn Fn(&Progress) + Sync),
) -> Result<()>
where
    F: Fn(WorkspaceId, Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    let plan = Plan {
        selection: job.selection.clone(),
        dry_run: job.dry_run,
        after: job.after,
    };
    let mut keeper = Keeper {
        store,
        row,
        job,
        lease,
        watch,
        saved_at: std::time::Instant::now(),
        lost: false,
    };
    let outcome = run_from(
        store,
        blobs,
        &plan,
        keeper.job.progress,
        current,
        extract,
        &mut keeper,
    )
    .await;
    if keeper.lost {
        return Ok(());
    }
    let mut job = keeper.job.clone();
    job.lease = None;
    job.finished_at = Some(time::now());
    match outcome {
        Ok(progress) => {
            job.progress = progress;
            job.state = JobState::Done;
        }
        Err(e) => {
            job.state = JobState::Failed;
            job.error = Some(e.to_string());
        }
    }
    keeper.save(job).await?;
    Ok(())
}

/// Saves a job's progress as its run goes.
struct Keeper<'a> {
    store: &'a dyn RecordStore,
    row: JobRow,
    job: Job,
    lease: Duration,
    watch: &'a (dyn Fn(&Progress) + Sync),
    saved_at: std::time::Instant,
    /// Cancelled, or taken over by another worker: stop without writing.
    lost: bool,
}

impl Keeper<'_> {
    /// Writes `job`; on a conflict (a cancel, or another worker), marks the run lost.
    async fn save(&mut self, job: Job) -> Result<()> {
        match save(self.store, &self.row, &job).await? {
            Some(row) => {
                self.row = row;
                self.job = job;
                self.saved_at = std::time::Instant::now();
            }
            None => self.lost = true,
        }
        Ok(())
    }
}

#[async_trait]
impl Checkpoint for Keeper<'_> {
    async fn reached(&mut self, progress: &Progress, after: Uuid, read: bool) -> Result<bool> {
        (self.watch)(progress);
        if read || self.saved_at.elapsed() >= self.lease / 3 {
            let mut job = self.job.clone();
            job.progress = *progress;
            job.after = Some(after);
            if let Some(lease) = &mut job.lease {
                lease.until = time::now() + self.lease;
            }
            self.save(job).await?;
        }
        Ok(!self.lost)
    }
}
