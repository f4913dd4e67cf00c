//! TEMPORARY stand-in for inlet-extractors while it is being written.
#![allow(missing_docs)]
use inlet_core::extract::Limits;
pub struct Outcome {
    pub format: Option<&'static str>,
    pub text: String,
    pub truncated: bool,
    pub failure: Option<String>,
}
pub fn extract(bytes: &[u8], _l: &Limits) -> Outcome {
    match std::str::from_utf8(bytes) {
        Ok(t) if !t.is_empty() => Outcome {
            format: Some("text"),
            text: t.to_string(),
            truncated: false,
            failure: None,
        },
        _ => Outcome {
            format: None,
            text: String::new(),
            truncated: false,
            failure: Some("unrecognized format".into()),
        },
    }
}
