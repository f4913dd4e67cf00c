//! Records: file upload, metadata, touch, read and delete (spec 4.4, DESIGN 6).

use inlet_core::{
    Error,
    record::{self, RecordKey, RecordWrite, Touch, UploadDecision},
    source::{ObjectDataType, ObjectType, SourceDataType},
    sync::SyncEvent,
    tag,
    title::normalize_title,
};
use poem::web::Data;
use poem_openapi::{
    ApiResponse, OpenApi,
    param::{Header, Path, Query},
    payload::Json,
};
use uuid::Uuid;

use super::{
    ApiTags, MAX_EXTERNAL_ID_BYTES,
    dto::{RecordMetadata, RecordOut},
    object_type,
    syncs::ensure_open,
};
use crate::{
    auth::Auth,
    extraction,
    problem::ApiError,
    state::AppState,
    upload::{FILE_PART, FileUpload, Part},
};

/// Record endpoints.
pub struct ObjectsApi;

#[derive(ApiResponse)]
enum Uploaded {
    /// A new record (version 1).
    #[oai(status = 201)]
    Created(Json<RecordMetadata>),
    /// An existing record was updated or revived (version + 1), or the checksum was unchanged
    /// and the record was only touched (current metadata).
    #[oai(status = 200)]
    Ok(Json<RecordMetadata>),
}

#[derive(ApiResponse)]
enum NoContent {
    /// Done.
    #[oai(status = 204)]
    NoContent,
}

fn record_key(scope: record::Scope, external_id: String) -> Result<RecordKey, ApiError> {
    if external_id.len() > MAX_EXTERNAL_ID_BYTES {
        return Err(ApiError::bad_request(format!(
            "externalId is longer than {MAX_EXTERNAL_ID_BYTES} bytes"
        )));
    }
    Ok(RecordKey { scope, external_id })
}

/// The single `file` part of a RECORD upload.
fn file_part(parts: Vec<Part>) -> Result<Part, ApiError> {
    let mut files = parts.into_iter().filter(|p| p.name == FILE_PART);
    let file = files
        .next()
        .ok_or_else(|| ApiError::bad_request(format!("multipart part '{FILE_PART}' is missing")))?;
    if files.next().is_some() {
        return Err(ApiError::bad_request(format!(
            "expected one multipart part named '{FILE_PART}', got several"
        )));
    }
    Ok(file)
}

/// Spec 7's checks of a file attached to a STRUCTURED record.
fn check_structured_parts(ot: &ObjectType, parts: &[Part]) -> Result<(), ApiError> {
    if ot.data_type != Some(ObjectDataType::Json) {
        return Err(ApiError::bad_request(
            "Object DataType must be of type JSON",
        ));
    }
    if parts.len() != 2 {
        return Err(ApiError::bad_request(
            "Expected exactly 2 parts in the multipart request",
        ));
    }
    let field_part = parts
        .iter()
        .find(|p| p.name != FILE_PART)
        .ok_or_else(|| ApiError::bad_request(format!("multipart part '{FILE_PART}' is missing")))?;
    let field_id =
        Uuid::parse_str(&field_part.name).map_err(|_| ApiError::bad_request("ID is invalid"))?;
    if ot.field(field_id).is_none() {
        return Err(ApiError::bad_request("ID is invalid"));
    }
    Err(ApiError::bad_request(
        "attaching a file to a STRUCTURED record is not available in this version",
    ))
}

