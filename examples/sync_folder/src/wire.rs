//! What Inlet answers, as the tool reads it: sources, object types, syncs, record metadata and
//! folders (the fields it uses; serde skips the rest).

use serde::Deserialize;

/// A source as `GET /sources/{id}` shows it (the fields the tool reads).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// Source id.
    pub id: String,
    /// The caller's id.
    pub external_id: String,
    /// Configuration.
    pub config: SourceConfig,
    /// Object types.
    pub source_object_types: Vec<ObjectType>,
}

/// `config` of a source.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceConfig {
    /// Display name.
    pub name: String,
    /// Uploads are refused (404) without it.
    pub track_status: bool,
}

/// An object type of a source.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectType {
    /// Object type id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The caller's id.
    pub external_id: String,
    /// `RECORD` or `STRUCTURED`.
    pub source_data_type: String,
    /// Tag configs.
    #[serde(default)]
    pub tag_configs: Vec<TagConfig>,
    /// Facets.
    #[serde(default)]
    pub facets: Vec<Facet>,
}

/// A tag config of an object type.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagConfig {
    /// Tag config id (the folder endpoints take it).
    pub id: String,
    /// `SIMPLE` or `HIERARCHICAL`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The caller's id (the tag header names it).
    pub external_id: String,
    /// Value type.
    pub data_type: String,
}

/// A facet of an object type.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facet {
    /// Facet id (the folder listing takes it).
    pub id: String,
    /// The tag it counts.
    pub tag_config: TagRef,
}

/// A reference to a tag config by externalId.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagRef {
    /// The tag's externalId.
    pub external_id: String,
}

/// A sync run.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sync {
    /// Passed on every upload and touch.
    pub sync_number: i64,
    /// `OPEN`, `COMPLETED` or `FAILED`.
    pub state: String,
    /// Records removed by the close.
    #[serde(default)]
    pub removed: u64,
}

/// A record's metadata (spec 2.4, the fields the tool reads).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Record version.
    pub version: i64,
    /// The stored checksum; absent on a record removed by an earlier sync.
    pub external_checksum: Option<String>,
    /// How the server's text extraction went; only on an upload that extracted the file.
    #[serde(default)]
    pub extraction: Option<Extraction>,
}

/// How the server read an uploaded file (the fields the tool reads).
#[derive(Debug, Clone, Deserialize)]
pub struct Extraction {
    /// Why the text could not be read (the record is stored with empty content).
    #[serde(default)]
    pub failure: Option<String>,
}

/// A folder of a HIERARCHICAL tag.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folder {
    /// The folder's externalId (records carry it as the tag value).
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Parent folder; absent for a root.
    pub parent_external_id: Option<String>,
}

/// What a touch found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touched {
    /// The record is part of the sync (204).
    Yes,
    /// The stored checksum is not the expected one any more (412).
    Changed,
    /// No current record (404).
    Missing,
}

/// What deleting a folder did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderDeleted {
    /// Gone (204).
    Yes,
    /// It still has records or child folders (409), e.g. another object type's.
    InUse,
}
