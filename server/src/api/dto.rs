//! Wire types of the API (field names exactly as spec 2.3/2.4 and DESIGN 5/12), and their
//! conversions from and to core types.

use std::collections::BTreeMap;

use inlet_core::{
    record::{Extraction, ObjectTypeRef, Record},
    source as core_source,
    sync::{self as core_sync, SyncRun},
    time,
};
use poem_openapi::{Enum, Object};
use uuid::Uuid;

macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident <=> $core:path { $($(#[$vm:meta])* $v:ident),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
        #[oai(rename_all = "SCREAMING_SNAKE_CASE")]
        #[allow(missing_docs)] // the variants mirror core's, documented there
        pub enum $name { $($(#[$vm])* $v),+ }

        impl From<$name> for $core {
            fn from(v: $name) -> Self {
                match v { $($name::$v => <$core>::$v),+ }
            }
        }

        impl From<$core> for $name {
            fn from(v: $core) -> Self {
                match v { $(<$core>::$v => $name::$v),+ }
            }
        }
    };
}

wire_enum!(
    /// RECORD (files) or STRUCTURED (JSON records).
    SourceDataType <=> core_source::SourceDataType { Record, Structured }
);
wire_enum!(
    /// Who may read an object type's records pushed without an access list: every user of
    /// the workspace, or nobody but administrators' API tokens until a list arrives.
    DefaultAccess <=> inlet_core::access::DefaultAccess { Everyone, Restricted }
);
wire_enum!(
    /// Object-level data type.
    ObjectDataType <=> core_source::ObjectDataType { Json }
);
wire_enum!(
    /// Data type of a field or tag.
    DataType <=> core_source::DataType { Text, Long, Double, Boolean, DateTime }
);
wire_enum!(
    /// SIMPLE values or a HIERARCHICAL folder tree.
    TagType <=> core_source::TagType { Simple, Hierarchical }
);
wire_enum!(
    /// Facet kind.
    FacetType <=> core_source::FacetType { Tag }
);
wire_enum!(
    /// Built-in date filter a DATE_TIME tag facet maps onto.
    FacetTargetType <=> core_source::FacetTargetType { CreatedDate, ModifiedDate }
);
wire_enum!(
    /// How a sync is opened.
    OpenOperation <=> core_sync::OpenOperation { StartInitial, Start }
);
wire_enum!(
    /// How a sync is closed.
    CloseOperation <=> core_sync::CloseOperation { Complete, CompleteIncremental, Fail }
);
wire_enum!(
    /// State of a sync run.
    SyncState <=> core_sync::SyncState { Open, Completed, Failed }
);

/// The only source kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceKind {
    /// A custom source fed through this API.
    Custom,
}

/// `definition` of a source.
#[derive(Debug, Clone, Object)]
pub struct SourceDefinition {
    /// Always CUSTOM.
    #[oai(rename = "type")]
    pub kind: SourceKind,
}

/// A field as sent.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct FieldInput {
    /// Field name.
    pub name: String,
    /// JSON pointer such as `/title`.
    pub content_selector: String,
    /// Data type, e.g. TEXT.
    pub data_type: DataType,
}

/// A tag config as sent.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct TagConfigInput {
    /// SIMPLE or HIERARCHICAL.
    #[oai(rename = "type")]
    pub kind: TagType,
    /// Display name.
    pub name: String,
    /// Caller's id; uploads and facets refer to the tag by it.
    pub external_id: String,
    /// Value type.
    pub data_type: DataType,
    /// Whether one record may carry several values (default false).
    #[oai(default)]
    pub allow_multiple_values: bool,
}

/// Reference to a tag config by its externalId.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct TagConfigRef {
    /// The tag config's externalId.
    pub external_id: String,
}

/// A facet as sent.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct FacetInput {
    /// Always TAG.
    #[oai(rename = "type")]
    pub kind: FacetType,
    /// Display name in filters.
    pub name: String,
    /// The tag the facet is over; must exist in tagConfigs.
    pub tag_config: TagConfigRef,
    /// Only on a DATE_TIME tag.
    pub target_type: Option<FacetTargetType>,
    /// Whether several values may be selected (default false).
    #[oai(default)]
    pub allow_multiple_values: bool,
}

