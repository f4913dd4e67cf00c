//! Background jobs' state, written compare-and-set on the revision.

use crate::{SeaOrmStore, all, exec, from_millis, get, json_error, millis, one, uuid};
use async_trait::async_trait;
use inlet_core::store::{
    Jobs,
    jobs::{JobQuery, JobRow},
};
use inlet_core::{Result, time::Timestamp};
use sea_orm::{QueryResult, Value};
use uuid::Uuid;

const COLUMNS: &str = "id, kind, workspace_id, created_ms, finished, body, revision";

fn job_from_row(row: &QueryResult) -> Result<JobRow> {
    let body: String = get(row, "body")?;
    Ok(JobRow {
        id: uuid(row, "id")?,
        kind: get(row, "kind")?,
        workspace_id: get::<Option<String>>(row, "workspace_id")?
            .map(|w| Uuid::parse_str(&w).map_err(inlet_core::Error::backend))
            .transpose()?,
        created_at: from_millis(get(row, "created_ms")?)?,
        finished: get(row, "finished")?,
        body: serde_json::from_str(&body).map_err(json_error)?,
        revision: u64::try_from(get::<i64>(row, "revision")?).unwrap_or(0),
    })
}

#[async_trait]
impl Jobs for SeaOrmStore {
    async fn put_job(&self, job: &JobRow, expected: u64) -> Result<bool> {
        let _w = self.write_guard().await;
        let body = serde_json::to_string(&job.body).map_err(json_error)?;
        let next = i64::try_from(expected + 1).unwrap_or(i64::MAX);
        let values: Vec<Value> = vec![
            job.id.to_string().into(),
            job.kind.clone().into(),
            job.workspace_id.map(|w| w.to_string()).into(),
            millis(&job.created_at).into(),
            job.finished.into(),
            body.into(),
            next.into(),
        ];
        let written = if expected == 0 {
            exec(
                &self.db,
                self.stmt(
                    &format!(
                        "INSERT INTO jobs ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                         ON CONFLICT (id) DO NOTHING"
                    ),
                    values,
                ),
            )
            .await?
        } else {
            let mut values = values;
            values.push(i64::try_from(expected).unwrap_or(i64::MAX).into());
            exec(
                &self.db,
                self.stmt(
                    "UPDATE jobs SET kind = $2, workspace_id = $3, created_ms = $4, \
                     finished = $5, body = $6, revision = $7 WHERE id = $1 AND revision = $8",
                    values,
                ),
            )
            .await?
        };
        Ok(written == 1)
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<JobRow>> {
        one(
            &self.db,
            self.stmt(
                &format!("SELECT {COLUMNS} FROM jobs WHERE id = $1"),
                vec![id.to_string().into()],
            ),
        )
        .await?
        .as_ref()
        .map(job_from_row)
        .transpose()
    }

    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<JobRow>> {
        let mut sql = format!("SELECT {COLUMNS} FROM jobs WHERE kind = $1");
        let mut values: Vec<Value> = vec![query.kind.clone().into()];
        if let Some(w) = query.workspace_id {
            values.push(w.to_string().into());
            sql.push_str(&format!(" AND workspace_id = ${}", values.len()));
        }
        if query.open_only {
            values.push(false.into());
            sql.push_str(&format!(" AND finished = ${}", values.len()));
        }
        values.push(i64::try_from(query.limit).unwrap_or(i64::MAX).into());
        sql.push_str(&format!(
            " ORDER BY created_ms DESC, id DESC LIMIT ${}",
            values.len()
        ));
        all(&self.db, self.stmt(&sql, values))
            .await?
            .iter()
            .map(job_from_row)
            .collect()
    }

    async fn purge_jobs(&self, kind: &str, before: Timestamp) -> Result<u64> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM jobs WHERE kind = $1 AND finished = $2 AND created_ms < $3",
                vec![kind.to_string().into(), true.into(), millis(&before).into()],
            ),
        )
        .await
    }
}
