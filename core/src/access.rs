//! Who may read a record (DESIGN 7a): access lists of grantees carried by records, groups
//! mirrored per source by the connector, and a reader's principals expanded from them.
//!
//! A record's list names `user:<e-mail>`, `group:<externalId of a group of its source>` and
//! `everyone`; a record pushed without a list follows its object type's [`DefaultAccess`]. The
//! search index holds each record's [`Grantee::term`]s and a reader's [`Viewer`] holds the terms
//! it may read, so a membership change needs no re-indexing.

use std::collections::{BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{Error, Result};

/// Most grantees on one record's list.
pub const MAX_GRANTEES: usize = 1000;
/// Most members of one group.
pub const MAX_MEMBERS: usize = 10_000;
/// Longest group externalId, in characters.
pub const MAX_GROUP_ID_CHARS: usize = 1024;
/// Longest grantee or member text (`user:` or `group:` included), in characters.
pub const MAX_GRANTEE_CHARS: usize = 1100;
/// Deepest group nesting followed when expanding a user's groups; deeper groups are ignored
/// (documented in docs/permissions.md).
pub const MAX_NESTING: usize = 32;

/// One entry of an access list: who may read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Grantee {
    /// Every user of the workspace.
    Everyone,
    /// A workspace user by e-mail (kept lower-case; the user may not exist yet).
    User(String),
    /// A group of the record's source, by its externalId.
    Group(String),
}

impl Grantee {
    /// Parses `everyone`, `user:<e-mail>` or `group:<externalId>` (the prefix in any case).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(format!(
                "access entry {:?} must be everyone, user:<e-mail> or group:<externalId>",
                text.chars().take(80).collect::<String>()
            ))
        };
        if text.chars().count() > MAX_GRANTEE_CHARS {
            return Err(Error::invalid(format!(
                "an access entry is at most {MAX_GRANTEE_CHARS} characters"
            )));
        }
        if text.eq_ignore_ascii_case("everyone") {
            return Ok(Self::Everyone);
        }
        let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
        if rest.trim().is_empty() || rest.chars().any(char::is_control) {
            return Err(bad());
        }
        match kind.to_ascii_lowercase().as_str() {
            "user" if rest.contains('@') && !rest.chars().any(char::is_whitespace) => {
                Ok(Self::User(rest.to_lowercase()))
            }
            "user" => Err(Error::invalid(format!(
                "access entry {:?}: a user is named by e-mail",
                text.chars().take(80).collect::<String>()
            ))),
            "group" => Ok(Self::Group(rest.to_string())),
            _ => Err(bad()),
        }
    }

    /// The term the search index holds for this grantee on a record of `source_id`.
    pub fn term(&self, source_id: Uuid) -> String {
        match self {
            Self::Everyone => EVERYONE_TERM.to_string(),
            Self::User(email) => user_term(email),
            Self::Group(id) => group_term(source_id, id),
        }
    }
}

impl std::fmt::Display for Grantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Everyone => f.write_str("everyone"),
            Self::User(email) => write!(f, "user:{email}"),
            Self::Group(id) => write!(f, "group:{id}"),
        }
    }
}

impl TryFrom<String> for Grantee {
    type Error = Error;
    fn try_from(text: String) -> Result<Self> {
        Self::parse(&text)
    }
}

impl From<Grantee> for String {
    fn from(g: Grantee) -> Self {
        g.to_string()
    }
}

/// Parses an access list: each entry once, in a stable order, at most [`MAX_GRANTEES`].
pub fn parse_list<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Vec<Grantee>> {
    let mut list = BTreeSet::new();
    for entry in entries {
        list.insert(Grantee::parse(entry.trim())?);
        if list.len() > MAX_GRANTEES {
            return Err(Error::invalid(format!(
                "an access list holds at most {MAX_GRANTEES} entries"
            )));
        }
    }
    Ok(list.into_iter().collect())
}

/// Who may read a record pushed without an access list (an object type's `defaultAccess`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DefaultAccess {
    /// Every user of the workspace (the spec's behaviour).
    #[default]
    Everyone,
    /// Nobody but administrators until a list arrives.
    Restricted,
}

/// The index term of `everyone`.
pub const EVERYONE_TERM: &str = "*";

/// The index term of a user.
pub fn user_term(email: &str) -> String {
    format!("u:{}", email.to_lowercase())
}

/// The index term of a group of a source.
pub fn group_term(source_id: Uuid, external_id: &str) -> String {
    format!("g:{source_id}:{external_id}")
}

/// The index term of the records of an object type pushed without a list: who reads them
/// follows the object type's [`DefaultAccess`] as it is at query time.
pub fn default_term(object_type_id: Uuid) -> String {
    format!("d:{object_type_id}")
}

