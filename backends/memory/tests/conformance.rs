//! The conformance suite on the in-memory store.

use std::sync::Arc;

use inlet_store_memory::MemoryStore;

inlet_core::conformance_tests!(async { Arc::new(MemoryStore::new()) });
