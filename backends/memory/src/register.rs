//! The in-memory backend's registration: `memory:` (or `memory`) opens an empty store; the
//! search index lives in memory too.

use std::sync::Arc;

use inlet_core::{
    Error,
    backend::{BackendInfo, OpenFuture, Opened, Stores},
};

use crate::MemoryStore;

inventory::submit! {
    BackendInfo {
        name: "memory",
        schemes: &["memory"],
        example: "memory:",
        open,
    }
}

fn open(url: &str) -> OpenFuture {
    let known = url == "memory:" || url == "memory";
    let url = url.to_string();
    Box::pin(async move {
        if !known {
            return Err(Error::invalid(format!(
                "unsupported database URL '{url}': the in-memory store is 'memory:'"
            )));
        }
        Ok(Opened {
            stores: Stores::of(Arc::new(MemoryStore::new())),
            description: "in-memory store (nothing is kept after exit)".into(),
            default_index_dir: None,
            default_blobs: "memory:".into(),
        })
    })
}
