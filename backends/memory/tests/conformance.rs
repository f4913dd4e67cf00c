//! The conformance suite on the in-memory store, searched through the tantivy index.

use std::sync::Arc;

// The sweep's case keeps its blobs in a `memory:` blob store.
use inlet_blobs as _;

use inlet_search_tantivy::TantivyIndex;
use inlet_store_memory::MemoryStore;

inlet_core::conformance_tests!(
    async { Arc::new(MemoryStore::new()) },
    TantivyIndex::in_memory().expect("index")
);