/// Templates of a STRUCTURED object type. Each is at most 10,000 characters with at most 100
/// field references (400 naming the template beyond).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Templates {
    /// Builds the title, e.g. `${f_title}`; renders at most 4,096 bytes (a push beyond is 400).
    #[oai(skip_serializing_if_is_none)]
    pub title_template: Option<String>,
    /// Builds the url; renders at most 8,192 bytes.
    #[oai(skip_serializing_if_is_none)]
    pub external_url_template: Option<String>,
    /// Builds the searchable text; renders at most 4,000,000 bytes.
    #[oai(skip_serializing_if_is_none)]
    pub search_template: Option<String>,
}

/// An object type as sent.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ObjectTypeInput {
    /// Display name.
    pub name: String,
    /// Caller's id, unique within the source.
    pub external_id: String,
    /// RECORD or STRUCTURED.
    pub source_data_type: SourceDataType,
    /// `JSON` allows attaching files to STRUCTURED records.
    pub data_type: Option<ObjectDataType>,
    /// Fields (RECORD: fixed title, url, content; may be omitted).
    #[oai(default)]
    pub fields: Vec<FieldInput>,
    /// Tags records may carry.
    #[oai(default)]
    pub tag_configs: Vec<TagConfigInput>,
    /// Facets over tags.
    #[oai(default)]
    pub facets: Vec<FacetInput>,
    /// STRUCTURED only.
    pub templates: Option<Templates>,
    /// This object type's mass-removal guard (an addition to the spec): the largest share, in
    /// percent (0 to 100), of its live records a COMPLETE close may remove without
    /// `allowMassRemoval`. Overrides the operator's `--complete-max-removal`; absent, that holds.
    #[oai(validator(minimum(value = "0"), maximum(value = "100")))]
    pub complete_max_removal: Option<f64>,
    /// Who may read records pushed without an access list (an addition to the spec;
    /// `EVERYONE` when absent, the spec's behaviour).
    pub default_access: Option<DefaultAccess>,
}

/// `config.specification.application`.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Application {
    /// The source's object types.
    pub object_types: Vec<ObjectTypeInput>,
}

/// `config.specification`.
#[derive(Debug, Clone, Object)]
pub struct Specification {
    /// The application.
    pub application: Application,
}

/// `config` of a create-source request.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SourceConfigInput {
    /// Always CUSTOM.
    #[oai(rename = "type")]
    pub kind: SourceKind,
    /// Display name.
    pub name: String,
    /// Must be true for file upload (default false).
    #[oai(default)]
    pub track_status: bool,
    /// Object types.
    pub specification: Specification,
}

/// Create-source request (spec 2.3).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct CreateSource {
    /// Source definition.
    pub definition: SourceDefinition,
    /// Caller's id for the source.
    pub external_id: String,
    /// Source configuration.
    pub config: SourceConfigInput,
}

impl From<CreateSource> for core_source::NewSource {
    fn from(s: CreateSource) -> Self {
        Self {
            definition_type: core_source::CUSTOM.into(),
            config_type: core_source::CUSTOM.into(),
            external_id: s.external_id,
            name: s.config.name,
            track_status: s.config.track_status,
            object_types: s
                .config
                .specification
                .application
                .object_types
                .into_iter()
                .map(Into::into)
                .collect(),
        }
    }
}

impl From<ObjectTypeInput> for core_source::NewObjectType {
    fn from(o: ObjectTypeInput) -> Self {
        Self {
            name: o.name,
            external_id: o.external_id,
            source_data_type: o.source_data_type.into(),
            data_type: o.data_type.map(Into::into),
            fields: o
                .fields
                .into_iter()
                .map(|f| core_source::NewField {
                    name: f.name,
                    content_selector: f.content_selector,
                    data_type: f.data_type.into(),
                })
                .collect(),
            tag_configs: o.tag_configs.into_iter().map(Into::into).collect(),
            facets: o.facets.into_iter().map(Into::into).collect(),
            templates: o.templates.map(|t| core_source::Templates {
                title_template: t.title_template,
                external_url_template: t.external_url_template,
                search_template: t.search_template,
            }),
            complete_max_removal: o.complete_max_removal,
            default_access: o.default_access.map(Into::into).unwrap_or_default(),
        }
    }
}

impl From<TagConfigInput> for core_source::NewTagConfig {
    fn from(t: TagConfigInput) -> Self {
        Self {
            tag_type: t.kind.into(),
            name: t.name,
            external_id: t.external_id,
            data_type: t.data_type.into(),
            allow_multiple_values: t.allow_multiple_values,
        }
    }
}

