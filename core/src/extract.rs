//! Text extraction contracts: the [`Extractor`] trait, its `inventory` registration
//! ([`ExtractorInfo`]), the [`Registry`] that picks an extractor by the file's bytes, and the
//! [`TextSink`] that enforces the output cap and time budget while extracting.
//!
//! An extractor crate registers each format it handles:
//!
//! ```
//! use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
//!
//! struct Shout;
//! impl Extractor for Shout {
//!     fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
//!         let text = std::str::from_utf8(&input[6..]).map_err(|e| ExtractError::malformed(e))?;
//!         sink.push(text)
//!     }
//! }
//! inventory::submit! {
//!     ExtractorInfo {
//!         id: "shout",
//!         version: 1,
//!         media_type: "application/octet-stream",
//!         sniff: |p: &Probe<'_>| if p.bytes.starts_with(b"SHOUT\n") { 90 } else { 0 },
//!         make: || Box::new(Shout),
//!     }
//! }
//! ```

use std::{collections::HashMap, fmt, time::Instant};

use serde::{Deserialize, Serialize};

/// Characters of text kept per file (spec 2.4: about the first million).
pub const MAX_CHARS: usize = 1_000_000;

/// Default cap on bytes decompressed from a container (ZIP entries, streams): 512 MiB.
pub const MAX_DECOMPRESSED_BYTES: u64 = 512 * 1024 * 1024;

/// What a document says about itself, as its format carries it (issue 16): title, authors,
/// dates, length and language. For an e-mail: the subject, the sender, the recipients and the
/// date. Nothing of it changes a record's title (spec 2.4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentMetadata {
    /// The document's own title (an e-mail's subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its authors (an e-mail's sender).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
    /// An e-mail's recipients (To).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<String>,
    /// When it was created (an e-mail's date), RFC 3339 when the format's date could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// When it was last modified, RFC 3339 when the format's date could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Pages, slides or sheets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The language: the one the format declares, else detected from the text (ISO 639 code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl DocumentMetadata {
    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Keeps a non-blank, trimmed value (at most 1,000 characters) in `slot` unless it is set.
pub fn keep(slot: &mut Option<String>, value: &str) {
    let value = value.trim();
    if slot.is_none() && !value.is_empty() {
        *slot = Some(value.chars().take(MAX_METADATA_CHARS).collect());
    }
}

/// Longest metadata value kept, in characters.
pub const MAX_METADATA_CHARS: usize = 1000;
/// Most authors or recipients kept.
pub const MAX_METADATA_NAMES: usize = 100;

/// Keeps the non-blank names (each trimmed to [`MAX_METADATA_CHARS`]) in `list` unless it has
/// some, at most [`MAX_METADATA_NAMES`].
pub fn keep_names<'a>(list: &mut Vec<String>, names: impl IntoIterator<Item = &'a str>) {
    if !list.is_empty() {
        return;
    }
    *list = names
        .into_iter()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .take(MAX_METADATA_NAMES)
        .map(|n| n.chars().take(MAX_METADATA_CHARS).collect())
        .collect();
}

/// What an extraction waits for that others share (DESIGN 10), handed out by its caller (the
/// server, fairly between workspaces): the caller's extraction slot, and the OCR processes. An
/// extractor about to run OCR gives its slot back for the wait and the run
/// ([`Turns::lend_slot`]), so waiting for OCR holds no extraction slot.
pub trait Turns: Send + Sync + std::fmt::Debug {
    /// Gives the caller's extraction slot back; the guard takes it again when dropped (waiting
    /// for it until `deadline` at most).
    fn lend_slot(&self, deadline: Instant) -> Box<dyn Send>;
    /// Waits until `deadline` for a turn of the OCR processes: a guard to hold while the
    /// process runs, or `None` when the deadline passed first.
    fn ocr_turn(&self, deadline: Instant) -> Option<Box<dyn Send>>;
}

