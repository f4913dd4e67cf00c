//! Re-extraction jobs (workspace ADMINs, HTTP Basic): ask for the workspace's records to be read
//! again from their originals, follow a job's progress, cancel it. The rules of which records
//! and of the run are `inlet_core::ingest::reextract`'s; `crate::reextract` works on the jobs in
//! the background.

use inlet_core::{
    ingest::reextract::{self, Job, JobState, Origin, Selection},
    store::jobs::{JobQuery, JobRow},
    time,
    token::{Principal, Role},
};
use poem::web::Data;
use poem_openapi::{ApiResponse, Object, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use super::ApiTags;
use crate::{auth::BasicAuth, originals, problem::ApiError, state::AppState};

/// Re-extraction endpoints.
pub struct ReextractionsApi;

/// Which records to read again.
#[derive(Debug, Clone, Default, Object)]
#[oai(rename_all = "camelCase")]
pub struct ReextractionIn {
    /// Only records of this format (a format id as `extraction.format` shows it, e.g. `pdf`).
    pub format: Option<String>,
    /// Only records of this source.
    pub source_id: Option<Uuid>,
    /// Only records whose extraction failed, whatever extractor version read them.
    #[oai(default)]
    pub failed_only: bool,
    /// Every selected record, whatever extractor version read it; otherwise only those an
    /// older version of their format's extractor read.
    #[oai(default)]
    pub all: bool,
    /// Only count the records that would be read again.
    #[oai(default)]
    pub dry_run: bool,
}

/// What a job did so far.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ReextractionProgress {
    /// Records of the workspace looked at.
    pub seen: u64,
    /// Records selected: read again, or in a dry run, that would be.
    pub due: u64,
    /// Read again and stored.
    pub reread: u64,
    /// Selected but stored before originals were kept: skipped.
    pub no_original: u64,
    /// Changed by an upload (or removed) while being read: left as the upload made them.
    pub changed_meanwhile: u64,
    /// Whose original is missing from the blob store: skipped.
    pub missing: u64,
}

/// A re-extraction job.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ReextractionOut {
    /// Its id.
    pub id: Uuid,
    /// `QUEUED`, `RUNNING`, `DONE`, `FAILED` or `CANCELLED`.
    pub state: String,
    /// `API` (asked for by an administrator) or `UPGRADE` (started by a serving process that
    /// found newer extractors).
    pub origin: String,
    /// The format selected, if any.
    #[oai(skip_serializing_if_is_none)]
    pub format: Option<String>,
    /// The source selected, if any.
    #[oai(skip_serializing_if_is_none)]
    pub source_id: Option<Uuid>,
    /// Only failed records.
    pub failed_only: bool,
    /// Every selected record, whatever version read it.
    pub all: bool,
    /// Only counting.
    pub dry_run: bool,
    /// What it did so far.
    pub progress: ReextractionProgress,
    /// When it was asked for.
    pub created_date: String,
    /// When a serving process first took it.
    #[oai(skip_serializing_if_is_none)]
    pub started_date: Option<String>,
    /// When it ended.
    #[oai(skip_serializing_if_is_none)]
    pub finished_date: Option<String>,
    /// Why it failed.
    #[oai(skip_serializing_if_is_none)]
    pub error: Option<String>,
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Queued => "QUEUED",
        JobState::Running => "RUNNING",
        JobState::Done => "DONE",
        JobState::Failed => "FAILED",
        JobState::Cancelled => "CANCELLED",
    }
}

fn out(row: &JobRow) -> Result<ReextractionOut, ApiError> {
    let job = Job::from_row(row)?;
    let p = job.progress;
    Ok(ReextractionOut {
        id: row.id,
        state: state_name(job.state).into(),
        origin: match job.origin {
            Origin::Api => "API",
            Origin::Upgrade => "UPGRADE",
        }
        .into(),
        format: job.selection.format,
        source_id: job.selection.source_id,
        failed_only: job.selection.failed_only,
        all: job.selection.all,
        dry_run: job.dry_run,
        progress: ReextractionProgress {
            seen: p.seen,
            due: p.due,
            reread: p.reread,
            no_original: p.no_original,
            changed_meanwhile: p.changed_meanwhile,
            missing: p.missing,
        },
        created_date: time::format(&row.created_at),
        started_date: job.started_at.as_ref().map(time::format),
        finished_date: job.finished_at.as_ref().map(time::format),
        error: job.error,
    })
}