/// The index terms of a record: its list's, or its object type's default term when it has none.
pub fn record_terms(
    access: Option<&[Grantee]>,
    source_id: Uuid,
    object_type_id: Uuid,
) -> Vec<String> {
    match access {
        Some(list) => list.iter().map(|g| g.term(source_id)).collect(),
        None => vec![default_term(object_type_id)],
    }
}

/// A member of a group: a user by e-mail or another group of the same source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Member {
    /// A workspace user by e-mail (lower-case; may not exist yet).
    User(String),
    /// Another group of the source, by externalId.
    Group(String),
}

impl Member {
    /// Parses `user:<e-mail>` or `group:<externalId>`.
    pub fn parse(text: &str) -> Result<Self> {
        match Grantee::parse(text)? {
            Grantee::User(email) => Ok(Self::User(email)),
            Grantee::Group(id) => Ok(Self::Group(id)),
            Grantee::Everyone => Err(Error::invalid(
                "a group member is user:<e-mail> or group:<externalId>, not everyone",
            )),
        }
    }

    /// The index term this member stands for in `source_id`.
    pub fn term(&self, source_id: Uuid) -> String {
        match self {
            Self::User(email) => user_term(email),
            Self::Group(id) => group_term(source_id, id),
        }
    }
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::User(email) => write!(f, "user:{email}"),
            Self::Group(id) => write!(f, "group:{id}"),
        }
    }
}

impl TryFrom<String> for Member {
    type Error = Error;
    fn try_from(text: String) -> Result<Self> {
        Self::parse(&text)
    }
}

impl From<Member> for String {
    fn from(m: Member) -> Self {
        m.to_string()
    }
}

/// A group mirrored from a source system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Its source.
    pub source_id: Uuid,
    /// The source system's id of the group.
    pub external_id: String,
    /// Its members, each once, sorted.
    pub members: Vec<Member>,
}

impl Group {
    /// A group with its members checked: each once, at most [`MAX_MEMBERS`], not itself.
    pub fn new(source_id: Uuid, external_id: &str, members: Vec<Member>) -> Result<Self> {
        crate::input::check("a group externalId", external_id, crate::input::Class::Line)?;
        if external_id.chars().count() > MAX_GROUP_ID_CHARS {
            return Err(Error::invalid(format!(
                "a group externalId is at most {MAX_GROUP_ID_CHARS} characters"
            )));
        }
        let members: BTreeSet<Member> = members.into_iter().collect();
        if members.len() > MAX_MEMBERS {
            return Err(Error::invalid(format!(
                "a group holds at most {MAX_MEMBERS} members"
            )));
        }
        if members.contains(&Member::Group(external_id.to_string())) {
            return Err(Error::invalid(format!(
                "group {external_id:?} cannot be a member of itself"
            )));
        }
        Ok(Self {
            source_id,
            external_id: external_id.to_string(),
            members: members.into_iter().collect(),
        })
    }

    /// The index terms of its members (what [`crate::store::Groups::groups_containing`] looks
    /// up).
    pub fn member_terms(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| m.term(self.source_id))
            .collect()
    }

    /// Its own index term.
    pub fn term(&self) -> String {
        group_term(self.source_id, &self.external_id)
    }
}

/// The records of one object type a reader may read ([`Viewer::readable_in`]):
/// those whose access list names one of `grantees` (as lists hold them: `everyone`,
/// `user:<e-mail>`, `group:<externalId>`), and those without a list when `default` (the
/// object type's default is the reader's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readable {
    /// The list entries that let the reader in.
    pub grantees: Vec<String>,
    /// Whether records without a list are readable.
    pub default: bool,
}

impl Readable {
    /// Whether a record with `access` (its list, `None` without one) is readable.
    pub fn admits(&self, access: Option<&[Grantee]>) -> bool {
        match access {
            None => self.default,
            Some(list) => list
                .iter()
                .any(|g| self.grantees.iter().any(|e| *e == g.to_string())),
        }
    }
}

/// What a caller may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// Everything (administrators' API tokens: the connectors).
    All,
    /// The records whose index terms meet these.
    Only(BTreeSet<String>),
}

impl Viewer {
    /// What the viewer may read of an object type, as its records' lists name it (for a store
    /// to trim a listing); `None` for [`Viewer::All`].
    pub fn readable_in(&self, source_id: Uuid, object_type_id: Uuid) -> Option<Readable> {
        let Self::Only(terms) = self else {
            return None;
        };
        let group_prefix = group_term(source_id, "");
        let default = default_term(object_type_id);
        let mut readable = Readable::default();
        for term in terms {
            if term == EVERYONE_TERM {
                readable.grantees.push(Grantee::Everyone.to_string());
            } else if let Some(email) = term.strip_prefix("u:") {
                readable
                    .grantees
                    .push(Grantee::User(email.into()).to_string());
            } else if let Some(group) = term.strip_prefix(group_prefix.as_str()) {
                readable
                    .grantees
                    .push(Grantee::Group(group.into()).to_string());
            } else if *term == default {
                readable.default = true;
            }
        }
        Some(readable)
    }