/// Limits one extraction runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Stop after this many characters of output.
    pub max_chars: usize,
    /// Give up after decompressing this many bytes in total.
    pub max_decompressed_bytes: u64,
    /// Give up at this instant.
    pub deadline: Option<Instant>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_chars: MAX_CHARS,
            max_decompressed_bytes: MAX_DECOMPRESSED_BYTES,
            deadline: None,
        }
    }
}

/// Why an extractor stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The output cap was reached; the text so far is kept. Not a failure.
    #[error("output cap reached")]
    Full,
    /// The time budget ran out.
    #[error("time budget exceeded")]
    TimedOut,
    /// A size limit (decompressed bytes, nesting) was exceeded.
    #[error("limit exceeded: {0}")]
    LimitExceeded(String),
    /// The file is damaged or not what its bytes first suggested.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// The file is of the format but uses a feature we do not read (e.g. encryption).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl ExtractError {
    /// Wraps any parser error as [`ExtractError::Malformed`].
    pub fn malformed(e: impl fmt::Display) -> Self {
        Self::Malformed(e.to_string())
    }
}

/// What an extractor is shown to decide whether a file is its format.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    /// The whole file.
    pub bytes: &'a [u8],
    /// Entry names when the file is a ZIP or OLE2 container (empty otherwise).
    pub entries: &'a [String],
}

impl Probe<'_> {
    /// Whether the container has an entry with this name, compared as Office compares part
    /// names: ignoring ASCII case, with `\` read as `/`.
    pub fn has_entry(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|e| e == name || same_part_name(e, name))
    }
}

/// Whether two part names are the same for Office: ASCII case ignored, `\` as `/`.
pub fn same_part_name(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            let fold = |c: u8| {
                if c == b'\\' {
                    b'/'
                } else {
                    c.to_ascii_lowercase()
                }
            };
            fold(x) == fold(y)
        })
}

/// Turns a file's bytes into text, writing into a [`TextSink`].
///
/// Runs on a blocking thread, under `catch_unwind`; it should stop early when a sink call returns
/// an error (pass it on with `?`).
pub trait Extractor: Send + Sync {
    /// Extracts the text of `input` into `sink`.
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError>;
}

/// One registered format, submitted with `inventory::submit!`. Const data only.
pub struct ExtractorInfo {
    /// Format id, unique across all extractors (e.g. `pdf`, `docx`, `markdown`).
    pub id: &'static str,
    /// The extractor's version: raise it when its output for some input changes, so records it
    /// read before are read again from their originals (DESIGN 7b).
    pub version: u32,
    /// The format's media type (`application/pdf`), sent with a download of an original.
    pub media_type: &'static str,
    /// Confidence 0–100 that the probed bytes are this format; 0 means "not mine".
    pub sniff: fn(&Probe<'_>) -> u8,
    /// Builds the extractor.
    pub make: fn() -> Box<dyn Extractor>,
}

impl fmt::Debug for ExtractorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtractorInfo")
            .field("id", &self.id)
            .finish()
    }
}

inventory::collect!(ExtractorInfo);

/// The extractors linked into this binary, keyed by format id.
#[derive(Debug)]
pub struct Registry {
    entries: Vec<&'static ExtractorInfo>,
}

impl Registry {
    /// Builds the registry from every `inventory` submission; two submissions with one id are an
    /// error rather than last-one-wins.
    pub fn from_inventory() -> Result<Self, String> {
        Self::from_entries(inventory::iter::<ExtractorInfo>)
    }

    /// Builds a registry from the given entries, refusing duplicate ids.
    pub fn from_entries(
        entries: impl IntoIterator<Item = &'static ExtractorInfo>,
    ) -> Result<Self, String> {
        let mut by_id: HashMap<&str, &'static ExtractorInfo> = HashMap::new();
        for e in entries {
            if by_id.insert(e.id, e).is_some() {
                return Err(format!("two extractors register the format id '{}'", e.id));
            }
        }
        let mut entries: Vec<_> = by_id.into_values().collect();
        entries.sort_by_key(|e| e.id);
        Ok(Self { entries })
    }

