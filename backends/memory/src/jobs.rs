//! Background jobs' state.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::{
    Jobs,
    jobs::{JobQuery, JobRow},
};
use inlet_core::{Result, time::Timestamp};
use uuid::Uuid;

#[async_trait]
impl Jobs for MemoryStore {
    async fn put_job(&self, job: &JobRow, expected: u64) -> Result<bool> {
        let mut st = self.state.lock();
        let stored = st.jobs.get(&job.id).map_or(0, |j| j.revision);
        if stored != expected {
            return Ok(false);
        }
        let mut row = job.clone();
        row.revision = expected + 1;
        st.jobs.insert(job.id, row);
        Ok(true)
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<JobRow>> {
        Ok(self.state.lock().jobs.get(&id).cloned())
    }

    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<JobRow>> {
        let st = self.state.lock();
        let mut rows: Vec<JobRow> = st
            .jobs
            .values()
            .filter(|j| {
                j.kind == query.kind
                    && query.workspace_id.is_none_or(|w| j.workspace_id == Some(w))
                    && !(query.open_only && j.finished)
            })
            .cloned()
            .collect();
        rows.sort_by_key(|j| std::cmp::Reverse((j.created_at, j.id)));
        rows.truncate(query.limit);
        Ok(rows)
    }

    async fn purge_jobs(&self, kind: &str, before: Timestamp) -> Result<u64> {
        let mut st = self.state.lock();
        let n = st.jobs.len();
        st.jobs
            .retain(|_, j| !(j.kind == kind && j.finished && j.created_at < before));
        Ok((n - st.jobs.len()) as u64)
    }
}
