//! Records: file upload, metadata, touch, read and delete (spec 4.4, DESIGN 6).

use std::future::Future;

use inlet_core::{
    ingest::{self, write},
    input,
    source::{Field, ObjectDataType, ObjectType, SourceDataType},
    structured,
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
    ApiTags,
    dto::{ExtractionOut, RecordMetadata, RecordOut, SkippedOut},
    object_type,
};
use crate::{
    auth::Auth,
    extraction, originals,
    problem::ApiError,
    state::AppState,
    upload::{FileUpload, NamedPart, Part, RecordFile},
};

/// The multipart part holding a record's file (spec 4.4).
const FILE_PART: &str = RecordFile::NAME;

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

/// Spec 7's checks of a file attached to a STRUCTURED record: returns the JSON part, the file
/// part and the field the file's text goes to.
fn structured_parts(ot: &ObjectType, parts: Vec<Part>) -> Result<(Part, Part, Field), ApiError> {
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
    let (json, file): (Vec<Part>, Vec<Part>) = parts.into_iter().partition(|p| p.name == FILE_PART);
    let (Some(json), Some(file)) = (json.into_iter().next(), file.into_iter().next()) else {
        return Err(ApiError::bad_request(format!(
            "multipart part '{FILE_PART}' with the record's JSON is missing"
        )));
    };
    let field = Uuid::parse_str(&file.name)
        .ok()
        .and_then(|id| ot.field(id))
        .cloned()
        .ok_or_else(|| ApiError::bad_request("ID is invalid"))?;
    Ok((json, file, field))
}

/// Checks shared by the upload and JSON push (credentials, the object type, then
/// [`write::prepare`]): answers the object type and the checked write.
#[allow(clippy::too_many_arguments)]
async fn prepare(
    state: &AppState,
    auth: &Auth,
    source_id: Uuid,
    object_type_id: Uuid,
    external_id: &str,
    sync_number: Option<i64>,
    checksum: Option<&str>,
    external_url: Option<&str>,
    tag_headers: &[String],
    access_headers: &[String],
) -> Result<(ObjectType, write::Write), ApiError> {
    let principal = auth.writer()?;
    let access = inlet_core::ingest::parse_headers(access_headers.iter().map(|h| h.as_bytes()))?;
    if access.is_some() {
        super::access::connector_only(principal)?;
    }
    let (source, ot, scope) = object_type(state, principal, source_id, object_type_id).await?;
    if !principal.reads_everything() {
        let viewer = state.viewers.of(&*state.records, principal).await?;
        ingest::syncs::check_writer(&*state.records, &ot, scope, &viewer).await?;
    }
    let request = write::Request {
        external_id,
        sync_number,
        checksum,
        external_url,
        tag_headers,
        modified_by: &principal.email,
    };
    let mut checked = write::prepare(&*state.records, &source, &ot, scope, request).await?;
    checked.access = access;
    Ok((ot, checked))
}

/// Stores a checked write and answers as the upload does: 200 with current metadata when the
/// checksum was unchanged, else 201 (created) or 200 with how extraction went when a file was
/// extracted; a failed extraction also queues its webhook event.
async fn store<F>(
    state: &AppState,
    checked: write::Write,
    extracted_file: bool,
    build: F,
) -> Result<Uploaded, ApiError>
where
    F: Future<Output = Result<write::Content, ApiError>>,
{
    let scope = checked.key.scope;
    let outcome = match write::store(&*state.records, checked, build).await? {
        write::Stored::Unchanged(record) => {
            return Ok(Uploaded::Ok(Json(RecordMetadata {
                skipped: Some(SkippedOut::checksum_unchanged()),
                ..RecordMetadata::from(&record)
            })));
        }
        write::Stored::Written(outcome) => outcome,
    };
    let extraction = &outcome.record.extraction;
    let meta = Json(RecordMetadata {
        extraction: extracted_file.then(|| ExtractionOut::from(extraction)),
        ..RecordMetadata::from(&outcome.record)
    });
    if extracted_file && extraction.failure.is_some() {
        // The record as the upload answered it (with `extraction`), and where it lives.
        let data = serde_json::json!({
            "sourceId": scope.source_id,
            "objectTypeId": scope.object_type_id,
            "externalId": outcome.record.external_id,
            "record": poem_openapi::types::ToJSON::to_json(&meta.0),
        });
        crate::webhooks::emit(
            state,
            scope.workspace_id,
            inlet_core::webhook::Event::RecordExtractionFailed,
            data,
            inlet_core::webhook::Subject::Record(&outcome.record),
        )
        .await;
    }
    Ok(if outcome.created {
        Uploaded::Created(meta)
    } else {
        Uploaded::Ok(meta)
    })
}

