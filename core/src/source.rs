//! Sources and their object types, fields, tag configs and facets (spec 2.3), with validation.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{Error, Result, WorkspaceId, template, time::Timestamp};

/// The only source kind (`definition.type` and `config.type`) the interface knows.
pub const CUSTOM: &str = "CUSTOM";

/// The fixed fields of a RECORD object type.
pub const RECORD_FIELDS: [&str; 3] = ["title", "url", "content"];

/// Whether an object type holds files or JSON records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceDataType {
    /// Files: title, url and extracted content.
    Record,
    /// JSON records read through fields and templates.
    Structured,
}

/// Object-type level data type; `JSON` allows attaching a file to a STRUCTURED record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ObjectDataType {
    /// Records are JSON documents.
    Json,
}

/// Data type of a field or tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DataType {
    /// Free text.
    Text,
    /// A signed 64-bit integer.
    Long,
    /// A floating-point number.
    Double,
    /// `true` or `false`.
    Boolean,
    /// An RFC 3339 timestamp or a date.
    DateTime,
}

/// Tag kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TagType {
    /// Plain values.
    Simple,
    /// Values are folders of a caller-defined tree.
    Hierarchical,
}

/// Facet kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FacetType {
    /// A facet over one tag's values.
    Tag,
}

/// Built-in date filter a DATE_TIME tag facet stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FacetTargetType {
    /// The record's creation date in the external system.
    CreatedDate,
    /// The record's modification date in the external system.
    ModifiedDate,
}

/// A field of an object type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// Field id (used to name the file part when attaching a file to a STRUCTURED record).
    pub id: Uuid,
    /// Field name, referenced by templates as `${f_<name>}`.
    pub name: String,
    /// JSON pointer into the record (e.g. `/title`).
    pub content_selector: String,
    /// The field's data type.
    pub data_type: DataType,
}

/// A tag an object type's records may carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagConfig {
    /// Tag config id.
    pub id: Uuid,
    /// SIMPLE or HIERARCHICAL.
    #[serde(rename = "type")]
    pub tag_type: TagType,
    /// Display name.
    pub name: String,
    /// Caller's id; uploads and facets refer to the tag by it.
    pub external_id: String,
    /// Data type of the values.
    pub data_type: DataType,
    /// Whether one record may carry several values.
    pub allow_multiple_values: bool,
}

/// A facet over a tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facet {
    /// Facet id.
    pub id: Uuid,
    /// Always TAG.
    #[serde(rename = "type")]
    pub facet_type: FacetType,
    /// Display name in filters.
    pub name: String,
    /// The tag config's externalId.
    pub tag_external_id: String,
    /// Maps a DATE_TIME tag onto a built-in date filter.
    pub target_type: Option<FacetTargetType>,
    /// Whether several values may be selected at once.
    pub allow_multiple_values: bool,
}

/// Templates of a STRUCTURED object type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Templates {
    /// Builds the record title.
    pub title_template: Option<String>,
    /// Builds the record url.
    pub external_url_template: Option<String>,
    /// Builds the record's searchable text.
    pub search_template: Option<String>,
}

impl Templates {
    /// Each template set, with its name as the API spells it.
    fn all(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("titleTemplate", &self.title_template),
            ("externalUrlTemplate", &self.external_url_template),
            ("searchTemplate", &self.search_template),
        ]
        .into_iter()
        .filter_map(|(what, t)| t.as_deref().map(|t| (what, t)))
    }
}

/// An object type of a source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectType {
    /// Object type id.
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// Caller's id.
    pub external_id: String,
    /// RECORD or STRUCTURED.
    pub source_data_type: SourceDataType,
    /// Optional object-level data type.
    pub data_type: Option<ObjectDataType>,
    /// Fields; RECORD types have exactly title, url and content.
    pub fields: Vec<Field>,
    /// Tags records may carry.
    pub tag_configs: Vec<TagConfig>,
    /// Facets over tags.
    pub facets: Vec<Facet>,
    /// STRUCTURED only.
    pub templates: Option<Templates>,
    /// This object type's mass-removal guard, in percent: overrides the operator's
    /// `--complete-max-removal` ([`crate::sync::check_mass_removal`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_max_removal: Option<f64>,
    /// Who may read its records pushed without an access list ([`crate::access`]).
    #[serde(default)]
    pub default_access: crate::access::DefaultAccess,
}