#[OpenApi(tag = "ApiTags::Objects")]
impl ObjectsApi {
    /// Upload a file: creates (201) or updates (200) the record with the file's extracted text.
    /// With an `externalChecksum` equal to the stored one the record is only touched (200, current
    /// metadata; the file is not extracted and the upload's tags and externalUrl are ignored).
    #[allow(clippy::too_many_arguments)]
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/file",
        method = "put",
        operation_id = "uploadFile"
    )]
    async fn upload(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        /// The open sync this upload belongs to; omit to upload outside a sync.
        #[oai(name = "syncNumber", validator(minimum(value = "0")))]
        sync_number: Query<Option<i64>>,
        /// Link to the file in its source system; becomes the record url.
        #[oai(name = "externalUrl")]
        external_url: Query<Option<String>>,
        /// Any string that changes when the file changes.
        #[oai(name = "externalChecksum")]
        external_checksum: Query<Option<String>>,
        /// `<tagExternalId>:<value>`, repeatable; the upload's tags replace the record's.
        #[oai(name = "X-Service-Object-Tag")]
        tags: Header<Vec<String>>,
        body: FileUpload,
    ) -> Result<Uploaded, ApiError> {
        let principal = auth.writer()?;
        let (source, ot, scope) =
            object_type(&state, principal, source_id.0, object_type_id.0).await?;
        if !source.track_status {
            return Err(ApiError::not_found(
                "this source was created without trackStatus=true and accepts no uploads",
            ));
        }
        let key = record_key(scope, external_id.0)?;
        let tags = tag::parse_tags(&ot, tags.0.iter().map(|t| t.as_bytes()))?;
        let sync_number = sync_number.0;
        if let Some(n) = sync_number {
            ensure_open(&state, scope, n).await?;
        }
        let parts = body.parts(state.settings.max_upload_bytes).await?;
        if ot.source_data_type == SourceDataType::Structured {
            check_structured_parts(&ot, &parts)?;
        }
        let file = file_part(parts)?;
        let checksum = external_checksum.0;

        let existing = match state.records.get_record(&key).await {
            Ok(r) => Some(r),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        if record::decide_upload(existing.as_ref(), checksum.as_deref())
            == UploadDecision::Unchanged
        {
            let touch = Touch {
                sync_number,
                if_match: checksum.clone(),
                event: SyncEvent::Unchanged,
            };
            match state.records.touch_record(&key, touch).await {
                Ok(record) => return Ok(Uploaded::Ok(Json((&record).into()))),
                // Changed or removed since we looked: store this upload instead.
                Err(Error::PreconditionFailed(_) | Error::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }

        let title = normalize_title(file.file_name.as_deref().unwrap_or(&key.external_id));
        let label = format!("{}/{}/{}", source.id, ot.id, key.external_id);
        let extracted = extraction::extract(&state, file.file, &label).await;
        let outcome = state
            .records
            .put_record(RecordWrite {
                key,
                sync_number,
                title,
                url: external_url.0,
                content: extracted.text,
                tags,
                external_checksum: checksum,
                extraction: extracted.extraction,
                modified_by: principal.email.clone(),
            })
            .await?;
        let meta = Json(RecordMetadata::from(&outcome.record));
        Ok(if outcome.created {
            Uploaded::Created(meta)
        } else {
            Uploaded::Ok(meta)
        })
    }

    /// Read a record's metadata, including its externalChecksum (absent once removed).
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/metadata",
        method = "get",
        operation_id = "getMetadata"
    )]
    async fn metadata(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<Json<RecordMetadata>, ApiError> {
        let principal = auth.reader();
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let record = state
            .records
            .get_record(&record_key(scope, external_id.0)?)
            .await?;
        Ok(Json((&record).into()))
    }

    /// Touch: mark an unchanged record as part of the sync. 204; 412 when `If-Match` (the
    /// expected checksum in double quotes) differs; 404 when there is no current record.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId",
        method = "put",
        operation_id = "touchObject"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn touch(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        /// The open sync; without it the record keeps its membership.
        #[oai(name = "syncNumber", validator(minimum(value = "0")))]
        sync_number: Query<Option<i64>>,
        /// The expected stored checksum, in double quotes.
        #[oai(name = "If-Match")]
        if_match: Header<Option<String>>,
    ) -> Result<NoContent, ApiError> {
        let principal = auth.writer()?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let key = record_key(scope, external_id.0)?;
        let touch = Touch {
            sync_number: sync_number.0,
            if_match: if_match.0.as_deref().map(record::parse_if_match),
            event: SyncEvent::Touched,
        };
        state.records.touch_record(&key, touch).await?;
        Ok(NoContent::NoContent)
    }

    /// Read the whole stored record: title, url, content, tags, metadata and how extraction went.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId",
        method = "get",
        operation_id = "getObject"
    )]
    async fn get(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<Json<RecordOut>, ApiError> {
        let principal = auth.reader();
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let record = state
            .records
            .get_record(&record_key(scope, external_id.0)?)
            .await?;
        Ok(Json(record.into()))
    }

    /// Remove a record (a tombstone, as a sync removal makes; the next upload revives it).
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId",
        method = "delete",
        operation_id = "deleteObject"
    )]
    async fn delete(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<NoContent, ApiError> {
        let principal = auth.writer()?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        state
            .records
            .delete_record(&record_key(scope, external_id.0)?)
            .await?;
        Ok(NoContent::NoContent)
    }
}
