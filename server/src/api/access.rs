//! Who may read what (DESIGN 7a): a record's access list read and changed alone, a batch of
//! changes, and the groups a source mirrors. A connector's work: an administrator's API token
//! only. The rules are `inlet_core::access`'s and `inlet_core::ingest`'s.

use inlet_core::{
    access::{self, Group, Member},
    ingest::{self, AccessRequest},
    token::Principal,
};
use poem::web::Data;
use poem_openapi::{
    ApiResponse, Object, OpenApi,
    param::{Path, Query},
    payload::Json,
};
use uuid::Uuid;

use super::{ApiTags, batch::BatchResult, object_type};
use crate::{auth::Auth, problem::ApiError, state::AppState};

/// Access lists and groups.
pub struct AccessApi;

/// Most groups a listing page holds.
const MAX_GROUP_PAGE: u64 = 1000;

/// Refuses callers other than an administrator's API token (a connector).
pub fn connector_only(principal: &Principal) -> Result<(), ApiError> {
    if principal.reads_everything() {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "access lists and groups are set by a connector: use a workspace administrator's \
             API token (HTTP Basic)",
        ))
    }
}

/// A record's access list.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct AccessList {
    /// `everyone`, `user:<e-mail>` or `group:<externalId of a group of the source>`, each once;
    /// absent (or null) when the record follows its object type's `defaultAccess`.
    #[oai(skip_serializing_if_is_none)]
    pub access: Option<Vec<String>>,
}

impl AccessList {
    /// A record's list as the API writes it.
    fn of(record: inlet_core::record::Record) -> Self {
        Self {
            access: record
                .access
                .map(|l| l.iter().map(ToString::to_string).collect()),
        }
    }
}

/// One change of an access batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchAccessObject {
    /// The record's externalId.
    pub external_id: String,
    /// The new list; absent or null returns the record to its object type's default.
    #[oai(skip_serializing_if_is_none)]
    pub access: Option<Vec<String>>,
}

/// An access batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchAccess {
    /// Up to 1,000 changes, applied in one transaction and answered in this order.
    pub objects: Vec<BatchAccessObject>,
}

/// A group's members.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct GroupIn {
    /// `user:<e-mail>` or `group:<externalId>` (another group of the same source), at most
    /// 10,000; they replace the group's.
    pub members: Vec<String>,
}

/// A group of a source.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct GroupOut {
    /// The source system's id of the group.
    pub external_id: String,
    /// Its members, sorted.
    pub members: Vec<String>,
}

impl From<Group> for GroupOut {
    fn from(g: Group) -> Self {
        Self {
            external_id: g.external_id,
            members: g.members.iter().map(ToString::to_string).collect(),
        }
    }
}

/// A page of a source's groups.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct GroupPage {
    /// Groups in externalId order.
    pub groups: Vec<GroupOut>,
    /// Pass as `after` for the next page; absent on the last.
    #[oai(skip_serializing_if_is_none)]
    pub next_after: Option<String>,
}

#[derive(ApiResponse)]
enum GroupPut {
    /// The group was created.
    #[oai(status = 201)]
    Created(Json<GroupOut>),
    /// The group's members were replaced.
    #[oai(status = 200)]
    Replaced(Json<GroupOut>),
}

#[derive(ApiResponse)]
enum Deleted {
    /// Deleted.
    #[oai(status = 204)]
    NoContent,
}

