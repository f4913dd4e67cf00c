#![doc = include_str!("../README.md")]

pub mod access;
pub mod backend;
pub mod blob;
pub mod changes;
pub mod error;
pub mod extract;
pub mod folder;
pub mod html;
pub mod index;
pub mod ingest;
pub mod input;
pub mod oauth;
pub mod query;
pub mod record;
pub mod search;
pub mod source;
pub mod store;
pub mod structured;
pub mod sync;
pub mod tag;
pub mod template;
pub mod time;
pub mod title;
pub mod token;
pub mod webhook;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use error::{Error, Result};
pub use extract::{Extractor, ExtractorInfo};
pub use store::{RecordStore, TokenStore};

/// Identifier of a workspace (an organization); every stored object belongs to exactly one.
pub type WorkspaceId = uuid::Uuid;
