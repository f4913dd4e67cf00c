//! Durable state of background jobs (re-extraction runs), kept in the store so that a run
//! survives a restart and replicas sharing one store never run the same job twice: every write
//! is compare-and-set on the job's revision. Jobs are documents ([`super::Documents`]): this
//! module implements [`Jobs`] once for every store.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::documents::{DocWrite, Document, Documents, Expect, KeyRange, scan_all};
use crate::{Error, Result, WorkspaceId, time::Timestamp};

/// One job as stored: who it is for, and its state as the job's module writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    /// The job's id.
    pub id: Uuid,
    /// What kind of job (`reextract`).
    pub kind: String,
    /// The workspace it works in; `None`: every workspace (a run started by the deployment).
    pub workspace_id: Option<WorkspaceId>,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// Whether it ended (finished, failed or cancelled): runners look at open jobs only.
    pub finished: bool,
    /// Its state, as the job's module serializes it.
    pub body: serde_json::Value,
    /// Bumped by every write (1 for a new job); what [`Jobs::put_job`] compares.
    pub revision: u64,
}

/// Which jobs [`Jobs::list_jobs`] answers.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    /// Of this kind.
    pub kind: String,
    /// Of this workspace only; `None`: of every workspace and of none.
    pub workspace_id: Option<WorkspaceId>,
    /// Only those not finished.
    pub open_only: bool,
    /// At most this many.
    pub limit: usize,
}

/// Storage of background jobs, kept as documents ([`super::Documents`], collection
/// [`COLLECTION`]): every store that keeps documents keeps jobs.
#[async_trait]
pub trait Jobs: Send + Sync + 'static {
    /// Stores `job` with revision `expected + 1` when the stored job's revision is `expected`
    /// (`expected` 0: no job with this id is stored); answers whether it did. `job.revision`
    /// is ignored.
    async fn put_job(&self, job: &JobRow, expected: u64) -> Result<bool>;
    /// The job `id`, if stored.
    async fn get_job(&self, id: Uuid) -> Result<Option<JobRow>>;
    /// Jobs `query` selects, newest first.
    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<JobRow>>;
    /// Removes the finished jobs of `kind` asked for before `before`; answers how many.
    async fn purge_jobs(&self, kind: &str, before: Timestamp) -> Result<u64>;
}

/// The document collection jobs are kept in, keyed by id.
pub const COLLECTION: &str = "jobs";

/// A job's document: the row without its id (the key) and revision (the document's).
#[derive(Debug, Serialize, Deserialize)]
pub struct JobDoc {
    /// [`JobRow::kind`].
    pub kind: String,
    /// [`JobRow::workspace_id`].
    pub workspace_id: Option<WorkspaceId>,
    /// [`JobRow::created_at`].
    pub created_at: Timestamp,
    /// [`JobRow::finished`].
    pub finished: bool,
    /// [`JobRow::body`].
    pub body: serde_json::Value,
}

impl JobDoc {
    /// The document of `job`.
    pub fn of(job: &JobRow) -> Self {
        Self {
            kind: job.kind.clone(),
            workspace_id: job.workspace_id,
            created_at: job.created_at,
            finished: job.finished,
            body: job.body.clone(),
        }
    }
}

fn row(doc: &Document) -> Result<JobRow> {
    let d: JobDoc = doc.decode()?;
    Ok(JobRow {
        id: Uuid::parse_str(&doc.key).map_err(Error::backend)?,
        kind: d.kind,
        workspace_id: d.workspace_id,
        created_at: d.created_at,
        finished: d.finished,
        body: d.body,
        revision: doc.revision,
    })
}

async fn all_jobs<S: Documents + ?Sized>(store: &S) -> Result<Vec<JobRow>> {
    scan_all(store, COLLECTION, KeyRange::default())
        .await?
        .iter()
        .map(row)
        .collect()
}

#[async_trait]
impl<S: Documents + ?Sized> Jobs for S {
    async fn put_job(&self, job: &JobRow, expected: u64) -> Result<bool> {
        let write = DocWrite::put(
            COLLECTION,
            job.id.to_string(),
            &JobDoc::of(job),
            Expect::at(expected),
        )?;
        self.write_documents(&[write]).await
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<JobRow>> {
        self.get_document(COLLECTION, &id.to_string())
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<JobRow>> {
        let mut rows: Vec<JobRow> = all_jobs(self)
            .await?
            .into_iter()
            .filter(|j| {
                j.kind == query.kind
                    && query.workspace_id.is_none_or(|w| j.workspace_id == Some(w))
                    && !(query.open_only && j.finished)
            })
            .collect();
        rows.sort_by_key(|j| std::cmp::Reverse((j.created_at, j.id)));
        rows.truncate(query.limit);
        Ok(rows)
    }

    async fn purge_jobs(&self, kind: &str, before: Timestamp) -> Result<u64> {
        let mut purged = 0;
        for job in all_jobs(self).await? {
            if job.kind == kind && job.finished && job.created_at < before {
                let write = DocWrite::delete(
                    COLLECTION,
                    job.id.to_string(),
                    Expect::Revision(job.revision),
                );
                // A job written since it was read is left for the next purge.
                if self.write_documents(&[write]).await? {
                    purged += 1;
                }
            }
        }
        Ok(purged)
    }
}