impl ObjectType {
    /// The tag config with this externalId.
    pub fn tag_config(&self, external_id: &str) -> Option<&TagConfig> {
        self.tag_configs
            .iter()
            .find(|t| t.external_id == external_id)
    }

    /// The field with this id.
    pub fn field(&self, id: Uuid) -> Option<&Field> {
        self.fields.iter().find(|f| f.id == id)
    }
}

/// A custom source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// Source id.
    pub id: Uuid,
    /// Owning workspace.
    pub workspace_id: WorkspaceId,
    /// Caller's id for the source.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Must be true for file upload.
    pub track_status: bool,
    /// Object types.
    pub object_types: Vec<ObjectType>,
    /// When the source was created.
    pub created_date: Timestamp,
}

impl Source {
    /// The object type with this id.
    pub fn object_type(&self, id: Uuid) -> Option<&ObjectType> {
        self.object_types.iter().find(|o| o.id == id)
    }
}

/// A field as sent at source creation.
#[derive(Debug, Clone)]
pub struct NewField {
    /// Field name.
    pub name: String,
    /// JSON pointer.
    pub content_selector: String,
    /// Data type.
    pub data_type: DataType,
}

/// A tag config as sent at source creation.
#[derive(Debug, Clone)]
pub struct NewTagConfig {
    /// SIMPLE or HIERARCHICAL.
    pub tag_type: TagType,
    /// Display name.
    pub name: String,
    /// Caller's id.
    pub external_id: String,
    /// Value type.
    pub data_type: DataType,
    /// Several values per record.
    pub allow_multiple_values: bool,
}

/// A facet as sent at source creation.
#[derive(Debug, Clone)]
pub struct NewFacet {
    /// Always TAG.
    pub facet_type: FacetType,
    /// Display name.
    pub name: String,
    /// Must name a tag config of the same object type.
    pub tag_external_id: String,
    /// Only on a DATE_TIME tag.
    pub target_type: Option<FacetTargetType>,
    /// Several values selectable.
    pub allow_multiple_values: bool,
}

/// An object type as sent at source creation.
#[derive(Debug, Clone)]
pub struct NewObjectType {
    /// Display name.
    pub name: String,
    /// Caller's id, unique within the source.
    pub external_id: String,
    /// RECORD or STRUCTURED.
    pub source_data_type: SourceDataType,
    /// Optional object-level data type.
    pub data_type: Option<ObjectDataType>,
    /// Fields (RECORD: optional, and only title/url/content).
    pub fields: Vec<NewField>,
    /// Tag configs.
    pub tag_configs: Vec<NewTagConfig>,
    /// Facets.
    pub facets: Vec<NewFacet>,
    /// STRUCTURED only.
    pub templates: Option<Templates>,
    /// The object type's own mass-removal guard, in percent (0 to 100).
    pub complete_max_removal: Option<f64>,
    /// Who may read its records pushed without an access list (`EVERYONE` unless set).
    pub default_access: crate::access::DefaultAccess,
}

/// The whole create-source request, independent of its wire form.
#[derive(Debug, Clone)]
pub struct NewSource {
    /// `definition.type`, must be CUSTOM.
    pub definition_type: String,
    /// `config.type`, must be CUSTOM.
    pub config_type: String,
    /// Caller's id for the source.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Must be true for uploads to be accepted.
    pub track_status: bool,
    /// Object types.
    pub object_types: Vec<NewObjectType>,
}

/// An identifier or name of the configuration: not empty, one line of at most
/// [`crate::input::MAX_ID_BYTES`].
fn require_nonempty(value: &str, what: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{what} must not be empty")));
    }
    crate::input::check_line(what, value, crate::input::MAX_ID_BYTES)
}

fn check_unique<'a>(values: impl IntoIterator<Item = &'a str>, what: &str) -> Result<()> {
    let mut seen = HashSet::new();
    for v in values {
        if !seen.insert(v) {
            return Err(Error::invalid(format!("duplicate {what} '{v}'")));
        }
    }
    Ok(())
}