impl From<FacetInput> for core_source::NewFacet {
    fn from(f: FacetInput) -> Self {
        Self {
            facet_type: f.kind.into(),
            name: f.name,
            tag_external_id: f.tag_config.external_id,
            target_type: f.target_type.map(Into::into),
            allow_multiple_values: f.allow_multiple_values,
        }
    }
}

/// A change to an object type's settings (`PATCH .../objecttypes/{objectTypeId}`).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct PatchObjectType {
    /// The object type's mass-removal guard in percent (0 to 100); `null` removes it, so the
    /// operator's `--complete-max-removal` holds again; absent keeps it.
    #[oai(validator(minimum(value = "0"), maximum(value = "100")))]
    pub complete_max_removal: poem_openapi::types::MaybeUndefined<f64>,
    /// Who may read records pushed without an access list; absent keeps it. Changing it needs
    /// an administrator's API token and no re-indexing.
    pub default_access: Option<DefaultAccess>,
}

/// A change to a source's own settings (`PATCH /sources/{sourceId}`); absent fields keep their
/// value. The source's externalId and object types are not changed here.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct PatchSource {
    /// New display name.
    pub name: Option<String>,
    /// New trackStatus (true allows file uploads).
    pub track_status: Option<bool>,
}

impl From<PatchSource> for core_source::SourcePatch {
    fn from(p: PatchSource) -> Self {
        Self {
            name: p.name,
            track_status: p.track_status,
        }
    }
}

/// A stored field.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct FieldOut {
    /// Field id (names the file part when attaching a file to a STRUCTURED record).
    pub id: Uuid,
    /// Field name.
    pub name: String,
    /// JSON pointer.
    pub content_selector: String,
    /// Data type.
    pub data_type: DataType,
}

/// A stored tag config.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct TagConfigOut {
    /// Tag config id (the folder endpoints take it).
    pub id: Uuid,
    /// SIMPLE or HIERARCHICAL.
    #[oai(rename = "type")]
    pub kind: TagType,
    /// Display name.
    pub name: String,
    /// Caller's id.
    pub external_id: String,
    /// Value type.
    pub data_type: DataType,
    /// Several values per record.
    pub allow_multiple_values: bool,
}

/// A stored facet.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct FacetOut {
    /// Facet id.
    pub id: Uuid,
    /// Always TAG.
    #[oai(rename = "type")]
    pub kind: FacetType,
    /// Display name.
    pub name: String,
    /// The tag.
    pub tag_config: TagConfigRef,
    /// Built-in date filter, if any.
    #[oai(skip_serializing_if_is_none)]
    pub target_type: Option<FacetTargetType>,
    /// Several values selectable.
    pub allow_multiple_values: bool,
}

/// A stored object type.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ObjectTypeOut {
    /// Object type id, used in every later call.
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// Caller's id.
    pub external_id: String,
    /// RECORD or STRUCTURED.
    pub source_data_type: SourceDataType,
    /// Object-level data type.
    #[oai(skip_serializing_if_is_none)]
    pub data_type: Option<ObjectDataType>,
    /// Fields with their ids.
    pub fields: Vec<FieldOut>,
    /// Tag configs with their ids.
    pub tag_configs: Vec<TagConfigOut>,
    /// Facets with their ids.
    pub facets: Vec<FacetOut>,
    /// STRUCTURED templates.
    #[oai(skip_serializing_if_is_none)]
    pub templates: Option<Templates>,
    /// This object type's mass-removal guard, in percent, when it has its own.
    #[oai(skip_serializing_if_is_none)]
    pub complete_max_removal: Option<f64>,
    /// Who may read records pushed without an access list.
    pub default_access: DefaultAccess,
}

/// `config` of a stored source.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SourceConfigOut {
    /// Always CUSTOM.
    #[oai(rename = "type")]
    pub kind: SourceKind,
    /// Display name.
    pub name: String,
    /// Whether uploads are accepted.
    pub track_status: bool,
}

/// A stored source.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SourceOut {
    /// Source id, used in every later call.
    pub id: Uuid,
    /// Caller's id.
    pub external_id: String,
    /// Definition.
    pub definition: SourceDefinition,
    /// Configuration.
    pub config: SourceConfigOut,
    /// Object types with their ids.
    pub source_object_types: Vec<ObjectTypeOut>,
    /// When it was created.
    pub created_date: String,
}

