//! ZIP-based document packages (OOXML, OpenDocument, EPUB) read under a decompression budget:
//! every entry is read through a reader that counts the bytes it inflates against one budget for
//! the whole file, so a zip bomb stops with [`ExtractError::LimitExceeded`] after at most that
//! many bytes, whatever its headers declare.

use std::{
    borrow::Cow,
    cell::{Cell, OnceCell},
    collections::HashMap,
    error::Error as StdError,
    fmt,
    io::{self, BufReader, Cursor, Read},
    rc::Rc,
};

use inlet_core::extract::ExtractError;
use quick_xml::{
    Reader,
    escape::resolve_xml_entity,
    events::{BytesRef, BytesStart},
};
use zip::{ZipArchive, read::ZipFile, result::ZipError};

/// XML events read between two looks at the clock.
pub const DEADLINE_EVERY_EVENTS: u32 = 4096;

/// Buffer size of the reader an entry is parsed from.
const ENTRY_BUFFER: usize = 64 * 1024;

/// The I/O error a [`Budgeted`] reader fails with once the budget is spent.
#[derive(Debug)]
struct BudgetExceeded;

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("decompressed size budget exceeded")
    }
}

impl StdError for BudgetExceeded {}

/// A reader that charges every byte it yields to a shared budget.
pub struct Budgeted<R> {
    inner: R,
    remaining: Rc<Cell<u64>>,
}

impl<R: Read> Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let left = self.remaining.get();
        let used = n as u64;
        if used > left {
            self.remaining.set(0);
            return Err(io::Error::other(BudgetExceeded));
        }
        self.remaining.set(left - used);
        Ok(n)
    }
}

/// A buffered, budgeted reader over one ZIP entry.
pub type Entry<'p, 'a> = BufReader<Budgeted<ZipFile<'p, Cursor<&'a [u8]>>>>;

/// An XML reader over one ZIP entry.
pub type XmlEntry<'p, 'a> = Reader<Entry<'p, 'a>>;

/// An opened ZIP package with a decompression budget shared by all its entries.
pub struct Package<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    /// The budget it was opened with.
    budget: u64,
    remaining: Rc<Cell<u64>>,
    /// Entry indexes by ASCII-lowercased name, built on the first inexact lookup.
    folded: OnceCell<HashMap<String, usize>>,
}

impl fmt::Debug for Package<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Package")
            .field("entries", &self.zip.len())
            .field("remaining", &self.remaining.get())
            .finish()
    }
}

impl<'a> Package<'a> {
    /// Opens `bytes` as a ZIP archive that may inflate at most `budget` bytes in total.
    pub fn open(bytes: &'a [u8], budget: u64) -> Result<Self, ExtractError> {
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
        Ok(Self {
            zip,
            budget,
            remaining: Rc::new(Cell::new(budget)),
            folded: OnceCell::new(),
        })
    }

    /// Bytes that may still be inflated.
    pub fn remaining(&self) -> u64 {
        self.remaining.get()
    }

    /// Bytes inflated so far.
    pub fn inflated(&self) -> u64 {
        self.budget.saturating_sub(self.remaining.get())
    }

