//! Example: a storage backend in its own crate. `toy:NAME` opens an in-memory store shared by
//! every open of the same name in this process (so two servers in one test see one database,
//! like two replicas over PostgreSQL). It stores through `inlet_store_memory`'s implementation
//! of the store traits; what it shows is the registration: linking this crate into a binary
//! makes the server accept `toy:` URLs, with no edit to core, the server or another backend
//! (docs/contributors.md, "Adding a storage backend").

use std::{collections::HashMap, sync::Arc};

use inlet_core::{
    Error,
    backend::{BackendInfo, OpenFuture, Opened, Stores},
};
use inlet_store_memory::MemoryStore;
use parking_lot::Mutex;

inventory::submit! {
    BackendInfo {
        name: "toy",
        schemes: &["toy:"],
        example: "toy:NAME",
        open,
    }
}

/// The stores opened so far, by name.
static OPEN: Mutex<Option<HashMap<String, Arc<MemoryStore>>>> = Mutex::new(None);

fn open(url: &str) -> OpenFuture {
    let name = url.strip_prefix("toy:").unwrap_or_default().to_string();
    Box::pin(async move {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(Error::invalid(
                "a toy database URL is toy:NAME (letters, digits and '-')",
            ));
        }
        let store = OPEN
            .lock()
            .get_or_insert_with(HashMap::new)
            .entry(name.clone())
            .or_insert_with(|| Arc::new(MemoryStore::new()))
            .clone();
        Ok(Opened {
            stores: Stores::of(store),
            description: format!("toy store '{name}' (in memory, shared in this process)"),
            default_index_dir: None,
            default_blobs: "memory:".into(),
        })
    })
}