impl From<core_source::Source> for SourceOut {
    fn from(s: core_source::Source) -> Self {
        Self {
            id: s.id,
            external_id: s.external_id,
            definition: SourceDefinition {
                kind: SourceKind::Custom,
            },
            config: SourceConfigOut {
                kind: SourceKind::Custom,
                name: s.name,
                track_status: s.track_status,
            },
            created_date: time::format(&s.created_date),
            source_object_types: s.object_types.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<core_source::ObjectType> for ObjectTypeOut {
    fn from(o: core_source::ObjectType) -> Self {
        Self {
            id: o.id,
            name: o.name,
            external_id: o.external_id,
            source_data_type: o.source_data_type.into(),
            data_type: o.data_type.map(Into::into),
            fields: o
                .fields
                .into_iter()
                .map(|f| FieldOut {
                    id: f.id,
                    name: f.name,
                    content_selector: f.content_selector,
                    data_type: f.data_type.into(),
                })
                .collect(),
            tag_configs: o.tag_configs.into_iter().map(Into::into).collect(),
            facets: o.facets.into_iter().map(Into::into).collect(),
            templates: o.templates.map(|t| Templates {
                title_template: t.title_template,
                external_url_template: t.external_url_template,
                search_template: t.search_template,
            }),
            complete_max_removal: o.complete_max_removal,
            default_access: o.default_access.into(),
        }
    }
}

impl From<core_source::TagConfig> for TagConfigOut {
    fn from(t: core_source::TagConfig) -> Self {
        Self {
            id: t.id,
            kind: t.tag_type.into(),
            name: t.name,
            external_id: t.external_id,
            data_type: t.data_type.into(),
            allow_multiple_values: t.allow_multiple_values,
        }
    }
}

impl From<core_source::Facet> for FacetOut {
    fn from(f: core_source::Facet) -> Self {
        Self {
            id: f.id,
            kind: f.facet_type.into(),
            name: f.name,
            tag_config: TagConfigRef {
                external_id: f.tag_external_id,
            },
            target_type: f.target_type.map(Into::into),
            allow_multiple_values: f.allow_multiple_values,
        }
    }
}

/// The object type as records and syncs show it.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ObjectTypeSummary {
    /// Object type id.
    pub id: Uuid,
    /// Object type name.
    pub name: String,
    /// The open sync, else the latest, else 0; pass it as `syncNumber`.
    pub current_sync_number: i64,
}

impl From<ObjectTypeRef> for ObjectTypeSummary {
    fn from(o: ObjectTypeRef) -> Self {
        Self {
            id: o.id,
            name: o.name,
            current_sync_number: o.current_sync_number,
        }
    }
}

/// Who last stored content.
#[derive(Debug, Clone, Object)]
pub struct ModifiedBy {
    /// The user's e-mail.
    pub email: String,
}

/// Record metadata (spec 2.4): the body of upload, metadata and checksum-skip responses.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct RecordMetadata {
    /// 1 when created, incremented on every stored upload.
    pub version: i64,
    /// Record id.
    pub id: Uuid,
    /// The object type.
    pub object_type: ObjectTypeSummary,
    /// Caller's id.
    pub external_id: String,
    /// Creation time, millisecond precision with offset.
    pub created_date: String,
    /// Last content change, same form.
    pub modified_date: String,
    /// The checksum sent with the last stored upload; absent on a removed record.
    #[oai(skip_serializing_if_is_none)]
    pub external_checksum: Option<String>,
    /// Who last stored content.
    pub modified_by: ModifiedBy,
    /// How this request's file extraction went: present only on an upload that extracted a
    /// file (not on a checksum skip, a JSON push or a metadata read). An addition to spec 2.4:
    /// a file that cannot be read is still stored with empty content, and this says why.
    #[oai(skip_serializing_if_is_none)]
    pub extraction: Option<ExtractionOut>,
    /// `true` on a tombstone in the record listing (`listObjects` with `includeRemoved`);
    /// absent otherwise.
    #[oai(skip_serializing_if_is_none)]
    pub removed: Option<bool>,
    /// Present only on an upload skipped because its `externalChecksum` equals the stored one
    /// (spec 4.4): the content was not read, and the upload's tag headers and `externalUrl` were not
    /// applied; the record keeps its stored ones. An addition to spec 2.4.
    #[oai(skip_serializing_if_is_none)]
    pub skipped: Option<SkippedOut>,
}

/// Why an upload was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SkipReason {
    /// The upload's `externalChecksum` equals the stored checksum.
    ChecksumUnchanged,
}