    /// Registered format ids, sorted.
    pub fn formats(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.id)
    }

    /// The entry with this id.
    pub fn get(&self, id: &str) -> Option<&'static ExtractorInfo> {
        self.entries.iter().copied().find(|e| e.id == id)
    }

    /// The most confident extractor for the probed bytes (ties go to the smaller id), if any
    /// scores above 0.
    pub fn detect(&self, probe: &Probe<'_>) -> Option<&'static ExtractorInfo> {
        let mut best: Option<(u8, &'static ExtractorInfo)> = None;
        for e in &self.entries {
            let score = (e.sniff)(probe);
            if score > 0 && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, e));
            }
        }
        best.map(|(_, e)| e)
    }
}

/// How often (in pushes) the sink looks at the clock.
const DEADLINE_CHECK_EVERY: u32 = 64;

/// Collects extracted text under the output cap and time budget.
///
/// `push` returns [`ExtractError::Full`] once the cap is reached (the text is cut at the cap on a
/// character boundary) and [`ExtractError::TimedOut`] once the deadline has passed, so extractors
/// stop as soon as more work is pointless.
#[derive(Debug)]
pub struct TextSink {
    text: String,
    chars: usize,
    max_chars: usize,
    truncated: bool,
    deadline: Option<Instant>,
    max_decompressed_bytes: u64,
    decompressed: u64,
    pushes: u32,
    nested: Option<NestedExtract>,
    depth: u8,
    /// An optional embedded file ran out of its time ([`TextSink::extract_optional`]): later
    /// ones are skipped and the text is reported truncated.
    optional_stopped: bool,
    /// A file was left out (for being [`MAX_NESTING`] files deep, or a picture beyond
    /// [`MAX_MEMBER_PICTURES`]): the text is reported truncated.
    left_out: bool,
    /// Says whether a container's member is a picture ([`TextSink::extract_member`]).
    picture_test: Option<fn(&[u8]) -> bool>,
    /// Members read as pictures so far.
    member_pictures: usize,
    /// The caller's shared turns ([`TextSink::with_turns`]).
    turns: Option<std::sync::Arc<dyn Turns>>,
    /// Says whether pictures in documents are worth handing on ([`TextSink::reads_pictures`]).
    picture_reader: Option<fn() -> bool>,
    metadata: DocumentMetadata,
}