fn json_record(bytes: &[u8]) -> Result<serde_json::Value, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(format!(
            "the '{FILE_PART}' part must hold the record's JSON: {e}"
        ))
    })
}

#[OpenApi(tag = "ApiTags::Objects", prefix_path = "/api/v1")]
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
        /// Link to the file in its source system (an http:// or https:// URL, at most 8192
        /// bytes); becomes the record url.
        #[oai(name = "externalUrl")]
        external_url: Query<Option<String>>,
        /// Any string that changes when the file changes.
        #[oai(name = "externalChecksum")]
        external_checksum: Query<Option<String>>,
        /// `<tagExternalId>:<value>`, repeatable; the upload's tags replace the record's.
        #[oai(name = "X-Service-Object-Tag")]
        tags: Header<Vec<String>>,
        /// Who may read the record (DESIGN 7a): `everyone`, `user:<e-mail>` or
        /// `group:<externalId>`, percent-encoded, comma-separated or repeated; replaces the
        /// record's list (without it the record keeps its list). An administrator's API token
        /// only.
        #[oai(name = "X-Service-Object-Access")]
        access: Header<Vec<String>>,
        body: FileUpload,
    ) -> Result<Uploaded, ApiError> {
        let (ot, checked) = prepare(
            &state,
            &auth,
            source_id.0,
            object_type_id.0,
            &external_id.0,
            sync_number.0,
            external_checksum.0.as_deref(),
            external_url.0.as_deref(),
            &tags.0,
            &access.0,
        )
        .await?;
        let parts = body.parts(state.settings.max_upload_bytes).await?;
        let workspace_id = auth.principal().workspace_id;
        let label = format!("{}/{}/{}", source_id.0, ot.id, checked.key.external_id);
        let external_url = external_url.0;
        let state = &state;
        if ot.source_data_type == SourceDataType::Structured {
            let (json, file, field) = structured_parts(&ot, parts)?;
            return store(state, checked, true, async move {
                let bytes = tokio::task::spawn_blocking(move || json.file.read_all())
                    .await
                    .map_err(ApiError::internal)?
                    .map_err(ApiError::internal)?;
                let mut record = json_record(&bytes)?;
                input::check_json("the record's JSON", &record)?;
                let original = originals::keep(state, workspace_id, &file.file).await?;
                let extracted = extraction::extract(state, workspace_id, file.file, &label).await;
                structured::place_text(&mut record, &field.content_selector, extracted.text)?;
                Ok(write::Content {
                    original,
                    ..write::structured_content(
                        &ot,
                        &record,
                        external_url,
                        Some(extracted.extraction),
                    )?
                })
            })
            .await;
        }
        let file = file_part(parts)?;
        let title = normalize_title(
            file.file_name
                .as_deref()
                .unwrap_or(&checked.key.external_id),
        );
        let file_name = file.file_name.clone();
        store(state, checked, true, async move {
            let original = originals::keep(state, workspace_id, &file.file).await?;
            let extracted = extraction::extract(state, workspace_id, file.file, &label).await;
            Ok(write::Content {
                title,
                file_name,
                url: external_url,
                content: extracted.text,
                extraction: extracted.extraction,
                original,
            })
        })
        .await
    }

    /// Download the record's original file, byte for byte as uploaded (the last stored
    /// upload's): its stored file name in `Content-Disposition`, the media type of its detected
    /// format, its SHA-256 as `ETag`. `If-None-Match` with that tag answers 304; one byte range
    /// in `Range` answers 206 (several ranges: the whole file). A removed record, or one the
    /// caller may not read, is 404; so is a record without an original (stored before
    /// originals were kept, or on a deployment that keeps none: the detail says which).
    #[allow(clippy::too_many_arguments)]
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/file",
        method = "get",
        operation_id = "downloadFile"
    )]
    async fn download(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        /// One byte range: `bytes=0-1023`, `bytes=1024-` or `bytes=-1024`.
        #[oai(name = "Range")]
        range: Header<Option<String>>,
        /// The `ETag` of a copy the client holds: 304 when it is still the original.
        #[oai(name = "If-None-Match")]
        if_none_match: Header<Option<String>>,
    ) -> Result<originals::Download, ApiError> {
        use originals::{Download, OriginalBody, Wanted};
        let principal = auth.reader();
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let (record, original) =
            ingest::original(&*state.records, scope, &external_id.0, &viewer).await?;
        let Some(blobs) = &state.blobs else {
            return Err(ApiError::not_found(originals::NOT_KEPT));
        };
        let etag = format!("\"{}\"", original.sha256);
        if originals::matches(if_none_match.0.as_deref(), &etag) {
            return Ok(Download::NotModified(etag));
        }
        let size = original.size;
        let part = match originals::wanted(range.0.as_deref(), size) {
            Wanted::Unsatisfiable => {
                return Ok(Download::Unsatisfiable(
                    originals::ProblemBody(ApiError::new(
                        poem::http::StatusCode::RANGE_NOT_SATISFIABLE,
                        format!("the range is beyond the file's {size} bytes"),
                    )),
                    format!("bytes */{size}"),
                ));
            }
            Wanted::Part(r) if r.start > 0 || r.end < size => Some(r),
            Wanted::Part(_) | Wanted::Whole => None,
        };
        let key = inlet_core::blob::BlobKey::new(scope.workspace_id, &original);
        let Some(bytes) = blobs
            .get(&key, part.clone())
            .await
            .map_err(originals::unavailable)?
        else {
            tracing::warn!(record = %record.id, sha256 = %original.sha256, "original missing");
            return Err(ApiError::not_found(format!(
                "the original of record '{}' is missing from the store of originals",
                external_id.0
            )));
        };
        let body = OriginalBody {
            bytes,
            media_type: record
                .extraction
                .format
                .as_deref()
                .and_then(|f| inlet_extractors::registry().get(f))
                .map_or("application/octet-stream", |i| i.media_type)
                .to_string(),
        };
        let name = record.file_name.as_deref().unwrap_or(&record.external_id);
        let disposition = originals::disposition(name);
        Ok(match part {
            Some(r) => Download::Part(
                body,
                disposition,
                etag,
                format!("bytes {}-{}/{size}", r.start, r.end - 1),
            ),
            None => Download::Whole(body, disposition, etag, "bytes".into()),
        })
    }

    /// JSON push to a STRUCTURED object type: the body is the record's JSON; fields are read at
    /// their contentSelector and title, url and search text come from the templates. Same query
    /// parameters, tag header, checksum skip and sync semantics as the file upload.
    #[allow(clippy::too_many_arguments)]
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/content",
        method = "put",
        operation_id = "pushContent"
    )]
    async fn push_content(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        /// The open sync this push belongs to; omit to push outside a sync.
        #[oai(name = "syncNumber", validator(minimum(value = "0")))]
        sync_number: Query<Option<i64>>,
        /// Link to the record in its source system, used when the object type has no
        /// externalUrlTemplate.
        #[oai(name = "externalUrl")]
        external_url: Query<Option<String>>,
        /// Any string that changes when the record changes.
        #[oai(name = "externalChecksum")]
        external_checksum: Query<Option<String>>,
        /// `<tagExternalId>:<value>`, repeatable; the push's tags replace the record's.
        #[oai(name = "X-Service-Object-Tag")]
        tags: Header<Vec<String>>,
        /// Who may read the record, as for `uploadFile`.
        #[oai(name = "X-Service-Object-Access")]
        access: Header<Vec<String>>,
        /// The record: any JSON whose strings and keys hold no U+0000 (NUL), at any depth.
        body: Json<serde_json::Value>,
    ) -> Result<Uploaded, ApiError> {
        let (ot, checked) = prepare(
            &state,
            &auth,
            source_id.0,
            object_type_id.0,
            &external_id.0,
            sync_number.0,
            external_checksum.0.as_deref(),
            external_url.0.as_deref(),
            &tags.0,
            &access.0,
        )
        .await?;
        if ot.source_data_type != SourceDataType::Structured {
            return Err(ApiError::bad_request(
                "JSON push needs a STRUCTURED object type; upload files to RECORD object types",
            ));
        }
        let record = body.0;
        input::check_json("the record's JSON", &record)?;
        let external_url = external_url.0;
        store(&state, checked, false, async move {
            Ok(write::structured_content(&ot, &record, external_url, None)?)
        })
        .await
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
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let record = ingest::metadata(&*state.records, scope, &external_id.0, &viewer).await?;
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
        super::refuse_hidden(&state, principal, scope, &external_id.0, |_| {
            inlet_core::Error::not_found("no current record with this externalId")
        })
        .await?;
        ingest::touch(
            &*state.records,
            scope,
            &external_id.0,
            sync_number.0,
            if_match.0.as_deref(),
        )
        .await?;
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
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let record = ingest::metadata(&*state.records, scope, &external_id.0, &viewer).await?;
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
        super::refuse_hidden(
            &state,
            principal,
            scope,
            &external_id.0,
            ingest::hidden_record,
        )
        .await?;
        ingest::delete(&*state.records, scope, &external_id.0).await?;
        state.metrics.removed("delete", 1);
        Ok(NoContent::NoContent)
    }
}