/// Why an upload stored nothing new.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SkippedOut {
    /// Why the upload was skipped.
    pub reason: SkipReason,
    /// The same in a sentence, with what to do to replace the tags or URL.
    pub detail: String,
}

impl SkippedOut {
    /// The skip of an upload whose checksum equals the stored one.
    pub fn checksum_unchanged() -> Self {
        Self {
            reason: SkipReason::ChecksumUnchanged,
            detail: "externalChecksum equals the stored checksum, so the content was not read and \
                     this upload's tags and externalUrl were not applied (the stored ones are \
                     kept); upload with a new externalChecksum, or without one, to replace them"
                .into(),
        }
    }
}

impl From<&Record> for RecordMetadata {
    fn from(r: &Record) -> Self {
        Self {
            version: r.version,
            id: r.id,
            object_type: r.object_type.clone().into(),
            external_id: r.external_id.clone(),
            created_date: time::format(&r.created_date),
            modified_date: time::format(&r.modified_date),
            external_checksum: r.visible_checksum().map(Into::into),
            modified_by: ModifiedBy {
                email: r.modified_by.clone(),
            },
            extraction: None,
            removed: None,
            skipped: None,
        }
    }
}

impl From<&Extraction> for ExtractionOut {
    fn from(e: &Extraction) -> Self {
        Self {
            format: e.format.clone(),
            extractor_version: e.version,
            characters: e.chars,
            truncated: e.truncated,
            failure: e.failure.clone(),
            metadata: e.metadata.as_ref().map(DocumentMetadataOut::from),
        }
    }
}

/// What the document says about itself, as its format carries it; for an e-mail the subject
/// (title), sender (authors), recipients and date (created). The record's title is not taken
/// from it (spec 2.4).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct DocumentMetadataOut {
    /// The document's own title (an e-mail's subject).
    #[oai(skip_serializing_if_is_none)]
    pub title: Option<String>,
    /// Its authors (an e-mail's sender).
    #[oai(skip_serializing_if_is_none)]
    pub authors: Option<Vec<String>>,
    /// An e-mail's recipients.
    #[oai(skip_serializing_if_is_none)]
    pub recipients: Option<Vec<String>>,
    /// When it was created (an e-mail's date): RFC 3339 when the format's date could be read,
    /// else as the document states it.
    #[oai(skip_serializing_if_is_none)]
    pub created: Option<String>,
    /// When it was last modified.
    #[oai(skip_serializing_if_is_none)]
    pub modified: Option<String>,
    /// Pages, slides or sheets.
    #[oai(skip_serializing_if_is_none)]
    pub pages: Option<u32>,
    /// Its language: as the format declares it, else detected from the text (ISO 639 code).
    #[oai(skip_serializing_if_is_none)]
    pub language: Option<String>,
}

impl From<&inlet_core::extract::DocumentMetadata> for DocumentMetadataOut {
    fn from(m: &inlet_core::extract::DocumentMetadata) -> Self {
        Self {
            title: m.title.clone(),
            authors: (!m.authors.is_empty()).then(|| m.authors.clone()),
            recipients: (!m.recipients.is_empty()).then(|| m.recipients.clone()),
            created: m.created.clone(),
            modified: m.modified.clone(),
            pages: m.pages,
            language: m.language.clone(),
        }
    }
}

/// How text extraction went.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ExtractionOut {
    /// Detected format id (e.g. `pdf`, `markdown`); absent when none was recognized.
    #[oai(skip_serializing_if_is_none)]
    pub format: Option<String>,
    /// The version of the `format`'s extractor that read the file; a newer one reads it again
    /// from its original. Absent when no extractor recognized it, and for records read before
    /// versions were kept.
    #[oai(skip_serializing_if_is_none)]
    pub extractor_version: Option<u32>,
    /// Characters of text kept.
    pub characters: u64,
    /// Whether the text was cut at the 1,000,000-character cap.
    pub truncated: bool,
    /// Why extraction failed or stopped early, if it did.
    #[oai(skip_serializing_if_is_none)]
    pub failure: Option<String>,
    /// What the document says about itself (title, authors, dates, pages, language), when
    /// anything.
    #[oai(skip_serializing_if_is_none)]
    pub metadata: Option<DocumentMetadataOut>,
}