    /// Entry names, in central-directory order (names that are not UTF-8 are left out).
    pub fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(Result::ok)
            .map(Cow::into_owned)
            .collect()
    }

    /// The index of the entry named `name`, compared exactly and then as Office compares part
    /// names: ignoring ASCII case, with `\` read as `/` (some writers use either).
    pub fn find(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches('/');
        self.zip.index_for_name(name).or_else(|| {
            let folded = self.folded.get_or_init(|| {
                let mut map = HashMap::new();
                for (i, n) in self.zip.file_names().enumerate() {
                    if let Ok(n) = n {
                        map.entry(fold_part_name(&n)).or_insert(i);
                    }
                }
                map
            });
            folded.get(&fold_part_name(name)).copied()
        })
    }

    /// Whether the package has an entry named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The uncompressed size the central directory declares for the entry named `name` (the
    /// `zip` crate fails a read that inflates more than that, so it bounds what any reader of the
    /// entry can inflate).
    pub fn declared_size(&self, name: &str) -> Result<u64, ExtractError> {
        let index = self
            .find(name)
            .ok_or_else(|| ExtractError::Malformed(format!("missing entry {name}")))?;
        Ok(self.zip.by_index_data(index).map_err(zip_error)?.size())
    }

    /// Opens the entry named `name` for reading under the budget.
    ///
    /// A missing entry is [`ExtractError::Malformed`]; an encrypted one or one compressed with a
    /// method we do not read is [`ExtractError::Unsupported`]; one declaring more bytes than the
    /// budget has left is [`ExtractError::LimitExceeded`] before anything is inflated.
    pub fn entry(&mut self, name: &str) -> Result<Entry<'_, 'a>, ExtractError> {
        let index = self
            .find(name)
            .ok_or_else(|| ExtractError::Malformed(format!("missing entry {name}")))?;
        let file = self.zip.by_index(index).map_err(zip_error)?;
        if file.size() > self.remaining.get() {
            return Err(limit_exceeded());
        }
        Ok(BufReader::with_capacity(
            ENTRY_BUFFER,
            Budgeted {
                inner: file,
                remaining: Rc::clone(&self.remaining),
            },
        ))
    }

    /// Opens the entry named `name` as XML, configured to read sloppy documents.
    pub fn xml(&mut self, name: &str) -> Result<XmlEntry<'_, 'a>, ExtractError> {
        let mut reader = Reader::from_reader(self.entry(name)?);
        lenient(&mut reader);
        Ok(reader)
    }

    /// Reads the whole entry named `name` into memory (for small parts: relationships,
    /// manifests).
    pub fn read(&mut self, name: &str) -> Result<Vec<u8>, ExtractError> {
        let mut entry = self.entry(name)?;
        let mut out = Vec::new();
        entry.read_to_end(&mut out).map_err(|e| io_error(&e))?;
        Ok(out)
    }
}

/// Name endings of the pictures read: bitmaps by OCR, metafiles for the text they draw
/// (`media/` folders also hold videos and sounds, which are not read into memory).
#[cfg(feature = "ole")]
const PICTURE_ENDINGS: &[&str] = &[
    ".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".gif", ".tif", ".tiff", ".bmp", ".webp", ".emf",
    ".wmf",
];

