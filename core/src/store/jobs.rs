//! Durable state of background jobs (re-extraction runs), kept in the store so that a run
//! survives a restart and replicas sharing one store never run the same job twice: every write
//! is compare-and-set on the job's revision.

use async_trait::async_trait;
use uuid::Uuid;

use crate::{Result, WorkspaceId, time::Timestamp};

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

/// Storage of background jobs.
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