/// A whole stored record: metadata, stored fields, tags and extraction outcome.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct RecordOut {
    /// 1 when created, incremented on every stored upload.
    pub version: i64,
    /// Record id.
    pub id: Uuid,
    /// The object type.
    pub object_type: ObjectTypeSummary,
    /// Caller's id.
    pub external_id: String,
    /// Creation time.
    pub created_date: String,
    /// Last content change.
    pub modified_date: String,
    /// Checksum of the last stored upload; absent on a removed record.
    #[oai(skip_serializing_if_is_none)]
    pub external_checksum: Option<String>,
    /// Who last stored content.
    pub modified_by: ModifiedBy,
    /// Normalized file name.
    pub title: String,
    /// Link into the external system.
    #[oai(skip_serializing_if_is_none)]
    pub url: Option<String>,
    /// Extracted text.
    pub content: String,
    /// Tag externalId -> values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// The last sync the record was uploaded or touched in.
    pub sync_number: i64,
    /// Removed by a sync or deleted (revived by the next upload).
    pub removed: bool,
    /// How extraction went.
    pub extraction: ExtractionOut,
}

impl From<Record> for RecordOut {
    fn from(r: Record) -> Self {
        let meta = RecordMetadata::from(&r);
        Self {
            version: meta.version,
            id: meta.id,
            object_type: meta.object_type,
            external_id: meta.external_id,
            created_date: meta.created_date,
            modified_date: meta.modified_date,
            external_checksum: meta.external_checksum,
            modified_by: meta.modified_by,
            title: r.title,
            url: r.url,
            content: r.content,
            tags: r
                .tags
                .into_iter()
                .map(|(k, vs)| (k, vs.iter().map(|v| v.canonical()).collect()))
                .collect(),
            sync_number: r.sync_number,
            removed: r.removed,
            extraction: ExtractionOut::from(&r.extraction),
        }
    }
}

/// Open-sync request.
#[derive(Debug, Clone, Object)]
pub struct OpenSync {
    /// START_INITIAL for the first sync of the object type, START afterwards.
    pub operation: OpenOperation,
}

/// Close-sync request.
#[derive(Debug, Clone, Object)]
pub struct CloseSync {
    /// COMPLETE removes records not uploaded or touched in the sync; COMPLETE_INCREMENTAL and
    /// FAIL remove nothing.
    pub operation: CloseOperation,
    /// Lets a COMPLETE close remove more than the operator's mass-removal limit
    /// (`--complete-max-removal`); without it such a close answers 409 and the sync stays open.
    #[oai(rename = "allowMassRemoval", skip_serializing_if_is_none)]
    pub allow_mass_removal: Option<bool>,
}

/// A sync run.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SyncOut {
    /// Pass it as `syncNumber` on uploads and touches while the sync is open.
    pub sync_number: i64,
    /// OPEN, COMPLETED or FAILED.
    pub state: SyncState,
    /// The opening operation.
    pub operation: OpenOperation,
    /// The closing operation, once closed.
    #[oai(skip_serializing_if_is_none)]
    pub close_operation: Option<CloseOperation>,
    /// When it was opened.
    pub started_at: String,
    /// When it was closed.
    #[oai(skip_serializing_if_is_none)]
    pub closed_at: Option<String>,
    /// The object type.
    pub object_type: ObjectTypeSummary,
    /// Uploads that stored content.
    pub uploaded: u64,
    /// Touches.
    pub touched: u64,
    /// Uploads skipped because the checksum was unchanged.
    pub unchanged: u64,
    /// Uploads stored with empty content because extraction failed.
    pub extraction_failures: u64,
    /// Records removed by the close.
    pub removed: u64,
    /// Live records after the close.
    #[oai(skip_serializing_if_is_none)]
    pub kept: Option<u64>,
}

impl SyncOut {
    /// The wire form of a run of the object type `name`, whose current sync number is `current`.
    pub fn new(run: SyncRun, name: String, current: i64) -> Self {
        Self {
            sync_number: run.sync_number,
            state: run.state.into(),
            operation: run.operation.into(),
            close_operation: run.close_operation.map(Into::into),
            started_at: time::format(&run.started_at),
            closed_at: run.closed_at.as_ref().map(time::format),
            object_type: ObjectTypeSummary {
                id: run.object_type_id,
                name,
                current_sync_number: current,
            },
            uploaded: run.counters.uploaded,
            touched: run.counters.touched,
            unchanged: run.counters.unchanged,
            extraction_failures: run.counters.extraction_failures,
            removed: run.counters.removed,
            kept: run.kept,
        }
    }
}