impl NewSource {
    /// Validates the whole configuration and assigns ids, making the stored [`Source`].
    pub fn build(self, workspace_id: WorkspaceId, now: Timestamp) -> Result<Source> {
        if self.definition_type != CUSTOM {
            return Err(Error::invalid("definition.type must be CUSTOM"));
        }
        if self.config_type != CUSTOM {
            return Err(Error::invalid("config.type must be CUSTOM"));
        }
        require_nonempty(&self.external_id, "externalId")?;
        require_nonempty(&self.name, "config.name")?;
        if self.object_types.is_empty() {
            return Err(Error::invalid(
                "config.specification.application.objectTypes must name at least one object type",
            ));
        }
        check_unique(
            self.object_types.iter().map(|o| o.external_id.as_str()),
            "object type externalId",
        )?;
        let object_types = self
            .object_types
            .into_iter()
            .map(NewObjectType::build)
            .collect::<Result<Vec<_>>>()?;
        Ok(Source {
            id: Uuid::new_v4(),
            workspace_id,
            external_id: self.external_id,
            name: self.name,
            track_status: self.track_status,
            object_types,
            created_date: now,
        })
    }
}

impl NewTagConfig {
    /// Validates the tag config and gives it an id.
    pub fn build(self) -> Result<TagConfig> {
        require_nonempty(&self.external_id, "tag config externalId")?;
        crate::input::check_line("tag config name", &self.name, crate::input::MAX_ID_BYTES)?;
        if self.external_id.contains(':') {
            return Err(Error::invalid(format!(
                "tag config externalId '{}' must not contain ':' (the tag header splits there)",
                self.external_id
            )));
        }
        Ok(TagConfig {
            id: Uuid::new_v4(),
            tag_type: self.tag_type,
            name: self.name,
            external_id: self.external_id,
            data_type: self.data_type,
            allow_multiple_values: self.allow_multiple_values,
        })
    }
}

impl NewFacet {
    /// Validates the facet against its object type's tag configs and gives it an id.
    pub fn build(self, tag_configs: &[TagConfig]) -> Result<Facet> {
        crate::input::check_line("facet name", &self.name, crate::input::MAX_ID_BYTES)?;
        let tag = tag_configs
            .iter()
            .find(|t| t.external_id == self.tag_external_id)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "facet '{}' names tag '{}', which is not in the object type's tagConfigs",
                    self.name, self.tag_external_id
                ))
            })?;
        if self.target_type.is_some() && tag.data_type != DataType::DateTime {
            return Err(Error::invalid(format!(
                "facet '{}': targetType is only allowed on a DATE_TIME tag",
                self.name
            )));
        }
        Ok(Facet {
            id: Uuid::new_v4(),
            facet_type: self.facet_type,
            name: self.name,
            tag_external_id: self.tag_external_id,
            target_type: self.target_type,
            allow_multiple_values: self.allow_multiple_values,
        })
    }
}

/// A change to a source's own settings (`PATCH /sources/{sourceId}`); absent fields keep
/// their value.
#[derive(Debug, Clone, Default)]
pub struct SourcePatch {
    /// New display name.
    pub name: Option<String>,
    /// New trackStatus.
    pub track_status: Option<bool>,
}

impl Source {
    /// Applies a patch of the source's own settings.
    pub fn patch(&mut self, patch: SourcePatch) -> Result<()> {
        if let Some(name) = patch.name {
            require_nonempty(&name, "name")?;
            self.name = name;
        }
        if let Some(track) = patch.track_status {
            self.track_status = track;
        }
        Ok(())
    }

    /// Adds an object type (validated as at creation); returns its id.
    pub fn add_object_type(&mut self, new: NewObjectType) -> Result<Uuid> {
        if self
            .object_types
            .iter()
            .any(|o| o.external_id == new.external_id)
        {
            return Err(Error::conflict(format!(
                "the source already has an object type with externalId '{}'",
                new.external_id
            )));
        }
        let ot = new.build()?;
        let id = ot.id;
        self.object_types.push(ot);
        Ok(id)
    }

    fn object_type_mut(&mut self, id: Uuid) -> Result<&mut ObjectType> {
        let source = self.id;
        self.object_types
            .iter_mut()
            .find(|o| o.id == id)
            .ok_or_else(|| {
                Error::not_found(format!("object type {id} not found in source {source}"))
            })
    }

    /// Adds a tag config to an object type; returns its id.
    pub fn add_tag_config(&mut self, object_type_id: Uuid, new: NewTagConfig) -> Result<Uuid> {
        let ot = self.object_type_mut(object_type_id)?;
        if ot
            .tag_configs
            .iter()
            .any(|t| t.external_id == new.external_id)
        {
            return Err(Error::conflict(format!(
                "object type '{}' already has a tag config with externalId '{}'",
                ot.external_id, new.external_id
            )));
        }
        let tag = new.build()?;
        let id = tag.id;
        ot.tag_configs.push(tag);
        Ok(id)
    }

