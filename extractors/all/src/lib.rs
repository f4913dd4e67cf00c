#![doc = include_str!("../README.md")]

// Without these lines the linker drops the families' `inventory` registrations.
use inlet_extract_archive as _;
use inlet_extract_doc as _;
use inlet_extract_epub as _;
use inlet_extract_mail as _;
use inlet_extract_metafile as _;
use inlet_extract_odf as _;
use inlet_extract_office as _;
use inlet_extract_pdf as _;
use inlet_extract_ppt as _;
use inlet_extract_rtf as _;
use inlet_extract_text as _;
use inlet_extract_xls as _;

/// OCR of images and scanned pages: its settings, status and the image test the server uses to
/// pick an image's time budget.
pub use inlet_extract_ocr as ocr;

use std::{
    collections::HashMap,
    io::Cursor,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{Arc, OnceLock},
};

use inlet_core::extract::{
    DocumentMetadata, ExtractError, ExtractorInfo, Limits, NestedExtract, Probe, Registry,
    TextSink, Turns,
};

/// Entry names read from a container at most (a ZIP can list millions).
pub const MAX_PROBE_ENTRIES: usize = 10_000;

/// Failure reason for input that no extractor recognises.
pub const UNRECOGNIZED: &str = "unrecognized format";

/// Failure reason for empty input.
pub const EMPTY: &str = "empty file";

/// Failure reason of a whole read of format `id` that gave no characters (a read cut short says
/// so in `truncated`): a record that search can never find always says why.
pub fn no_text(id: &str) -> String {
    format!(
        "no text found: the file was read as {id} and holds no characters of text (only \
         pictures, drawings, markup or empty parts)"
    )
}

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const OLE2_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

/// The registry of every linked extractor, built on first use, or why it cannot be: two
/// extractors registering one format id are an error. Call it at start-up so that a duplicate
/// stops the program with this message; [`extract`] fails every file with it.
pub fn try_registry() -> Result<&'static Registry, String> {
    let built = built();
    match &built.error {
        Some(error) => Err(error.clone()),
        None => Ok(&built.registry),
    }
}

/// The registry of every linked extractor, for inspection (see [`try_registry`]). When two
/// extractors register one format id, this never panics: it is the registry without that id
/// (neither extractor is used) and the error is logged once.
pub fn registry() -> &'static Registry {
    &built().registry
}

/// The registry, and the error that refused the registrations if any.
struct Built {
    registry: Registry,
    error: Option<String>,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        build(
            &inventory::iter::<ExtractorInfo>
                .into_iter()
                .collect::<Vec<_>>(),
        )
    })
}

/// The registry without the OCR extractors (the formats of [`ocr::FORMATS`]), for
/// [`extract_without_ocr`].
fn built_without_ocr() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        build(
            &inventory::iter::<ExtractorInfo>
                .into_iter()
                .filter(|e| !ocr::FORMATS.contains(&e.id))
                .collect::<Vec<_>>(),
        )
    })
}

