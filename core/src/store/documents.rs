//! The document primitive: small JSON documents by collection and key, each with a revision,
//! read one at a time or in key order and written in all-or-nothing batches whose writes can
//! each be conditional. A backend implements these three methods; core builds on them the
//! stores whose rules are the same everywhere ([`super::Jobs`], [`super::RateLimits`]), so a
//! new backend gets those for nothing.

use async_trait::async_trait;
use serde::{Serialize, de::DeserializeOwned};

use crate::{Error, Result};

/// One stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Its key, unique in its collection.
    pub key: String,
    /// Its body: JSON text, as core wrote it.
    pub body: String,
    /// 1 when created, bumped by every write.
    pub revision: u64,
}

impl Document {
    /// The body read as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_str(&self.body).map_err(Error::backend)
    }
}

/// What a write expects of the stored document; a write whose expectation fails fails its
/// whole batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Whatever is stored (nothing or any revision).
    Any,
    /// Nothing is stored under the key.
    Absent,
    /// The stored document is at this revision.
    Revision(u64),
}

impl Expect {
    /// Whether a stored revision (`None`: nothing stored) meets the expectation.
    pub fn holds(self, stored: Option<u64>) -> bool {
        match self {
            Expect::Any => true,
            Expect::Absent => stored.is_none(),
            Expect::Revision(r) => stored == Some(r),
        }
    }

    /// The expectation of a compare-and-set over `revision` (0: nothing stored).
    pub fn at(revision: u64) -> Self {
        match revision {
            0 => Expect::Absent,
            r => Expect::Revision(r),
        }
    }
}

/// What a write of a batch does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Stores this body (JSON text) as the next revision (1 when new).
    Put(String),
    /// Deletes the document (deleting nothing is no error).
    Delete,
    /// Writes nothing: the batch applies only if the expectation holds, and a document that
    /// exists cannot change until the batch commits. (That a document is absent is checked,
    /// not held: a batch creating it at the same time may commit too.)
    Check,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocWrite {
    /// The collection written.
    pub collection: &'static str,
    /// The document's key.
    pub key: String,
    /// What is done to it.
    pub op: Op,
    /// What the stored document must be for the batch to apply.
    pub expect: Expect,
}

impl DocWrite {
    /// Stores `value` under `key` if `expect` holds (a new revision: the stored one plus 1).
    pub fn put<T: Serialize>(
        collection: &'static str,
        key: impl Into<String>,
        value: &T,
        expect: Expect,
    ) -> Result<Self> {
        Ok(Self {
            collection,
            key: key.into(),
            op: Op::Put(serde_json::to_string(value).map_err(Error::backend)?),
            expect,
        })
    }

    /// Deletes the document under `key` if `expect` holds.
    pub fn delete(collection: &'static str, key: impl Into<String>, expect: Expect) -> Self {
        Self {
            collection,
            key: key.into(),
            op: Op::Delete,
            expect,
        }
    }

    /// Applies the batch only if the document under `key` is as `expect` says.
    pub fn check(collection: &'static str, key: impl Into<String>, expect: Expect) -> Self {
        Self {
            collection,
            key: key.into(),
            op: Op::Check,
            expect,
        }
    }
}

/// Which documents of a collection a scan reads: keys starting with `prefix`, after `after`
/// (exclusive), in byte order of the keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyRange<'a> {
    /// Keys start with this.
    pub prefix: &'a str,
    /// Keys sort after this one (byte order).
    pub after: Option<&'a str>,
}

impl KeyRange<'_> {
    /// Whether `key` is in the range.
    pub fn holds(&self, key: &str) -> bool {
        key.starts_with(self.prefix) && self.after.is_none_or(|a| key > a)
    }
}

/// Storage of documents: the primitive a backend implements for everything core keeps as
/// documents. Every method is atomic.
#[async_trait]
pub trait Documents: Send + Sync + 'static {
    /// The document under `key` in `collection`.
    async fn get_document(&self, collection: &str, key: &str) -> Result<Option<Document>>;
    /// Documents of `collection` in `range`, in byte order of their keys, at most `limit`.
    async fn scan_documents(
        &self,
        collection: &str,
        range: KeyRange<'_>,
        limit: usize,
    ) -> Result<Vec<Document>>;
    /// Applies every write, in one transaction, when each one's expectation holds (answers
    /// `true`); otherwise writes nothing and answers `false`. A key written twice in one batch
    /// sees the batch's earlier write.
    async fn write_documents(&self, writes: &[DocWrite]) -> Result<bool>;
    /// The keys of `collection` under each of `prefixes`: each prefix's in byte order, the
    /// prefixes in the order given (a key under two prefixes appears twice). The default
    /// scans each prefix in turn; a database store answers with one query, from its index
    /// alone.
    async fn keys_under(&self, collection: &str, prefixes: &[String]) -> Result<Vec<String>> {
        keys_one_prefix_at_a_time(self, collection, prefixes).await
    }
}