/// What a container extractor calls to extract an embedded file (an e-mail attachment) into
/// the same sink: detects the format from the bytes and runs that extractor. Installed by the
/// facade that owns the registry ([`TextSink::with_nested`]).
pub type NestedExtract = fn(bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError>;

/// Files within files are followed this deep (an attachment of an attachment of an e-mail);
/// deeper ones are skipped, so a message that contains itself cannot recurse without end.
pub const MAX_NESTING: u8 = 3;

/// Pictures among a container's members read by [`TextSink::extract_member`] at most (as many
/// as a document's pictures: `inlet_extract_support::ole::MAX_PICTURES`).
pub const MAX_MEMBER_PICTURES: usize = 50;

impl TextSink {
    /// An empty sink with these limits.
    pub fn new(limits: &Limits) -> Self {
        Self {
            text: String::new(),
            chars: 0,
            max_chars: limits.max_chars,
            truncated: false,
            deadline: limits.deadline,
            max_decompressed_bytes: limits.max_decompressed_bytes,
            decompressed: 0,
            pushes: 0,
            nested: None,
            depth: 0,
            optional_stopped: false,
            left_out: false,
            picture_test: None,
            member_pictures: 0,
            turns: None,
            picture_reader: None,
            metadata: DocumentMetadata::default(),
        }
    }

    /// The same sink, with `reader` saying whether the nested extractor reads pictures (OCR is
    /// installed and turned on for pictures in documents): [`TextSink::reads_pictures`]. Asked
    /// only when a document has pictures, so other files never wait for that check.
    pub fn with_pictures(mut self, reader: fn() -> bool) -> Self {
        self.picture_reader = Some(reader);
        self
    }

    /// Whether a document's pictures are worth reading out and handing on as optional files
    /// ([`TextSink::extract_optional`]): off unless the facade says the registry reads them, so
    /// that without OCR a document's pictures are not even inflated.
    pub fn reads_pictures(&self) -> bool {
        self.nested.is_some() && self.picture_reader.is_some_and(|reads| reads())
    }

    /// Whether embedded files are read ([`TextSink::with_nested`]), so an extractor can hand
    /// a part to the registry (an e-mail's HTML body) instead of a rougher reading of its own.
    pub fn reads_nested(&self) -> bool {
        self.nested.is_some()
    }

    /// The same sink, able to extract embedded files through `nested`.
    pub fn with_nested(mut self, nested: NestedExtract) -> Self {
        self.nested = Some(nested);
        self
    }

    /// Extracts an embedded file (`name`, `bytes`) into this sink under the same cap and
    /// deadline, after a heading line with its name. A file that cannot be read adds only its
    /// heading (the container's text is kept); the cap and the deadline stop the container too.
    /// Without a nested extractor, or [`MAX_NESTING`] files deep, only the heading is written
    /// (and, when too deep, the text is reported truncated: something was left out).
    pub fn extract_nested(&mut self, name: &str, bytes: &[u8]) -> Result<(), ExtractError> {
        self.line_break()?;
        self.push(name)?;
        self.line_break()?;
        self.nested_body(bytes)
    }

    /// The embedded file's text, after its heading ([`TextSink::extract_nested`]).
    fn nested_body(&mut self, bytes: &[u8]) -> Result<(), ExtractError> {
        let Some(nested) = self.nested else {
            return Ok(());
        };
        if self.depth >= MAX_NESTING {
            self.left_out();
            return Ok(());
        }
        self.depth += 1;
        let result = nested(bytes, self);
        self.depth -= 1;
        match result {
            Err(e @ (ExtractError::Full | ExtractError::TimedOut)) => Err(e),
            _ => self.line_break(),
        }
    }

    /// Records that part of the file was left out by a bound (an embedded file [`MAX_NESTING`]
    /// deep in a container that follows its own nesting, as `.msg` storages do; a scanned page
    /// too large to read): the text is then reported truncated.
    pub fn left_out(&mut self) {
        self.left_out = true;
    }

    /// The same sink, with the caller's shared turns: extractors that run OCR take their turn
    /// there ([`TextSink::turns`]).
    pub fn with_turns(mut self, turns: std::sync::Arc<dyn Turns>) -> Self {
        self.turns = Some(turns);
        self
    }

    /// The caller's shared turns, when it gave them ([`Turns`]); without, an extractor uses its
    /// own bound (the command line, tests).
    pub fn turns(&self) -> Option<std::sync::Arc<dyn Turns>> {
        self.turns.clone()
    }

    /// The same sink, with `test` saying whether a container's member is a picture (an image
    /// format the registry reads by OCR): [`TextSink::extract_member`].
    pub fn with_picture_test(mut self, test: fn(&[u8]) -> bool) -> Self {
        self.picture_test = Some(test);
        self
    }

    /// Extracts a member of a container (an e-mail's attachment, an archive's file): a picture
    /// as an optional file ([`TextSink::extract_optional`]: it cannot take its container's
    /// time or text), at most [`MAX_MEMBER_PICTURES`] of them (later ones are left out and the
    /// text reported truncated); anything else as [`TextSink::extract_nested`] does.
    pub fn extract_member(&mut self, name: &str, bytes: &[u8]) -> Result<(), ExtractError> {
        if !self
            .picture_test
            .is_some_and(|is_picture| is_picture(bytes))
        {
            return self.extract_nested(name, bytes);
        }
        if self.member_pictures >= MAX_MEMBER_PICTURES {
            self.left_out = true;
            return Ok(());
        }
        self.member_pictures += 1;
        // The member's name stays (it is searchable), whatever its picture gives.
        self.line_break()?;
        self.push(name)?;
        self.extract_optional("", bytes)
    }

    /// Share of the time left that an optional embedded file may take
    /// ([`TextSink::extract_optional`]), in quarters: the rest stays with its container.
    const OPTIONAL_SHARE_QUARTERS: u32 = 3;

    /// Extracts an embedded file that adds to its container's text but is not part of it (a
    /// picture in a document, read by OCR): as [`TextSink::extract_nested`], except that
    ///
    /// - its heading is taken back when the file adds no text (a picture without words, or a
    ///   format no extractor reads), so pictures leave no trace but their words;
    /// - it may use three quarters of the time left, not all of it: when it runs out, its text so
    ///   far is kept, later optional files are skipped, the container goes on with the time it
    ///   kept, and the text is reported truncated ([`TextSink::is_truncated`]).
    pub fn extract_optional(&mut self, name: &str, bytes: &[u8]) -> Result<(), ExtractError> {
        if self.optional_stopped {
            return Ok(());
        }
        let mark = (self.text.len(), self.chars);
        self.line_break()?;
        self.push(name)?;
        self.line_break()?;
        let body = self.text.len();
        let outer = self.deadline;
        if let Some(d) = outer {
            let now = Instant::now();
            let left = d.saturating_duration_since(now);
            self.deadline = Some(now + left * Self::OPTIONAL_SHARE_QUARTERS / 4);
        }
        let result = self.nested_body(bytes);
        self.deadline = outer;
        match result {
            Err(ExtractError::TimedOut) if self.check_deadline().is_ok() => {
                self.optional_stopped = true;
            }
            other => other?,
        }
        if self.text[body..].trim().is_empty() {
            self.text.truncate(mark.0);
            self.chars = mark.1;
        }
        Ok(())
    }

    /// Appends text.
    pub fn push(&mut self, s: &str) -> Result<(), ExtractError> {
        if self.truncated {
            return Err(ExtractError::Full);
        }
        self.pushes = self.pushes.wrapping_add(1);
        if self.pushes.is_multiple_of(DEADLINE_CHECK_EVERY) {
            self.check_deadline()?;
        }
        let room = self.max_chars - self.chars;
        // Fast path: a byte count within the room is a char count within it too.
        if s.len() <= room {
            self.text.push_str(s);
            self.chars += s.chars().count();
            return Ok(());
        }
        match s.char_indices().nth(room) {
            None => {
                self.text.push_str(s);
                self.chars += s.chars().count();
                Ok(())
            }
            Some((cut, _)) => {
                self.text.push_str(&s[..cut]);
                self.chars += room;
                self.truncated = true;
                Err(ExtractError::Full)
            }
        }
    }

    /// Appends one character.
    pub fn push_char(&mut self, c: char) -> Result<(), ExtractError> {
        let mut buf = [0u8; 4];
        self.push(c.encode_utf8(&mut buf))
    }

    /// Ends the current line unless the text is empty or already ends with a line break.
    pub fn line_break(&mut self) -> Result<(), ExtractError> {
        if self.text.is_empty() || self.text.ends_with('\n') {
            return Ok(());
        }
        self.push("\n")
    }

    /// Separates words: a space unless the text is empty or already ends with whitespace.
    pub fn space(&mut self) -> Result<(), ExtractError> {
        if self.text.is_empty() || self.text.ends_with(char::is_whitespace) {
            return Ok(());
        }
        self.push(" ")
    }

    /// The instant this extraction must end by, if any (for work done outside the sink, such as
    /// an OCR process to stop in time).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Fails with [`ExtractError::TimedOut`] once the deadline has passed.
    pub fn check_deadline(&self) -> Result<(), ExtractError> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(ExtractError::TimedOut),
            _ => Ok(()),
        }
    }

    /// Bytes an extractor may decompress from one input ([`Limits::max_decompressed_bytes`]).
    pub fn max_decompressed_bytes(&self) -> u64 {
        self.max_decompressed_bytes
    }

    /// Counts `bytes` more decompressed from this input, files within it included (an archive's
    /// members, nested archives), against [`Limits::max_decompressed_bytes`]; `false` once the
    /// total would exceed it (nothing is counted then).
    pub fn charge_decompressed(&mut self, bytes: u64) -> bool {
        match self.decompressed.checked_add(bytes) {
            Some(total) if total <= self.max_decompressed_bytes => {
                self.decompressed = total;
                true
            }
            _ => false,
        }
    }

    /// Bytes that may still be decompressed by [`TextSink::charge_decompressed`].
    pub fn decompressed_room(&self) -> u64 {
        self.max_decompressed_bytes
            .saturating_sub(self.decompressed)
    }

    /// Characters that still fit before the cap (0 once full).
    pub fn remaining(&self) -> usize {
        self.max_chars.saturating_sub(self.chars)
    }

    /// Characters collected so far.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// Marks the text as cut short by a limit other than the output cap (an archive's entry
    /// count or total size): the text so far is kept and reported truncated. Returns
    /// [`ExtractError::Full`] for the extractor to pass on, which stops it.
    pub fn cut(&mut self) -> ExtractError {
        self.truncated = true;
        ExtractError::Full
    }

    /// Whether the cap was reached (or [`TextSink::cut`] cut the text, or an optional embedded
    /// file ran out of time: [`TextSink::extract_optional`]).
    pub fn is_truncated(&self) -> bool {
        self.truncated || self.optional_stopped || self.left_out
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The collected text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// The document's metadata to fill in; `None` while extracting a file within a file (an
    /// attachment's title is not the e-mail's).
    pub fn metadata_mut(&mut self) -> Option<&mut DocumentMetadata> {
        (self.depth == 0).then_some(&mut self.metadata)
    }

    /// The metadata the extractor reported.
    pub fn metadata(&self) -> &DocumentMetadata {
        &self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn part_names_compare_as_office_compares_them() {
        let entries = ["WORD\\Document.XML".to_string(), "mimetype".to_string()];
        let probe = Probe {
            bytes: b"PK",
            entries: &entries,
        };
        assert!(probe.has_entry("word/document.xml"));
        assert!(probe.has_entry("mimetype"));
        assert!(!probe.has_entry("word/document.xm"));
        assert!(!probe.has_entry("word/styles.xml"));
        assert!(same_part_name("a\\B", "A/b"));
        assert!(!same_part_name("ab", "a/"));
    }

    fn limits(max_chars: usize) -> Limits {
        Limits {
            max_chars,
            ..Limits::default()
        }
    }

    /// A nested extractor for the tests: `words` writes them, `slow` runs until its deadline.
    fn fake_nested(bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        match bytes {
            b"slow" => loop {
                sink.check_deadline()?;
                std::thread::sleep(Duration::from_millis(5));
            },
            b"blank" => sink.push("  \n "),
            other => sink.push(&String::from_utf8_lossy(other)),
        }
    }

    #[test]
    fn optional_files_leave_no_heading_without_text_and_keep_the_container_in_time() {
        // Pictures are read only with a nested extractor and a reader that says yes.
        let s = TextSink::new(&limits(1000));
        assert!(!s.reads_pictures());
        assert!(!s.with_pictures(|| true).reads_pictures());
        let s = TextSink::new(&limits(1000)).with_nested(fake_nested);
        assert!(!s.reads_pictures());
        assert!(!s.with_pictures(|| false).reads_pictures());
        let s = TextSink::new(&limits(1000)).with_nested(fake_nested);
        assert!(s.with_pictures(|| true).reads_pictures());

        let mut s = TextSink::new(&limits(1000)).with_nested(fake_nested);
        s.push("Slide text").unwrap();
        s.extract_optional("image1.png", b"blank").unwrap();
        assert_eq!(s.as_str(), "Slide text");
        assert_eq!(s.chars(), 10);
        s.extract_optional("image2.png", b"WORDS").unwrap();
        assert_eq!(s.as_str(), "Slide text\nimage2.png\nWORDS\n");
        assert!(!s.is_truncated());

        // A picture that would take all the time gets three quarters of it: the container
        // keeps the rest, later optional files are skipped, and the text says it is incomplete.
        let deadline = Instant::now() + Duration::from_millis(400);
        let mut s = TextSink::new(&Limits {
            deadline: Some(deadline),
            ..limits(1000)
        })
        .with_nested(fake_nested);
        s.push("Slide text").unwrap();
        s.extract_optional("scan.png", b"slow").unwrap();
        assert!(Instant::now() < deadline);
        assert_eq!(s.deadline(), Some(deadline));
        assert!(s.is_truncated());
        s.extract_optional("image3.png", b"WORDS").unwrap();
        assert_eq!(s.as_str(), "Slide text");
        s.push(" and more").unwrap();
        s.extract_nested("attached.txt", b"kept").unwrap();
        assert_eq!(s.as_str(), "Slide text and more\nattached.txt\nkept\n");
    }

    #[test]
    fn sink_cuts_at_the_cap_on_a_char_boundary() {
        let mut s = TextSink::new(&limits(5));
        s.push("ab").unwrap();
        assert!(matches!(s.push("cdéfg"), Err(ExtractError::Full)));
        assert_eq!(s.as_str(), "abcdé");
        assert_eq!(s.chars(), 5);
        assert!(s.is_truncated());
        assert!(matches!(s.push("x"), Err(ExtractError::Full)));
    }

    #[test]
    fn sink_counts_chars_not_bytes() {
        let mut s = TextSink::new(&limits(3));
        s.push("éé").unwrap();
        assert_eq!(s.chars(), 2);
        s.push_char('é').unwrap();
        assert!(!s.is_truncated());
        assert!(s.push_char('x').is_err());
        assert_eq!(s.as_str(), "ééé");
    }

    #[test]
    fn sink_reports_the_deadline() {
        let past = Instant::now();
        let mut s = TextSink::new(&Limits {
            deadline: Some(past),
            ..Limits::default()
        });
        assert!(matches!(s.check_deadline(), Err(ExtractError::TimedOut)));
        let mut result = Ok(());
        for _ in 0..DEADLINE_CHECK_EVERY {
            result = s.push("x");
        }
        assert!(matches!(result, Err(ExtractError::TimedOut)));
    }

    #[test]
    fn separators_do_not_pile_up() {
        let mut s = TextSink::new(&Limits::default());
        s.line_break().unwrap();
        s.space().unwrap();
        s.push("a").unwrap();
        s.space().unwrap();
        s.space().unwrap();
        s.push("b").unwrap();
        s.line_break().unwrap();
        s.line_break().unwrap();
        assert_eq!(s.as_str(), "a b\n");
    }

    fn never(_: &Probe<'_>) -> u8 {
        0
    }
    fn always(_: &Probe<'_>) -> u8 {
        50
    }
    struct Nop;
    impl Extractor for Nop {
        fn extract(&self, _: &[u8], _: &mut TextSink) -> Result<(), ExtractError> {
            Ok(())
        }
    }
    static A: ExtractorInfo = ExtractorInfo {
        id: "a",
        version: 1,
        media_type: "application/octet-stream",
        sniff: never,
        make: || Box::new(Nop),
    };
    static B: ExtractorInfo = ExtractorInfo {
        id: "b",
        version: 1,
        media_type: "application/octet-stream",
        sniff: always,
        make: || Box::new(Nop),
    };
    static B2: ExtractorInfo = ExtractorInfo {
        id: "b",
        version: 1,
        media_type: "application/octet-stream",
        sniff: never,
        make: || Box::new(Nop),
    };

    #[test]
    fn registry_detects_by_score_and_refuses_duplicates() {
        let r = Registry::from_entries([&A, &B]).unwrap();
        let probe = Probe {
            bytes: b"x",
            entries: &[],
        };
        assert_eq!(r.detect(&probe).map(|e| e.id), Some("b"));
        assert_eq!(r.formats().collect::<Vec<_>>(), ["a", "b"]);
        let r = Registry::from_entries([&A]).unwrap();
        assert!(r.detect(&probe).is_none());
        assert!(
            Registry::from_entries([&B, &B2])
                .unwrap_err()
                .contains("'b'")
        );
    }
}
