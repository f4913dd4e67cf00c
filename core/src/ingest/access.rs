//! Access lists at the edge (DESIGN 7a): the access header of an upload, and what a caller
//! may read ([`crate::access`]).

use uuid::Uuid;

use crate::{
    Error, RecordStore, Result,
    access::{DefaultAccess, Grantee, Viewer, expand, parse_list},
    token::Principal,
};

/// Parses the access headers of an upload (`X-Service-Object-Access`, DESIGN 7a): each line
/// a comma-separated list of percent-encoded entries, lines adding up. `None` when no line was
/// sent (the record keeps its list); an empty line is an empty list (nobody but
/// administrators).
pub fn parse_headers<'a>(
    lines: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Option<Vec<Grantee>>> {
    let mut sent = false;
    let mut entries = Vec::new();
    for line in lines {
        sent = true;
        for raw in crate::tag::list_elements(line) {
            let raw = std::str::from_utf8(raw)
                .map_err(|_| Error::invalid("an access entry must be UTF-8"))?;
            entries.push(crate::input::percent_decode("an access entry", raw)?);
        }
    }
    if !sent {
        return Ok(None);
    }
    parse_list(entries.iter().map(String::as_str)).map(Some)
}

/// The [`Viewer`] of a principal: everything for an administrator's API token, else the
/// user's expanded principals over the workspace's groups and object types.
pub async fn viewer_of(store: &dyn RecordStore, principal: &Principal) -> Result<Viewer> {
    if principal.reads_everything() {
        return Ok(Viewer::All);
    }
    let ws = principal.workspace_id;
    let everyone_defaults: Vec<Uuid> = store
        .list_sources(ws)
        .await?
        .iter()
        .flat_map(|s| &s.object_types)
        .filter(|ot| ot.default_access == DefaultAccess::Everyone)
        .map(|ot| ot.id)
        .collect();
    expand(&principal.email, &everyone_defaults, |terms| async move {
        store.groups_containing(ws, &terms).await
    })
    .await
}
