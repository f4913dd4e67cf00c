#![doc = include_str!("../README.md")]

mod decode;
mod delimited;
mod html;
mod json;
mod markdown;
mod markup;
mod plain;
mod tags;
mod words;
mod xml;

#[cfg(test)]
mod corpus_tests;

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers shared by the unit tests.

    use inlet_core::extract::{ExtractError, ExtractorInfo, Limits, Probe, TextSink};

    /// Deterministic pseudo-random bytes (xorshift64).
    pub(crate) fn noise(len: usize, mut seed: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            out.extend_from_slice(&seed.to_le_bytes());
        }
        out.truncate(len);
        out
    }

    /// The registered entry for `id`.
    pub(crate) fn info(id: &str) -> &'static ExtractorInfo {
        inventory::iter::<ExtractorInfo>
            .into_iter()
            .find(|e| e.id == id)
            .unwrap_or_else(|| panic!("{id} is not registered"))
    }

    /// The score `id`'s sniffer gives `bytes`.
    pub(crate) fn score(id: &str, bytes: &[u8]) -> u8 {
        (info(id).sniff)(&Probe {
            bytes,
            entries: &[],
        })
    }

    /// The format id the text sniffers pick for `bytes` (highest score, ties to the smaller id).
    pub(crate) fn detect(bytes: &[u8]) -> Option<&'static str> {
        let mut all: Vec<_> = inventory::iter::<ExtractorInfo>.into_iter().collect();
        all.sort_by_key(|e| e.id);
        let mut best: Option<(u8, &'static str)> = None;
        for e in all {
            let s = score(e.id, bytes);
            if s > 0 && best.is_none_or(|(b, _)| s > b) {
                best = Some((s, e.id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Runs `id`'s extractor with default limits.
    pub(crate) fn run(id: &str, bytes: &[u8]) -> Result<String, (ExtractError, String)> {
        let mut sink = TextSink::new(&Limits::default());
        match (info(id).make)().extract(bytes, &mut sink) {
            Ok(()) => Ok(sink.into_text()),
            Err(e) => Err((e, sink.into_text())),
        }
    }

    /// Runs `id`'s extractor and expects success.
    pub(crate) fn text(id: &str, bytes: &[u8]) -> String {
        match run(id, bytes) {
            Ok(t) => t,
            Err((e, t)) => panic!("{id} failed: {e} (after {t:?})"),
        }
    }

    /// Runs `id`'s extractor with a small output cap; returns the text and whether it filled up.
    pub(crate) fn capped(id: &str, bytes: &[u8], max_chars: usize) -> (String, bool) {
        let mut sink = TextSink::new(&Limits {
            max_chars,
            ..Limits::default()
        });
        let full = matches!(
            (info(id).make)().extract(bytes, &mut sink),
            Err(ExtractError::Full)
        );
        (sink.into_text(), full)
    }
}