fn build(entries: &[&'static ExtractorInfo]) -> Built {
    match Registry::from_entries(entries.iter().copied()) {
        Ok(registry) => Built {
            registry,
            error: None,
        },
        Err(error) => {
            tracing::error!(%error, "extractor registry refused");
            Built {
                registry: without_duplicates(entries),
                error: Some(error),
            }
        }
    }
}

/// A registry of the entries whose format id no other entry claims.
fn without_duplicates(entries: &[&'static ExtractorInfo]) -> Registry {
    let mut claims: HashMap<&str, usize> = HashMap::new();
    for e in entries {
        *claims.entry(e.id).or_default() += 1;
    }
    let mut kept: Vec<_> = entries
        .iter()
        .copied()
        .filter(|e| claims.get(e.id) == Some(&1))
        .collect();
    // `from_entries` refuses only duplicate ids, which are gone; were it to refuse anyway,
    // entries are dropped until it accepts (it always accepts none), so this cannot panic.
    loop {
        match Registry::from_entries(kept.iter().copied()) {
            Ok(registry) => return registry,
            Err(_) => {
                kept.pop();
            }
        }
    }
}

/// Entry names of a ZIP archive (from its central directory) or an OLE2 compound file (stream and
/// storage paths without the leading `/`, e.g. `WordDocument`, `ObjectPool/_1/Ole`); empty for
/// anything else, including damaged containers. Never decompresses anything.
pub fn probe_entries(bytes: &[u8]) -> Vec<String> {
    let read = || {
        if bytes.starts_with(ZIP_MAGIC) {
            zip_entries(bytes)
        } else if bytes.starts_with(OLE2_MAGIC) {
            ole_entries(bytes)
        } else {
            Vec::new()
        }
    };
    // The container parsers are not ours: a panic on a damaged file must not escape.
    catch_unwind(read).unwrap_or_default()
}

fn zip_entries(bytes: &[u8]) -> Vec<String> {
    match zip::ZipArchive::new(Cursor::new(bytes)) {
        Ok(archive) => archive
            .file_names()
            .filter_map(Result::ok)
            .take(MAX_PROBE_ENTRIES)
            .map(|n| n.into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn ole_entries(bytes: &[u8]) -> Vec<String> {
    match cfb::CompoundFile::open(Cursor::new(bytes)) {
        Ok(file) => file
            .walk()
            .filter(|e| !e.is_root())
            .take(MAX_PROBE_ENTRIES)
            .map(|e| {
                let path = e.path().to_string_lossy();
                path.trim_start_matches('/').to_owned()
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The result of one extraction: always something to store, with the reason when it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The detected format id, if any extractor recognised the bytes.
    pub format: Option<&'static str>,
    /// The version of that format's extractor.
    pub version: Option<u32>,
    /// The extracted text (empty on failure, except what a malformed file yielded before the
    /// damage).
    pub text: String,
    /// The output cap cut the text.
    pub truncated: bool,
    /// Why extraction failed, if it did (for logs and counters).
    pub failure: Option<String>,
    /// What the document says about itself; the language detected from the text when the
    /// format does not say.
    pub metadata: DocumentMetadata,
}

impl Outcome {
    fn failed(format: Option<&'static str>, reason: impl Into<String>) -> Self {
        Self {
            format,
            version: None,
            text: String::new(),
            truncated: false,
            failure: Some(reason.into()),
            metadata: DocumentMetadata::default(),
        }
    }
}

/// Detects the format of `bytes` (from the bytes alone) and extracts its text under `limits`.
///
/// Runs synchronously; callers run it on a blocking thread. Panics in a sniffer or extractor are
/// caught and reported as a failure.
pub fn extract(bytes: &[u8], limits: &Limits) -> Outcome {
    extract_in(built(), nested, bytes, limits, true, None)
}

/// [`extract`] with the caller's shared turns ([`Turns`]): OCR waits for its turn there and
/// lends the caller's extraction slot back meanwhile (the server's fair pools).
pub fn extract_with_turns(bytes: &[u8], limits: &Limits, turns: Arc<dyn Turns>) -> Outcome {
    extract_in(built(), nested, bytes, limits, true, Some(turns))
}

/// [`extract`] with OCR left out of the registry, for measuring the other extractors as peers
/// without OCR run (`extract-bench --no-ocr`); the server always uses [`extract`]. An image is
/// then an unrecognized format, and one embedded in a file (an e-mail's picture, an archive's,
/// a PDF page that is only a scan) adds only its heading, as any unrecognized embedded file.
pub fn extract_without_ocr(bytes: &[u8], limits: &Limits) -> Outcome {
    extract_in(
        built_without_ocr(),
        nested_without_ocr,
        bytes,
        limits,
        false,
        None,
    )
}

/// Detects and extracts with `built`'s registry, embedded files through `nested` (which uses
/// the same registry); a document's pictures are handed on when `pictures` says the registry
/// has OCR (and OCR runs, for pictures in documents).
fn extract_in(
    built: &'static Built,
    nested: NestedExtract,
    bytes: &[u8],
    limits: &Limits,
    pictures: bool,
    turns: Option<Arc<dyn Turns>>,
) -> Outcome {
    if bytes.is_empty() {
        return Outcome::failed(None, EMPTY);
    }
    if let Some(error) = &built.error {
        return Outcome::failed(None, error.clone());
    }
    let registry = &built.registry;
    let entries = probe_entries(bytes);
    let probe = Probe {
        bytes,
        entries: &entries,
    };
    let info = match catch_unwind(AssertUnwindSafe(|| registry.detect(&probe))) {
        Ok(Some(info)) => info,
        Ok(None) => return Outcome::failed(None, UNRECOGNIZED),
        Err(panic) => {
            return Outcome::failed(None, format!("panic while detecting: {}", message(&*panic)));
        }
    };
    run(info, bytes, limits, nested, pictures, turns)
}

/// Runs one extractor on `bytes` under `limits`, catching panics.
fn run(
    info: &'static ExtractorInfo,
    bytes: &[u8],
    limits: &Limits,
    nested: NestedExtract,
    pictures: bool,
    turns: Option<Arc<dyn Turns>>,
) -> Outcome {
    let format = Some(info.id);
    let mut sink = TextSink::new(limits)
        .with_nested(nested)
        .with_picture_test(ocr::is_image);
    if let Some(turns) = turns {
        sink = sink.with_turns(turns);
    }
    if pictures {
        sink = sink.with_pictures(ocr::reads_document_pictures);
    }
    let result = catch_unwind(AssertUnwindSafe(|| (info.make)().extract(bytes, &mut sink)));
    let kept = |sink: TextSink, failure: Option<String>| {
        let mut metadata = sink.metadata().clone();
        let truncated = sink.is_truncated();
        let text = sink.into_text();
        let failure = match failure {
            // A cut-short read says why in `truncated`.
            None if !truncated && text.trim().is_empty() => Some(no_text(info.id)),
            failure => failure,
        };
        if metadata.language.is_none() {
            metadata.language = detect_language(&text);
        }
        Outcome {
            format,
            version: None,
            truncated,
            text,
            failure,
            metadata,
        }
    };
    let outcome = match result {
        Ok(Ok(()) | Err(ExtractError::Full)) => kept(sink, None),
        // A damaged file yields what could be read before the damage.
        Ok(Err(e @ ExtractError::Malformed(_))) => kept(sink, Some(e.to_string())),
        Ok(Err(e)) => Outcome::failed(format, e.to_string()),
        Err(panic) => Outcome::failed(format, format!("panic: {}", message(&*panic))),
    };
    Outcome {
        version: Some(info.version),
        ..outcome
    }
}

/// Text read to guess a document's language.
const LANGUAGE_SAMPLE_BYTES: usize = 16 * 1024;

/// Letters a text needs before its language is guessed (a word or two guess wrong).
const LANGUAGE_MIN_LETTERS: usize = 40;

/// The language of `text` (ISO 639-3, as `whatlang` names it) when the guess is reliable.
fn detect_language(text: &str) -> Option<String> {
    if text
        .chars()
        .filter(|c| c.is_alphabetic())
        .take(LANGUAGE_MIN_LETTERS)
        .count()
        < LANGUAGE_MIN_LETTERS
    {
        return None;
    }
    let mut end = text.len().min(LANGUAGE_SAMPLE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let info = whatlang::detect(&text[..end])?;
    info.is_reliable().then(|| info.lang().code().to_string())
}

/// Extracts an embedded file (an attachment) into its container's sink: the format is detected
/// from the bytes like a top-level file's; an unrecognized or damaged one adds nothing.
fn nested(bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    nested_in(registry(), bytes, sink)
}

/// [`nested`] for [`extract_without_ocr`]: embedded images are not recognized.
fn nested_without_ocr(bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    nested_in(&built_without_ocr().registry, bytes, sink)
}

fn nested_in(registry: &Registry, bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    if bytes.is_empty() {
        return Ok(());
    }
    let entries = probe_entries(bytes);
    let probe = Probe {
        bytes,
        entries: &entries,
    };
    let Ok(Some(info)) = catch_unwind(AssertUnwindSafe(|| registry.detect(&probe))) else {
        return Ok(());
    };
    match catch_unwind(AssertUnwindSafe(|| (info.make)().extract(bytes, sink))) {
        Ok(result) => result,
        Err(panic) => Err(ExtractError::Malformed(format!(
            "panic: {}",
            message(&*panic)
        ))),
    }
}

fn message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests;