    /// Adds a facet over one of an object type's tag configs; returns its id.
    pub fn add_facet(&mut self, object_type_id: Uuid, new: NewFacet) -> Result<Uuid> {
        let ot = self.object_type_mut(object_type_id)?;
        let facet = new.build(&ot.tag_configs)?;
        let id = facet.id;
        ot.facets.push(facet);
        Ok(id)
    }
}

impl NewObjectType {
    fn build(self) -> Result<ObjectType> {
        let ot = &self.external_id;
        let complete_max_removal = self
            .complete_max_removal
            .map(crate::sync::check_removal_share)
            .transpose()?;
        require_nonempty(&self.name, "object type name")?;
        require_nonempty(ot, "object type externalId")?;
        let fields = match self.source_data_type {
            SourceDataType::Record => {
                if self.templates.is_some() {
                    return Err(Error::invalid(format!(
                        "object type '{ot}': templates are only for STRUCTURED object types"
                    )));
                }
                if let Some(f) = self
                    .fields
                    .iter()
                    .find(|f| !RECORD_FIELDS.contains(&f.name.as_str()))
                {
                    return Err(Error::invalid(format!(
                        "object type '{ot}': a RECORD object type has the fixed fields title, url and content; '{}' is not one of them",
                        f.name
                    )));
                }
                check_unique(self.fields.iter().map(|f| f.name.as_str()), "field name")?;
                RECORD_FIELDS
                    .iter()
                    .map(|name| Field {
                        id: Uuid::new_v4(),
                        name: (*name).to_string(),
                        content_selector: format!("/{name}"),
                        data_type: DataType::Text,
                    })
                    .collect()
            }
            SourceDataType::Structured => {
                check_unique(self.fields.iter().map(|f| f.name.as_str()), "field name")?;
                for f in &self.fields {
                    require_nonempty(&f.name, "field name")?;
                    crate::input::check_line(
                        "contentSelector",
                        &f.content_selector,
                        crate::input::MAX_ID_BYTES,
                    )?;
                    if !(f.content_selector.is_empty() || f.content_selector.starts_with('/')) {
                        return Err(Error::invalid(format!(
                            "field '{}': contentSelector must be a JSON pointer such as '/title'",
                            f.name
                        )));
                    }
                }
                let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
                if let Some(t) = &self.templates {
                    for (what, template) in t.all() {
                        template::validate(what, template, &names)?;
                    }
                }
                self.fields
                    .into_iter()
                    .map(|f| Field {
                        id: Uuid::new_v4(),
                        name: f.name,
                        content_selector: f.content_selector,
                        data_type: f.data_type,
                    })
                    .collect()
            }
        };
        check_unique(
            self.tag_configs.iter().map(|t| t.external_id.as_str()),
            "tag config externalId",
        )?;
        let tag_configs: Vec<TagConfig> = self
            .tag_configs
            .into_iter()
            .map(NewTagConfig::build)
            .collect::<Result<_>>()?;
        let facets = self
            .facets
            .into_iter()
            .map(|f| f.build(&tag_configs))
            .collect::<Result<_>>()?;
        Ok(ObjectType {
            complete_max_removal,
            id: Uuid::new_v4(),
            name: self.name,
            external_id: self.external_id,
            source_data_type: self.source_data_type,
            data_type: self.data_type,
            fields,
            tag_configs,
            facets,
            templates: self.templates,
            default_access: self.default_access,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(ext: &str, data_type: DataType) -> NewTagConfig {
        NewTagConfig {
            tag_type: TagType::Simple,
            name: ext.to_uppercase(),
            external_id: ext.into(),
            data_type,
            allow_multiple_values: true,
        }
    }

    fn facet(tag: &str, target: Option<FacetTargetType>) -> NewFacet {
        NewFacet {
            facet_type: FacetType::Tag,
            name: format!("by {tag}"),
            tag_external_id: tag.into(),
            target_type: target,
            allow_multiple_values: true,
        }
    }

    fn record_type(ext: &str) -> NewObjectType {
        NewObjectType {
            default_access: Default::default(),
            complete_max_removal: None,
            name: "Files".into(),
            external_id: ext.into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![tag("color", DataType::Text), tag("due", DataType::DateTime)],
            facets: vec![
                facet("color", None),
                facet("due", Some(FacetTargetType::ModifiedDate)),
            ],
            templates: None,
        }
    }

    fn source(object_types: Vec<NewObjectType>) -> NewSource {
        NewSource {
            definition_type: CUSTOM.into(),
            config_type: CUSTOM.into(),
            external_id: "src".into(),
            name: "Source".into(),
            track_status: true,
            object_types,
        }
    }

    fn build(s: NewSource) -> Result<Source> {
        s.build(Uuid::new_v4(), crate::time::now())
    }

    fn invalid_message(s: NewSource) -> String {
        match build(s) {
            Err(Error::Invalid(m)) => m,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn record_type_gets_the_three_fixed_fields_with_ids() {
        let s = build(source(vec![record_type("files")])).unwrap();
        let ot = &s.object_types[0];
        let names: Vec<_> = ot.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, RECORD_FIELDS);
        assert_eq!(ot.fields[2].content_selector, "/content");
        let ids: HashSet<_> = ot.fields.iter().map(|f| f.id).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(ot.tag_configs.len(), 2);
        assert_eq!(
            ot.facets[1].target_type,
            Some(FacetTargetType::ModifiedDate)
        );
    }

    #[test]
    fn facet_must_name_an_existing_tag() {
        let mut ot = record_type("files");
        ot.facets.push(facet("missing", None));
        assert!(invalid_message(source(vec![ot])).contains("'missing'"));
    }

    #[test]
    fn target_type_only_on_date_time_tags() {
        let mut ot = record_type("files");
        ot.facets = vec![facet("color", Some(FacetTargetType::CreatedDate))];
        assert!(invalid_message(source(vec![ot])).contains("DATE_TIME"));
    }

    #[test]
    fn external_ids_are_unique() {
        assert!(
            invalid_message(source(vec![record_type("a"), record_type("a")]))
                .contains("duplicate object type externalId")
        );
        let mut ot = record_type("a");
        ot.tag_configs.push(tag("color", DataType::Long));
        assert!(invalid_message(source(vec![ot])).contains("duplicate tag config externalId"));
    }

    #[test]
    fn record_type_rejects_foreign_fields_and_templates() {
        let mut ot = record_type("a");
        ot.fields.push(NewField {
            name: "author".into(),
            content_selector: "/author".into(),
            data_type: DataType::Text,
        });
        assert!(invalid_message(source(vec![ot])).contains("'author'"));
        let mut ot = record_type("a");
        ot.templates = Some(Templates::default());
        assert!(invalid_message(source(vec![ot])).contains("templates"));
    }

    #[test]
    fn record_type_accepts_its_own_field_names() {
        let mut ot = record_type("a");
        ot.fields.push(NewField {
            name: "title".into(),
            content_selector: "/title".into(),
            data_type: DataType::Text,
        });
        assert_eq!(
            build(source(vec![ot])).unwrap().object_types[0]
                .fields
                .len(),
            3
        );
    }

    #[test]
    fn kinds_must_be_custom_and_names_present() {
        let mut s = source(vec![record_type("a")]);
        s.definition_type = "OTHER".into();
        assert!(invalid_message(s).contains("definition.type"));
        let mut s = source(vec![record_type("a")]);
        s.config_type = "x".into();
        assert!(invalid_message(s).contains("config.type"));
        let mut s = source(vec![record_type("a")]);
        s.name = " ".into();
        assert!(invalid_message(s).contains("config.name"));
        assert!(invalid_message(source(vec![])).contains("at least one"));
    }

    #[test]
    fn tag_external_id_may_not_contain_colon() {
        let mut ot = record_type("a");
        ot.tag_configs.push(tag("a:b", DataType::Text));
        assert!(invalid_message(source(vec![ot])).contains("':'"));
    }

    #[test]
    fn structured_templates_must_name_declared_fields() {
        let structured = |template: &str| NewObjectType {
            default_access: Default::default(),
            complete_max_removal: None,
            name: "Tickets".into(),
            external_id: "tickets".into(),
            source_data_type: SourceDataType::Structured,
            data_type: Some(ObjectDataType::Json),
            fields: vec![NewField {
                name: "title".into(),
                content_selector: "/title".into(),
                data_type: DataType::Text,
            }],
            tag_configs: vec![],
            facets: vec![],
            templates: Some(Templates {
                title_template: Some(template.into()),
                ..Templates::default()
            }),
        };
        assert!(build(source(vec![structured("${f_title}")])).is_ok());
        assert!(invalid_message(source(vec![structured("${f_body}")])).contains("'body'"));
        let mut ot = structured("x");
        ot.fields[0].content_selector = "title".into();
        assert!(invalid_message(source(vec![ot])).contains("JSON pointer"));
    }
}
