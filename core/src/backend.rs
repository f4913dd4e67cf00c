//! Storage backends: how a database URL becomes the stores. Each backend crate registers itself
//! with `inventory::submit!` (a [`BackendInfo`]: its URL schemes and an `open`), as extractors
//! do, so a binary serves every backend it links and names none of them.
//!
//! ```ignore
//! inventory::submit! {
//!     BackendInfo {
//!         name: "toy",
//!         schemes: &["toy:"],
//!         example: "toy:",
//!         open: |url| Box::pin(async move { /* connect, migrate */ Ok(opened) }),
//!     }
//! }
//! ```

use std::{collections::HashMap, future::Future, path::PathBuf, pin::Pin, sync::Arc};

use crate::{Error, RecordStore, Result, TokenStore, webhook::WebhookStore};

/// The stores behind one database URL (often one object behind the three traits).
#[derive(Clone)]
pub struct Stores {
    /// Sources, syncs, records, folders and the write log.
    pub records: Arc<dyn RecordStore>,
    /// Workspaces, users, tokens, OAuth state and rate limits.
    pub tokens: Arc<dyn TokenStore>,
    /// Webhooks and their delivery queue.
    pub webhooks: Arc<dyn WebhookStore>,
}

impl Stores {
    /// The three stores of one object that implements every trait.
    pub fn of<S: RecordStore + TokenStore + WebhookStore>(store: Arc<S>) -> Self {
        Self {
            records: store.clone(),
            tokens: store.clone(),
            webhooks: store,
        }
    }
}

/// What a backend's `open` yields.
pub struct Opened {
    /// The stores, ready (migrations applied).
    pub stores: Stores,
    /// One line for the start-up log ("in-memory store (nothing is kept after exit)").
    pub description: String,
    /// Where the search index lives by default for this database (`None`: in memory).
    pub default_index_dir: Option<PathBuf>,
    /// The blob store for originals by default for this database ([`crate::blob`]): `memory:`
    /// with the memory store, a folder beside a SQLite file.
    pub default_blobs: String,
}

/// The future `open` returns.
pub type OpenFuture = Pin<Box<dyn Future<Output = Result<Opened>> + Send>>;

/// One registered backend, submitted with `inventory::submit!`. Const data only.
pub struct BackendInfo {
    /// Short name for logs and errors (`sqlite`, `postgres`, `memory`).
    pub name: &'static str,
    /// URL prefixes this backend opens (`sqlite:`, `postgres://`); unique across backends.
    pub schemes: &'static [&'static str],
    /// An example URL for the "unsupported database URL" message (`sqlite://FILE?mode=rwc`).
    pub example: &'static str,
    /// Opens (and migrates) the stores a URL names.
    pub open: fn(&str) -> OpenFuture,
}

inventory::collect!(BackendInfo);

/// The backends linked into this binary, by scheme.
pub struct Backends {
    entries: Vec<&'static BackendInfo>,
}

impl Backends {
    /// Every `inventory` submission; two backends claiming one scheme are an error.
    pub fn from_inventory() -> Result<Self> {
        Self::from_entries(inventory::iter::<BackendInfo>)
    }

    /// The given backends; two claiming one scheme are an error.
    pub fn from_entries(entries: impl IntoIterator<Item = &'static BackendInfo>) -> Result<Self> {
        let mut entries: Vec<_> = entries.into_iter().collect();
        entries.sort_by_key(|b| b.name);
        let mut owner: HashMap<&str, &str> = HashMap::new();
        for b in &entries {
            for scheme in b.schemes {
                if let Some(other) = owner.insert(scheme, b.name) {
                    return Err(Error::invalid(format!(
                        "backends '{other}' and '{}' both register the URL scheme '{scheme}'",
                        b.name
                    )));
                }
            }
        }
        Ok(Self { entries })
    }

    /// The backends, sorted by name.
    pub fn entries(&self) -> &[&'static BackendInfo] {
        &self.entries
    }

    /// The backend whose scheme starts `url` (the longest matching scheme wins).
    pub fn find(&self, url: &str) -> Result<&'static BackendInfo> {
        self.entries
            .iter()
            .flat_map(|b| b.schemes.iter().map(move |s| (s, *b)))
            .filter(|(s, _)| url.starts_with(**s))
            .max_by_key(|(s, _)| s.len())
            .map(|(_, b)| b)
            .ok_or_else(|| {
                let examples: Vec<&str> = self.entries.iter().map(|b| b.example).collect();
                let list = match examples.split_last() {
                    None => "no backend is linked into this binary".to_string(),
                    Some((last, [])) => format!("use {last}"),
                    Some((last, rest)) => format!("use {} or {last}", rest.join(", ")),
                };
                Error::invalid(format!("unsupported database URL '{url}': {list}"))
            })
    }

    /// Opens the stores `url` names with the backend its scheme selects.
    pub async fn open(&self, url: &str) -> Result<Opened> {
        (self.find(url)?.open)(url).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &str) -> OpenFuture {
        Box::pin(async { Err(Error::Unavailable("test backend".into())) })
    }

    static A: BackendInfo = BackendInfo {
        name: "a",
        schemes: &["a:", "ab://"],
        example: "a:FILE",
        open: never,
    };
    static B: BackendInfo = BackendInfo {
        name: "b",
        schemes: &["ab:"],
        example: "ab:",
        open: never,
    };
    static C: BackendInfo = BackendInfo {
        name: "c",
        schemes: &["a:"],
        example: "a:",
        open: never,
    };

    #[test]
    fn the_longest_scheme_selects_the_backend() {
        let backends = Backends::from_entries([&B, &A]).unwrap();
        assert_eq!(backends.find("a:x").unwrap().name, "a");
        assert_eq!(backends.find("ab://x").unwrap().name, "a");
        assert_eq!(backends.find("ab:x").unwrap().name, "b");
        let unknown = backends.find("zz://x").err().unwrap().to_string();
        assert!(
            unknown.contains("unsupported database URL 'zz://x': use a:FILE or ab:"),
            "{unknown}"
        );
    }

    #[test]
    fn two_backends_with_one_scheme_are_refused() {
        let err = Backends::from_entries([&A, &C]).err().unwrap().to_string();
        assert!(
            err.contains("'a' and 'c' both register the URL scheme 'a:'"),
            "{err}"
        );
    }
}
