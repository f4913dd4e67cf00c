//! The conformance suite on the toy backend: the required methods forwarded to the in-memory
//! store, everything else as core provides it to a new backend.

use std::sync::Arc;

// The sweep's case keeps its blobs in a `memory:` blob store.
use inlet_blobs as _;

use inlet_example_toy_backend::ToyStore;
use inlet_search_tantivy::TantivyIndex;

inlet_core::conformance_tests!(
    async { Arc::new(ToyStore::default()) },
    TantivyIndex::in_memory().expect("index")
);
