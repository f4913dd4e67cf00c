//! What reads files into text: the extractors linked into this binary ([`Linked`]), or, in tests,
//! a stand-in whose versions change (re-extraction's tests); the extraction module runs it.

use std::sync::Arc;

use inlet_core::extract::{Limits, Turns};

/// What reads files into text.
pub trait Reader: Send + Sync + 'static {
    /// Reads `bytes` within `limits`, taking OCR's turns from `turns`.
    fn read(
        &self,
        bytes: &[u8],
        limits: &Limits,
        turns: Arc<dyn Turns>,
    ) -> inlet_extractors::Outcome;
    /// The version of the extractor of `format` (`None`: no extractor reads it).
    fn version(&self, format: &str) -> Option<u32>;
}

/// The extractors linked into this binary (`inlet_extractors`).
pub struct Linked;

impl Reader for Linked {
    fn read(
        &self,
        bytes: &[u8],
        limits: &Limits,
        turns: Arc<dyn Turns>,
    ) -> inlet_extractors::Outcome {
        inlet_extractors::extract_with_turns(bytes, limits, turns)
    }

    fn version(&self, format: &str) -> Option<u32> {
        inlet_extractors::registry().get(format).map(|i| i.version)
    }
}

/// Each format's extractor version in `reader`, by format.
pub fn versions(reader: &dyn Reader) -> std::collections::BTreeMap<String, u32> {
    inlet_extractors::registry()
        .formats()
        .filter_map(|f| Some((f.to_string(), reader.version(f)?)))
        .collect()
}