/// `part` made safe as one `/`-separated part of a key: `%` and `/` percent-encoded, so a
/// prefix ending in `/` after it cannot match a longer part.
pub fn key_part(part: &str) -> String {
    part.replace('%', "%25").replace('/', "%2F")
}

/// The first string after every string starting with `prefix` (byte order), for a range
/// scan's upper bound; `None` when no string sorts after them all.
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Compare-and-set attempts before a write gives up as contended.
pub const ATTEMPTS: usize = 64;

/// The error of a compare-and-set that kept losing to other writers.
pub fn contended() -> Error {
    Error::Unavailable("the object is being changed by another request; try again".into())
}

/// The document under `key` in `collection`, read as `T`, with its revision.
pub async fn get_as<S: Documents + ?Sized, T: DeserializeOwned>(
    store: &S,
    collection: &str,
    key: &str,
) -> Result<Option<(T, u64)>> {
    match store.get_document(collection, key).await? {
        Some(d) => Ok(Some((d.decode()?, d.revision))),
        None => Ok(None),
    }
}

/// A time in a key: milliseconds, zero-padded so keys sort by time.
pub fn time_key(t: &crate::time::Timestamp) -> String {
    format!("{:020}", t.timestamp_millis().max(0))
}

/// The first documents of `collection` whose keys sort before `bound`, at most `limit`: in a
/// collection keyed by time first, those that have expired. One document is read when none
/// has.
pub async fn before<S: Documents + ?Sized>(
    store: &S,
    collection: &str,
    bound: &str,
    limit: usize,
) -> Result<Vec<Document>> {
    let first = store
        .scan_documents(collection, KeyRange::default(), 1)
        .await?;
    if first.first().is_none_or(|d| d.key.as_str() >= bound) {
        return Ok(Vec::new());
    }
    let mut page = store
        .scan_documents(collection, KeyRange::default(), limit)
        .await?;
    page.retain(|d| d.key.as_str() < bound);
    Ok(page)
}

/// [`Documents::keys_under`] as its default answers it: each prefix scanned in turn
/// ([`scan_all`]).
pub async fn keys_one_prefix_at_a_time<S: Documents + ?Sized>(
    store: &S,
    collection: &str,
    prefixes: &[String],
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for prefix in prefixes {
        let range = KeyRange {
            prefix,
            after: None,
        };
        let found = scan_all(store, collection, range).await?;
        out.extend(found.into_iter().map(|d| d.key));
    }
    Ok(out)
}

/// Every document of `collection` in `range`, read a page at a time (for the small
/// collections core keeps: jobs, counters).
pub async fn scan_all<S: Documents + ?Sized>(
    store: &S,
    collection: &str,
    range: KeyRange<'_>,
) -> Result<Vec<Document>> {
    const PAGE: usize = 500;
    let mut out: Vec<Document> = Vec::new();
    loop {
        let after = out.last().map(|d| d.key.clone());
        let page = store
            .scan_documents(
                collection,
                KeyRange {
                    prefix: range.prefix,
                    after: after.as_deref().or(range.after),
                },
                PAGE,
            )
            .await?;
        let done = page.len() < PAGE;
        out.extend(page);
        if done {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_parts_cannot_run_into_the_next_part() {
        assert_eq!(key_part("a/b%2F"), "a%2Fb%252F");
        assert!(!format!("{}/", key_part("a/b")).starts_with(&format!("{}/", key_part("a"))));
    }

    #[test]
    fn a_prefix_ends_before_the_first_key_without_it() {
        assert_eq!(prefix_end("ab/").as_deref(), Some("ab0"));
        let top = format!("a{}", char::MAX);
        assert_eq!(prefix_end(&top).as_deref(), Some("b"));
        // After U+D7FF comes U+E000 (no surrogates in strings).
        assert_eq!(prefix_end("\u{D7FF}").as_deref(), Some("\u{E000}"));
        assert_eq!(prefix_end(&char::MAX.to_string()), None);
        assert_eq!(prefix_end(""), None);
        for key in ["ab/", "ab/x", "ab/\u{10FFFF}\u{10FFFF}"] {
            assert!(key < "ab0", "{key}");
        }
    }
}