/// The files inside a package, written after its own text:
///
/// - the documents embedded under `embeddings` (OOXML's `word/embeddings/`, …: workbooks
///   behind charts, OLE objects), each extracted with the registry under its name
///   ([`TextSink::extract_nested`]); an OLE object's compound file is unwrapped to the file it
///   holds ([`crate::ole::embedded_in_compound_file`]);
/// - the pictures under `pictures` (`word/media/`, ODF's `Pictures/`), up to
///   [`MAX_PICTURES`] of at most [`MAX_PICTURE_BYTES`] ([`crate::ole::write_picture`]): a
///   metafile's text as it draws it, a bitmap's words by OCR where it runs, as an optional
///   file ([`TextSink::extract_optional`]), which cannot take the document's time; a picture
///   without words writes nothing.
///
/// What the package inflated is charged to the sink's decompression total first, so files
/// within files share one budget. An entry that cannot be read is skipped.
///
/// [`TextSink::extract_nested`]: inlet_core::extract::TextSink::extract_nested
/// [`TextSink::extract_optional`]: inlet_core::extract::TextSink::extract_optional
///
/// [`MAX_PICTURES`]: crate::ole::MAX_PICTURES
/// [`MAX_PICTURE_BYTES`]: crate::ole::MAX_PICTURE_BYTES
#[cfg(feature = "ole")]
pub fn write_package_files(
    pkg: &mut Package<'_>,
    embeddings: Option<&str>,
    pictures: &str,
    sink: &mut inlet_core::extract::TextSink,
) -> Result<(), ExtractError> {
    let under = |folder: &str| -> Vec<String> {
        let folder = fold_part_name(folder);
        pkg.names()
            .into_iter()
            .filter(|n| {
                let n = fold_part_name(n);
                n.len() > folder.len() && n.starts_with(&folder) && !n.ends_with('/')
            })
            .collect()
    };
    let embedded = embeddings.map(under).unwrap_or_default();
    // Bitmaps are read only when something reads them (OCR); metafiles always (their text).
    let bitmaps = sink.reads_pictures();
    let pictures: Vec<String> = under(pictures)
        .into_iter()
        .filter(|n| {
            let n = n.to_ascii_lowercase();
            let metafile = n.ends_with(".emf") || n.ends_with(".wmf");
            (metafile || bitmaps) && PICTURE_ENDINGS.iter().any(|e| n.ends_with(e))
        })
        .filter(|n| {
            pkg.declared_size(n)
                .is_ok_and(|s| s <= crate::ole::MAX_PICTURE_BYTES)
        })
        .take(crate::ole::MAX_PICTURES)
        .collect();
    let mut charged = 0;
    for (name, picture) in embedded
        .into_iter()
        .map(|n| (n, false))
        .chain(pictures.into_iter().map(|n| (n, true)))
    {
        sink.check_deadline()?;
        let Ok(bytes) = pkg.read(&name) else {
            continue;
        };
        let inflated = pkg.inflated();
        if !sink.charge_decompressed(inflated.saturating_sub(charged)) {
            return Err(sink.cut());
        }
        charged = inflated;
        let file_name = name.rsplit(['/', '\\']).next().unwrap_or(&name);
        if picture {
            crate::ole::write_picture(file_name, &bytes, sink)?;
            continue;
        }
        let mut budget = sink.decompressed_room();
        let object = if bytes.starts_with(crate::ole::OLE2_MAGIC) {
            crate::ole::embedded_in_compound_file(&bytes, file_name, &mut budget)
        } else {
            Some(crate::ole::Embedded {
                name: file_name.to_owned(),
                bytes,
            })
        };
        if let Some(object) = object {
            sink.extract_nested(&object.name, &object.bytes)?;
        }
    }
    Ok(())
}

/// Configures an XML reader to read what is there rather than reject sloppy documents.
pub fn lenient<R>(reader: &mut Reader<R>) {
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.allow_dangling_amp = true;
    config.check_comments = false;
}

fn limit_exceeded() -> ExtractError {
    ExtractError::LimitExceeded("decompressed size budget exceeded".to_owned())
}

/// Maps a ZIP error: encryption and unknown methods are unsupported, the rest is damage.
pub fn zip_error(e: ZipError) -> ExtractError {
    match e {
        ZipError::UnsupportedArchive(what) => ExtractError::Unsupported(what.to_string()),
        ZipError::Io(e) => io_error(&e),
        other => ExtractError::malformed(other),
    }
}

/// Maps an I/O error from a [`Budgeted`] reader: a spent budget is a limit, the rest is damage.
pub fn io_error(e: &io::Error) -> ExtractError {
    let budget = e
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<BudgetExceeded>().is_some());
    if budget {
        limit_exceeded()
    } else {
        ExtractError::malformed(e)
    }
}

/// Maps an XML error, keeping a spent budget apart from damage.
pub fn xml_error(e: &quick_xml::Error) -> ExtractError {
    match e {
        quick_xml::Error::Io(io) => io_error(io),
        other => ExtractError::malformed(other),
    }
}

/// The text an entity or character reference stands for: the five predefined XML entities and
/// numeric references; `None` for anything else (no DTD is read).
pub fn resolve_ref(r: &BytesRef<'_>) -> Option<char> {
    match r.resolve_char_ref() {
        Ok(Some(c)) => Some(c),
        Ok(None) => resolve_xml_entity(r).and_then(|s| s.chars().next()),
        Err(_) => None,
    }
}

