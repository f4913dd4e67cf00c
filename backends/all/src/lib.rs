#![doc = include_str!("../README.md")]

// Without these lines the linker drops the backends' `inventory` registrations.
use inlet_blobs as _;
use inlet_store_memory as _;
use inlet_store_seaorm as _;

pub mod moving;

use std::sync::OnceLock;

use inlet_core::{
    Result,
    backend::{Backends, Opened},
};

/// The backends linked into this binary; two claiming one URL scheme are an error (reported by
/// every call, so start-up fails with it).
pub fn backends() -> Result<&'static Backends> {
    static BACKENDS: OnceLock<std::result::Result<Backends, String>> = OnceLock::new();
    BACKENDS
        .get_or_init(|| Backends::from_inventory().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| inlet_core::Error::invalid(e.clone()))
}

/// Opens (and migrates) the stores `url` names, with the backend its scheme selects.
pub async fn open(url: &str) -> Result<Opened> {
    backends()?.open(url).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_linked_backend_is_registered() {
        let names: Vec<&str> = backends()
            .unwrap()
            .entries()
            .iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["memory", "postgres", "sqlite"]);
    }

    #[test]
    fn an_unknown_scheme_names_the_ones_linked() {
        let err = backends()
            .unwrap()
            .find("mysql://db")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "unsupported database URL 'mysql://db': use memory:, postgres://... or sqlite://FILE?mode=rwc"
        );
    }

    #[tokio::test]
    async fn memory_opens_in_memory() {
        let opened = open("memory:").await.unwrap();
        assert_eq!(opened.default_index_dir, None);
        assert!(open("memoryx").await.is_err());
    }
}