#[OpenApi(tag = "ApiTags::Objects", prefix_path = "/api/v1")]
impl AccessApi {
    /// Read a record's access list (an administrator's API token).
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/access",
        method = "get",
        operation_id = "getAccess"
    )]
    async fn get_access(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<Json<AccessList>, ApiError> {
        let principal = auth.reader();
        connector_only(principal)?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let record =
            ingest::metadata(&*state.records, scope, &external_id.0, &access::Viewer::All).await?;
        Ok(Json(AccessList::of(record)))
    }

    /// Replace a record's access list without sending the file again (an administrator's API
    /// token): the record's version, checksum, tags and sync membership stay. Null or an
    /// absent `access` returns it to its object type's `defaultAccess`. 404 when there is no
    /// current record.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects/:externalId/access",
        method = "put",
        operation_id = "putAccess"
    )]
    async fn put_access(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        body: Json<AccessList>,
    ) -> Result<Json<AccessList>, ApiError> {
        let principal = auth.writer()?;
        connector_only(principal)?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let request = AccessRequest {
            external_id: external_id.0,
            access: body.0.access,
        };
        let mut items = ingest::access_batch(&*state.records, scope, vec![request]).await?;
        let item = items
            .pop()
            .ok_or_else(|| ApiError::internal("an access change answered nothing"))?;
        item.outcome?;
        let record = ingest::metadata(
            &*state.records,
            scope,
            &item.external_id,
            &access::Viewer::All,
        )
        .await?;
        Ok(Json(AccessList::of(record)))
    }

    /// Replace the access lists of up to 1,000 records in one transaction, as `putAccess` does
    /// each: per item 204, 404 (no current record) or 400 (malformed externalId or entry).
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/batch/access",
        method = "post",
        operation_id = "batchAccess"
    )]
    async fn batch_access(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<BatchAccess>,
    ) -> Result<Json<BatchResult>, ApiError> {
        let principal = auth.writer()?;
        connector_only(principal)?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let requests = body
            .0
            .objects
            .into_iter()
            .map(|o| AccessRequest {
                external_id: o.external_id,
                access: o.access,
            })
            .collect();
        let items = ingest::access_batch(&*state.records, scope, requests).await?;
        Ok(super::batch::done(items))
    }

    /// Create or replace a group of the source (an administrator's API token), mirrored from
    /// the source system: its members are users by e-mail (who need not exist yet) and other
    /// groups of the source. Nested groups count transitively; a group listing itself is 400,
    /// longer cycles are harmless. Takes effect in searches within a second.
    #[oai(
        path = "/sources/:sourceId/groups/:groupId",
        method = "put",
        operation_id = "putGroup"
    )]
    async fn put_group(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "groupId")] group_id: Path<String>,
        body: Json<GroupIn>,
    ) -> Result<GroupPut, ApiError> {
        let principal = auth.writer()?;
        connector_only(principal)?;
        let members = body
            .0
            .members
            .iter()
            .map(|m| Member::parse(m))
            .collect::<inlet_core::Result<Vec<_>>>()?;
        let group = Group::new(source_id.0, &group_id.0, members)?;
        let created = state
            .records
            .put_group(principal.workspace_id, &group)
            .await?;
        state.viewers.forget(principal.workspace_id);
        Ok(if created {
            GroupPut::Created(Json(group.into()))
        } else {
            GroupPut::Replaced(Json(group.into()))
        })
    }

    /// Delete a group of the source (an administrator's API token); 404 when there is none.
    #[oai(
        path = "/sources/:sourceId/groups/:groupId",
        method = "delete",
        operation_id = "deleteGroup"
    )]
    async fn delete_group(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "groupId")] group_id: Path<String>,
    ) -> Result<Deleted, ApiError> {
        let principal = auth.writer()?;
        connector_only(principal)?;
        let removed = state
            .records
            .delete_group(principal.workspace_id, source_id.0, &group_id.0)
            .await?;
        state.viewers.forget(principal.workspace_id);
        if !removed {
            return Err(ApiError::not_found(format!(
                "source {} has no group '{}'",
                source_id.0, group_id.0
            )));
        }
        Ok(Deleted::NoContent)
    }

    /// List the source's groups in externalId order, a page at a time (an administrator's API
    /// token), for a connector to reconcile: pass `nextAfter` as `after` until it is absent.
    #[oai(
        path = "/sources/:sourceId/groups",
        method = "get",
        operation_id = "listGroups"
    )]
    async fn list_groups(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        /// Start after this group externalId.
        after: Query<Option<String>>,
        /// Groups per page, 1 to 1,000 (default 100).
        limit: Query<Option<u64>>,
    ) -> Result<Json<GroupPage>, ApiError> {
        let principal = auth.reader();
        connector_only(principal)?;
        let limit = limit.0.unwrap_or(100);
        if !(1..=MAX_GROUP_PAGE).contains(&limit) {
            return Err(ApiError::bad_request(format!(
                "limit must be 1 to {MAX_GROUP_PAGE}; got {limit}"
            )));
        }
        let limit = limit as usize;
        let mut groups = state
            .records
            .list_groups(
                principal.workspace_id,
                source_id.0,
                after.0.as_deref(),
                limit + 1,
            )
            .await?;
        let next_after = if groups.len() > limit {
            groups.truncate(limit);
            groups.last().map(|g| g.external_id.clone())
        } else {
            None
        };
        Ok(Json(GroupPage {
            groups: groups.into_iter().map(Into::into).collect(),
            next_after,
        }))
    }
}