/// The value of the attribute whose local name (prefix ignored) is `local`.
pub fn attr(e: &BytesStart<'_>, local: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .map(|a| attr_value(&a))
}

/// An attribute's value with entity and character references resolved (raw if they do not).
pub fn attr_value(a: &quick_xml::events::attributes::Attribute<'_>) -> String {
    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .map_or_else(|_| a.value.clone().into_owned(), Cow::into_owned)
}

/// Resolves a relationship or manifest target against the folder of the part that names it
/// (`base` ends with `/` or is empty); `..` and `.` segments are folded, a leading `/` means the
/// package root, and `%xx` escapes are decoded.
pub fn resolve(base: &str, target: &str) -> String {
    let target = percent_decode(target);
    let target = target.split(['#', '?']).next().unwrap_or_default();
    let joined = match target.strip_prefix('/') {
        Some(abs) => abs.to_owned(),
        None => format!("{base}{target}"),
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The folder of a part name, with its trailing `/` (empty at the root).
pub fn folder(part: &str) -> &str {
    part.rfind('/').map_or("", |i| &part[..=i])
}

fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Keeps the first error that matters: the output cap, the deadline and limits end extraction
/// at once, while damage in one part lets the others be read and is reported at the end.
#[derive(Debug, Default)]
pub struct Damage(Option<ExtractError>);

impl Damage {
    /// Records `result`; returns the error to stop with, if extraction must stop now.
    pub fn note(&mut self, result: Result<(), ExtractError>) -> Result<(), ExtractError> {
        match result {
            Ok(()) => Ok(()),
            Err(e @ (ExtractError::Malformed(_) | ExtractError::Unsupported(_))) => {
                if self.0.is_none() {
                    self.0 = Some(e);
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The final result: the first damage noted, if any.
    pub fn finish(self) -> Result<(), ExtractError> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The media type stored first in the package (`mimetype`, uncompressed, right after its local
/// header, as the ODF and EPUB specifications require), if it is there. Reads only the first
/// local header: usable for sniffing.
pub fn stored_mimetype(bytes: &[u8]) -> Option<&str> {
    // Local file header: 30 bytes, then the name, the extra field and the data.
    if !bytes.starts_with(b"PK\x03\x04") || bytes.len() < 30 {
        return None;
    }
    let method = u16::from_le_bytes([bytes[8], bytes[9]]);
    let size = u32::from_le_bytes([bytes[18], bytes[19], bytes[20], bytes[21]]) as usize;
    let name_len = u16::from_le_bytes([bytes[26], bytes[27]]) as usize;
    let extra_len = u16::from_le_bytes([bytes[28], bytes[29]]) as usize;
    let name = bytes.get(30..30 + name_len)?;
    if method != 0 || name != b"mimetype" || size > 256 {
        return None;
    }
    let start = 30 + name_len + extra_len;
    let data = bytes.get(start..start + size)?;
    std::str::from_utf8(data).ok().map(str::trim)
}

/// A part name as Office compares it: ASCII lowercase, `\` as `/`, no leading `/`.
fn fold_part_name(name: &str) -> String {
    name.replace('\\', "/")
        .trim_start_matches('/')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_against_the_source_folder() {
        assert_eq!(
            resolve("ppt/", "slides/slide1.xml"),
            "ppt/slides/slide1.xml"
        );
        assert_eq!(
            resolve("ppt/slides/", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(resolve("word/", "/word/header1.xml"), "word/header1.xml");
        assert_eq!(
            resolve("OEBPS/", "Text/ch%201.xhtml#x"),
            "OEBPS/Text/ch 1.xhtml"
        );
        assert_eq!(resolve("", "../../a.xml"), "a.xml");
        assert_eq!(folder("word/document.xml"), "word/");
        assert_eq!(folder("content.xml"), "");
    }
}