#[derive(ApiResponse)]
enum Queued {
    /// The job is queued; a serving process works on it in the background. Follow it with
    /// `getReextraction`.
    #[oai(status = 202)]
    Accepted(Json<ReextractionOut>),
}

/// The caller, when an ADMIN.
fn admin(auth: BasicAuth) -> Result<Principal, ApiError> {
    let BasicAuth(p) = auth;
    if p.role != Role::Admin {
        return Err(ApiError::forbidden(
            "re-extraction is asked for by a workspace ADMIN",
        ));
    }
    Ok(p)
}

/// A job of the caller's workspace.
async fn job_of(state: &AppState, p: &Principal, id: Uuid) -> Result<JobRow, ApiError> {
    state
        .records
        .get_job(id)
        .await?
        .filter(|r| r.kind == reextract::KIND && r.workspace_id == Some(p.workspace_id))
        .ok_or_else(|| ApiError::not_found(format!("re-extraction {id} not found")))
}

#[OpenApi(tag = "ApiTags::Reextractions", prefix_path = "/api/v1")]
impl ReextractionsApi {
    /// Read the workspace's records again from their originals: those an older extractor read
    /// (the default), every selected record (`all`), or only the failed ones. Runs in the
    /// background below uploads; at most 5 jobs per workspace are queued or running at once.
    #[oai(
        path = "/reextractions",
        method = "post",
        operation_id = "createReextraction"
    )]
    async fn create(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        body: Json<ReextractionIn>,
    ) -> Result<Queued, ApiError> {
        let p = admin(auth)?;
        if state.blobs.is_none() {
            return Err(ApiError::conflict(originals::NOT_KEPT));
        }
        let body = body.0;
        if let Some(f) = &body.format
            && inlet_extractors::registry().get(f).is_none()
        {
            return Err(ApiError::bad_request(format!(
                "format '{f}' is not one this service reads"
            )));
        }
        if let Some(s) = body.source_id {
            state.records.get_source(p.workspace_id, s).await?;
        }
        let row = reextract::enqueue(
            &*state.records,
            Some(p.workspace_id),
            Selection {
                workspace_id: Some(p.workspace_id),
                format: body.format,
                source_id: body.source_id,
                failed_only: body.failed_only,
                all: body.all,
            },
            body.dry_run,
            Origin::Api,
            crate::reader::versions(&*state.reader),
        )
        .await?;
        state.reextract_wake.notify_one();
        Ok(Queued::Accepted(Json(out(&row)?)))
    }

    /// The workspace's re-extraction jobs, newest first (at most 100).
    #[oai(
        path = "/reextractions",
        method = "get",
        operation_id = "listReextractions"
    )]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
    ) -> Result<Json<Vec<ReextractionOut>>, ApiError> {
        let p = admin(auth)?;
        let rows = state
            .records
            .list_jobs(&JobQuery {
                kind: reextract::KIND.into(),
                workspace_id: Some(p.workspace_id),
                open_only: false,
                limit: reextract::LIST_LIMIT,
            })
            .await?;
        Ok(Json(rows.iter().map(out).collect::<Result<_, _>>()?))
    }

    /// One re-extraction job with its progress.
    #[oai(
        path = "/reextractions/:jobId",
        method = "get",
        operation_id = "getReextraction"
    )]
    async fn get(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "jobId")] job_id: Path<Uuid>,
    ) -> Result<Json<ReextractionOut>, ApiError> {
        let p = admin(auth)?;
        Ok(Json(out(&job_of(&state, &p, job_id.0).await?)?))
    }

    /// Cancel a re-extraction: records read again so far keep their new text. A job that ended
    /// is answered as it is.
    #[oai(
        path = "/reextractions/:jobId",
        method = "delete",
        operation_id = "cancelReextraction"
    )]
    async fn cancel(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "jobId")] job_id: Path<Uuid>,
    ) -> Result<Json<ReextractionOut>, ApiError> {
        let p = admin(auth)?;
        job_of(&state, &p, job_id.0).await?;
        let row = reextract::cancel(&*state.records, p.workspace_id, job_id.0)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("re-extraction {} not found", job_id.0)))?;
        Ok(Json(out(&row)?))
    }
}
