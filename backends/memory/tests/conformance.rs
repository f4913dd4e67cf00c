//! The conformance suite on the in-memory store, searched through the tantivy index.

use std::sync::Arc;

use inlet_search_tantivy::TantivyIndex;
use inlet_store_memory::MemoryStore;

inlet_core::conformance_tests!(
    async { Arc::new(MemoryStore::new()) },
    TantivyIndex::in_memory().expect("index")
);