    /// Whether a record with these index terms is readable.
    pub fn reads(&self, terms: &[String]) -> bool {
        match self {
            Self::All => true,
            Self::Only(mine) => terms.iter().any(|t| mine.contains(t)),
        }
    }
}

/// Expands a user's principals: their user term, `everyone`, every group containing them
/// directly or through nested groups (cycles are harmless: each group is visited once; at most
/// [`MAX_NESTING`] levels), and the default term of every object type in `everyone_defaults`
/// (those whose [`DefaultAccess`] is `EVERYONE`). `containing` answers the terms of the groups
/// that list any of the given terms as members.
pub async fn expand<F, Fut>(
    email: &str,
    everyone_defaults: &[Uuid],
    containing: F,
) -> Result<Viewer>
where
    F: Fn(Vec<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<String>>>,
{
    let mut terms: BTreeSet<String> = BTreeSet::new();
    terms.insert(EVERYONE_TERM.to_string());
    terms.extend(everyone_defaults.iter().map(|ot| default_term(*ot)));
    let me = user_term(email);
    terms.insert(me.clone());
    let mut seen: HashSet<String> = HashSet::new();
    let mut frontier = vec![me];
    for _ in 0..MAX_NESTING {
        if frontier.is_empty() {
            break;
        }
        let found = containing(std::mem::take(&mut frontier)).await?;
        for group in found {
            if seen.insert(group.clone()) {
                terms.insert(group.clone());
                frontier.push(group);
            }
        }
    }
    Ok(Viewer::Only(terms))
}

impl Viewer {
    /// The terms a search filters on; `None` for everything.
    pub fn terms(&self) -> Option<Vec<String>> {
        match self {
            Self::All => None,
            Self::Only(terms) => Some(terms.iter().cloned().collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn grantees_parse_and_print() {
        assert_eq!(Grantee::parse("everyone").unwrap(), Grantee::Everyone);
        assert_eq!(Grantee::parse("EVERYONE").unwrap(), Grantee::Everyone);
        assert_eq!(
            Grantee::parse("User:Ann@Example.com").unwrap(),
            Grantee::User("ann@example.com".into())
        );
        assert_eq!(
            Grantee::parse("group:HR Team").unwrap().to_string(),
            "group:HR Team"
        );
        for bad in [
            "",
            "ann@example.com",
            "user:",
            "user:ann",
            "role:x",
            "group: ",
            "group:a\nb",
        ] {
            assert!(Grantee::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Member::parse("everyone").is_err());
        let list = parse_list(["group:b", "everyone", "group:b", "user:a@x.io"]).unwrap();
        assert_eq!(list.len(), 3);
    }

    #[test]
    fn groups_refuse_themselves() {
        let s = Uuid::new_v4();
        assert!(Group::new(s, "g", vec![Member::Group("g".into())]).is_err());
        let g = Group::new(
            s,
            "g",
            vec![Member::User("b@x.io".into()), Member::User("a@x.io".into())],
        )
        .unwrap();
        assert_eq!(g.members[0], Member::User("a@x.io".into()));
    }

    #[tokio::test]
    async fn expansion_follows_nesting_and_survives_cycles() {
        let s = Uuid::new_v4();
        // ann ∈ a; a ∈ b; b ∈ c; c ∈ a (a cycle); bob ∈ d.
        let edges: HashMap<String, Vec<String>> = [
            (user_term("ann@x.io"), vec![group_term(s, "a")]),
            (group_term(s, "a"), vec![group_term(s, "b")]),
            (group_term(s, "b"), vec![group_term(s, "c")]),
            (group_term(s, "c"), vec![group_term(s, "a")]),
            (user_term("bob@x.io"), vec![group_term(s, "d")]),
        ]
        .into_iter()
        .collect();
        let containing = |terms: Vec<String>| {
            let found: Vec<String> = terms
                .iter()
                .flat_map(|t| edges.get(t).cloned().unwrap_or_default())
                .collect();
            async move { Ok(found) }
        };
        let ot = Uuid::new_v4();
        let Viewer::Only(terms) = expand("Ann@x.io", &[ot], containing).await.unwrap() else {
            panic!()
        };
        for t in ["a", "b", "c"] {
            assert!(terms.contains(&group_term(s, t)), "{t}");
        }
        assert!(!terms.contains(&group_term(s, "d")));
        assert!(terms.contains(EVERYONE_TERM));
        assert!(terms.contains(&default_term(ot)));
        let viewer = Viewer::Only(terms);
        assert!(viewer.reads(&record_terms(Some(&[Grantee::Group("c".into())]), s, ot)));
        assert!(!viewer.reads(&record_terms(Some(&[Grantee::Group("d".into())]), s, ot)));
        assert!(viewer.reads(&record_terms(None, s, ot)));
        assert!(!viewer.reads(&record_terms(None, s, Uuid::new_v4())));
    }
}
