//! The ingest workflow (spec 4.4): what a connector's calls do, over the store traits, with
//! every rule the endpoints answer by. The HTTP layer only parses, authorizes, calls and maps.
//!
//! - [`write`]: uploads and JSON pushes — the checks before any content is built (trackStatus,
//!   externalId, checksum, url, tags, folders, the open sync), then the checksum skip (a touch,
//!   falling back to a write when the record changed meanwhile) or the write.
//! - [`records`]: metadata reads, touches and deletes, one at a time and in batches, and the
//!   paged listing.
//! - [`syncs`]: opening and closing syncs, with the mass-removal guard resolved.
//! - [`reextract`]: records read again from their originals when an extractor improved.

pub mod access;
pub mod records;
pub mod reextract;
pub mod syncs;
pub mod write;

pub use access::{parse_headers, viewer_of};
pub use records::*;
