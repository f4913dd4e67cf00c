//! OLE2 compound files (the container of .doc, .xls, .ppt and .msg): reading a stream whole
//! under the input's decompression budget, the property sets of the summary streams (title,
//! author, dates, page and slide counts) as [`Summary`], and the files embedded as objects
//! ([`embedded_file`], [`write_embedded`], [`embedded_in_compound_file`]).

use std::io::{Cursor, Read};

use encoding_rs::{BIG5, EUC_KR, Encoding, GBK, SHIFT_JIS, WINDOWS_1252};
use inlet_core::extract::{
    DocumentMetadata, ExtractError, MAX_METADATA_CHARS, TextSink, keep, keep_names,
};

/// Reads the stream `name` whole, refusing one larger than what is left of `budget`, which is
/// charged with what was read.
pub fn read_stream(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    name: &str,
    budget: &mut u64,
) -> Result<Vec<u8>, ExtractError> {
    let stream = file
        .open_stream(name)
        .map_err(|e| ExtractError::Malformed(format!("{name}: {e}")))?;
    if stream.len() > *budget {
        return Err(ExtractError::LimitExceeded(format!(
            "{name} stream too large"
        )));
    }
    let mut out = Vec::new();
    stream
        .take(*budget)
        .read_to_end(&mut out)
        .map_err(|e| ExtractError::Malformed(format!("{name}: {e}")))?;
    *budget -= out.len() as u64;
    Ok(out)
}

/// The signature an OLE2 compound file (`.doc`, `.xls`, `.ppt`, `.msg`, OLE objects) starts with.
pub const OLE2_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
/// The summary stream every OLE2 document may carry (MS-OLEPS 3.1).
pub const SUMMARY_INFORMATION: &str = "\u{5}SummaryInformation";
/// The Office document summary stream (MS-OLEPS 3.2).
pub const DOCUMENT_SUMMARY_INFORMATION: &str = "\u{5}DocumentSummaryInformation";

/// FMTID_SummaryInformation, {F29F85E0-4FF9-1068-AB91-08002B27B3D9}, as stored.
const FMTID_SUMMARY: [u8; 16] = [
    0xE0, 0x85, 0x9F, 0xF2, 0xF9, 0x4F, 0x68, 0x10, 0xAB, 0x91, 0x08, 0x00, 0x2B, 0x27, 0xB3, 0xD9,
];
/// FMTID_DocSummaryInformation, {D5CDD502-2E9C-101B-9397-08002B2CF9AE}, as stored.
const FMTID_DOCUMENT_SUMMARY: [u8; 16] = [
    0x02, 0xD5, 0xCD, 0xD5, 0x9C, 0x2E, 0x1B, 0x10, 0x93, 0x97, 0x08, 0x00, 0x2B, 0x2C, 0xF9, 0xAE,
];

/// Property ids of the summary streams.
const PID_CODEPAGE: u32 = 1;
const PIDSI_TITLE: u32 = 2;
const PIDSI_AUTHOR: u32 = 4;
const PIDSI_CREATE_DTM: u32 = 12;
const PIDSI_LASTSAVE_DTM: u32 = 13;
const PIDSI_PAGECOUNT: u32 = 14;
const PIDDSI_SLIDECOUNT: u32 = 7;

/// Property types read (others are skipped).
const VT_I2: u16 = 2;
const VT_I4: u16 = 3;
const VT_LPSTR: u16 = 30;
const VT_LPWSTR: u16 = 31;
const VT_FILETIME: u16 = 64;

/// CP_WINUNICODE: `VT_LPSTR` values are UTF-16LE.
const CP_UTF16: u16 = 1200;

/// Largest property set stream read (they are a few hundred bytes).
const MAX_PROPERTY_STREAM_BYTES: u64 = 1 << 20;
/// Most properties read from one section.
const MAX_PROPERTIES: usize = 1024;
/// Bytes of a string value decoded: enough for the characters
/// [`inlet_core::extract::keep`] keeps, in any encoding.
const MAX_STRING_BYTES: usize = 4 * MAX_METADATA_CHARS + 4;

/// Seconds from 1601-01-01 (FILETIME's epoch) to 1970-01-01.
const FILETIME_UNIX_OFFSET: i64 = 11_644_473_600;
/// The last second of year 9999, past which a date is nonsense.
const MAX_UNIX_SECONDS: i64 = 253_402_300_799;

/// A property value of a type we read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyValue {
    /// `VT_I2` or `VT_I4`.
    Int(i32),
    /// `VT_LPSTR` (decoded in the section's code page) or `VT_LPWSTR`, without its terminator.
    Text(String),
    /// `VT_FILETIME`, as RFC 3339 UTC; a zero or implausible time is left out.
    Time(String),
}

/// The properties of the first section of a property set stream (MS-OLEPS 2.20–2.21), when that
/// section is `fmtid`'s: `(id, value)` in stored order, values of the types we read only. Every
/// offset, count and length is checked against the stream: a damaged property is left out, and
/// nothing panics.
pub fn property_set(stream: &[u8], fmtid: &[u8; 16]) -> Vec<(u32, PropertyValue)> {
    let mut out = Vec::new();
    // PropertySetStream: byte order 0xFFFE, version, system id, CLSID, set count, then
    // FMTID/offset pairs.
    if u16_at(stream, 0) != Some(0xFFFE)
        || u32_at(stream, 24).is_none_or(|n| n == 0)
        || stream.get(28..44) != Some(fmtid.as_slice())
    {
        return out;
    }
    let Some(section) = u32_at(stream, 44)
        .and_then(|at| stream.get(usize::try_from(at).ok()?..))
        .map(|rest| {
            // The section's declared size, when it fits, bounds its offsets.
            let size = u32_at(rest, 0).and_then(|s| usize::try_from(s).ok());
            size.and_then(|s| rest.get(..s)).unwrap_or(rest)
        })
    else {
        return out;
    };
    let count = u32_at(section, 4)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
        .min(MAX_PROPERTIES);
    let entry = |i: usize| -> Option<(u32, usize)> {
        let at = 8usize.checked_add(i.checked_mul(8)?)?;
        Some((
            u32_at(section, at)?,
            usize::try_from(u32_at(section, at.checked_add(4)?)?).ok()?,
        ))
    };
    // The code page first: it says how every VT_LPSTR of the section reads.
    let codepage = (0..count)
        .map_while(entry)
        .find(|&(id, _)| id == PID_CODEPAGE)
        .and_then(|(_, at)| match u16_at(section, at)? {
            VT_I2 => u16_at(section, at.checked_add(4)?),
            _ => None,
        });
    for (id, at) in (0..count).map_while(entry) {
        if let Some(value) = value_at(section, at, codepage) {
            out.push((id, value));
        }
    }
    out
}

/// The TypedPropertyValue at `at` in `section`, if of a type we read and readable.
fn value_at(section: &[u8], at: usize, codepage: Option<u16>) -> Option<PropertyValue> {
    let kind = u16_at(section, at)?;
    let at = at.checked_add(4)?;
    match kind {
        VT_I2 => Some(PropertyValue::Int(i32::from(u16_at(section, at)? as i16))),
        VT_I4 => Some(PropertyValue::Int(u32_at(section, at)? as i32)),
        VT_LPSTR => {
            let len = usize::try_from(u32_at(section, at)?).ok()?;
            let bytes = bounded(section, at.checked_add(4)?, len)?;
            Some(PropertyValue::Text(code_page_string(bytes, codepage)))
        }
        VT_LPWSTR => {
            let chars = usize::try_from(u32_at(section, at)?).ok()?;
            let bytes = bounded(section, at.checked_add(4)?, chars.checked_mul(2)?)?;
            Some(PropertyValue::Text(utf16(bytes)))
        }
        VT_FILETIME => {
            let low = u32_at(section, at)?;
            let high = u32_at(section, at.checked_add(4)?)?;
            filetime((u64::from(high) << 32) | u64::from(low)).map(PropertyValue::Time)
        }
        _ => None,
    }
}

/// The `len` bytes at `at` (at most [`MAX_STRING_BYTES`] of them), if the section holds them.
fn bounded(section: &[u8], at: usize, len: usize) -> Option<&[u8]> {
    let bytes = section.get(at..at.checked_add(len)?)?;
    Some(&bytes[..bytes.len().min(MAX_STRING_BYTES)])
}

/// A `VT_LPSTR` in the section's code page, up to its terminator.
fn code_page_string(bytes: &[u8], codepage: Option<u16>) -> String {
    if codepage == Some(CP_UTF16) {
        return utf16(bytes);
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let encoding = codepage.and_then(encoding_of).unwrap_or(WINDOWS_1252);
    encoding
        .decode_without_bom_handling(&bytes[..end])
        .0
        .into_owned()
}

/// The encoding of a Windows code page; Office for Mac writes the Mac CJK code pages, which
/// `codepage` does not map, for the EUC and Shift_JIS encodings they extend.
fn encoding_of(codepage: u16) -> Option<&'static Encoding> {
    codepage::to_encoding_no_replacement(codepage).or(match codepage {
        10001 => Some(SHIFT_JIS),
        10002 => Some(BIG5),
        10003 => Some(EUC_KR),
        10008 => Some(GBK),
        _ => None,
    })
}

/// UTF-16LE text up to its terminator.
fn utf16(bytes: &[u8]) -> String {
    let units = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0);
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// A FILETIME (100 ns ticks since 1601-01-01 UTC) as RFC 3339, if it is a plausible date.
fn filetime(ticks: u64) -> Option<String> {
    let secs = i64::try_from(ticks / 10_000_000).ok()? - FILETIME_UNIX_OFFSET;
    if !(0..=MAX_UNIX_SECONDS).contains(&secs) {
        return None;
    }
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// What an OLE2 document's summary streams say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// `PIDSI_TITLE`.
    pub title: Option<String>,
    /// `PIDSI_AUTHOR`.
    pub author: Option<String>,
    /// `PIDSI_CREATE_DTM`, RFC 3339.
    pub created: Option<String>,
    /// `PIDSI_LASTSAVE_DTM`, RFC 3339.
    pub modified: Option<String>,
    /// `PIDSI_PAGECOUNT` (Word's page count).
    pub pages: Option<u32>,
    /// `PIDDSI_SLIDECOUNT` (PowerPoint's slide count).
    pub slides: Option<u32>,
}

impl Summary {
    /// Reads the summary streams of `file` (each at most 1 MiB, charged to `budget`); a missing,
    /// oversized or damaged stream says nothing.
    pub fn read(file: &mut cfb::CompoundFile<Cursor<&[u8]>>, budget: &mut u64) -> Self {
        let mut stream = |name: &str| -> Vec<u8> {
            if !file.is_stream(name) {
                return Vec::new();
            }
            let mut room = (*budget).min(MAX_PROPERTY_STREAM_BYTES);
            let before = room;
            let bytes = read_stream(file, name, &mut room).unwrap_or_default();
            *budget -= before - room;
            bytes
        };
        let summary = stream(SUMMARY_INFORMATION);
        let document = stream(DOCUMENT_SUMMARY_INFORMATION);
        Self::parse(&summary, &document)
    }

    /// The summary from the bytes of the two streams (either may be empty).
    pub fn parse(summary: &[u8], document_summary: &[u8]) -> Self {
        let mut s = Self::default();
        let text = |v: PropertyValue| match v {
            PropertyValue::Text(t) => Some(t.trim().to_owned()).filter(|t| !t.is_empty()),
            _ => None,
        };
        let time = |v: PropertyValue| match v {
            PropertyValue::Time(t) => Some(t),
            _ => None,
        };
        let count = |v: PropertyValue| match v {
            PropertyValue::Int(n) => u32::try_from(n).ok(),
            _ => None,
        };
        for (id, value) in property_set(summary, &FMTID_SUMMARY) {
            match id {
                PIDSI_TITLE if s.title.is_none() => s.title = text(value),
                PIDSI_AUTHOR if s.author.is_none() => s.author = text(value),
                PIDSI_CREATE_DTM if s.created.is_none() => s.created = time(value),
                PIDSI_LASTSAVE_DTM if s.modified.is_none() => s.modified = time(value),
                PIDSI_PAGECOUNT if s.pages.is_none() => s.pages = count(value),
                _ => {}
            }
        }
        for (id, value) in property_set(document_summary, &FMTID_DOCUMENT_SUMMARY) {
            if id == PIDDSI_SLIDECOUNT && s.slides.is_none() {
                s.slides = count(value);
            }
        }
        s
    }

    /// Fills the unset title, authors and dates of `m` (the count is the caller's: pages for
    /// Word, slides for PowerPoint, the sheet list for Excel).
    pub fn fill(&self, m: &mut DocumentMetadata) {
        keep(&mut m.title, self.title.as_deref().unwrap_or_default());
        keep_names(&mut m.authors, self.author.as_deref());
        keep(&mut m.created, self.created.as_deref().unwrap_or_default());
        keep(
            &mut m.modified,
            self.modified.as_deref().unwrap_or_default(),
        );
    }
}

/// The stream of an embedded object's storage holding an OOXML package (a .docx, .xlsx, .pptx).
const PACKAGE: &str = "Package";
/// The stream of an object the Packager wrapped a file in (OLE 1.0 native data).
const OLE10_NATIVE: &str = "\u{1}Ole10Native";
/// The stream some servers keep their file in (Acrobat: a PDF).
const CONTENTS: &str = "CONTENTS";
/// Streams that make a storage an OLE2 document of its own (Word, Excel, PowerPoint).
const DOCUMENT_STREAMS: [&str; 4] = ["WordDocument", "Workbook", "Book", "PowerPoint Document"];

/// A file embedded in an OLE2 document as an object (MS-OLEDS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embedded {
    /// The file's name where the object gives one (the Packager's label), else the storage's.
    pub name: String,
    /// The file, for the registry to extract.
    pub bytes: Vec<u8>,
}

/// The file the embedded object in `storage` (a path such as `MBD0009CF7B` or
/// `ObjectPool/_1364996600`) holds: an OOXML package, a file the Packager wrapped, a server's
/// `CONTENTS` stream, or, for an OLE2 document (Word, Excel, PowerPoint), the storage itself
/// copied into a compound file of its own. `None` when it holds none of these (a picture, an
/// equation, a link). What is read is charged to `budget`.
pub fn embedded_file(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    storage: &str,
    budget: &mut u64,
) -> Result<Option<Embedded>, ExtractError> {
    let name = storage.rsplit('/').next().unwrap_or(storage).to_owned();
    let path = |stream: &str| format!("{storage}/{stream}");
    // The streams that hold the file itself, in the order they are looked for.
    for stream in [PACKAGE, OLE10_NATIVE, CONTENTS] {
        if !file.is_stream(path(stream)) {
            continue;
        }
        let bytes = read_stream(file, &path(stream), budget)?;
        if stream != OLE10_NATIVE {
            return Ok(Some(Embedded { name, bytes }));
        }
        let (label, data) = ole10_native(&bytes);
        return Ok(Some(Embedded {
            name: label.unwrap_or(name),
            bytes: data.to_vec(),
        }));
    }
    if DOCUMENT_STREAMS.iter().any(|s| file.is_stream(path(s))) {
        let bytes = storage_as_file(file, storage, budget)?;
        return Ok(Some(Embedded { name, bytes }));
    }
    Ok(None)
}

/// The file an embedded object kept as a compound file of its own holds (PowerPoint stores
/// each object's storage so): as [`embedded_file`] finds it in the root, or the compound file
/// itself when it is an OLE2 document. `None` when `bytes` is not a compound file or holds no
/// file; `name` when the object gives none.
pub fn embedded_in_compound_file(bytes: &[u8], name: &str, budget: &mut u64) -> Option<Embedded> {
    let mut file = cfb::CompoundFile::open(Cursor::new(bytes)).ok()?;
    if DOCUMENT_STREAMS.iter().any(|s| file.is_stream(s)) {
        return Some(Embedded {
            name: name.to_owned(),
            bytes: bytes.to_vec(),
        });
    }
    let mut object = embedded_file(&mut file, "", budget).ok().flatten()?;
    if object.name.is_empty() {
        object.name = name.to_owned();
    }
    Some(object)
}

/// Extracts, with the registry through [`TextSink::extract_nested`], each embedded object
/// ([`embedded_file`]) in the storages directly under `parent` (`""`: the root) whose names
/// start with `prefix` (Excel's `MBD…` storages; Word's under `ObjectPool`), under its name. An
/// object that cannot be read, or holds no file, is skipped; the sink's cap and deadline stop
/// the whole document.
pub fn write_embedded(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    parent: &str,
    prefix: &str,
    budget: &mut u64,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let storages: Vec<String> = match file.read_storage(format!("/{parent}")) {
        Ok(entries) => entries
            .filter(|e| e.is_storage() && e.name().starts_with(prefix))
            .map(|e| {
                e.path()
                    .to_string_lossy()
                    .trim_start_matches('/')
                    .to_owned()
            })
            .collect(),
        Err(_) => return Ok(()),
    };
    for storage in storages {
        sink.check_deadline()?;
        if let Ok(Some(object)) = embedded_file(file, &storage, budget) {
            sink.extract_nested(&object.name, &object.bytes)?;
        }
    }
    Ok(())
}

/// The label and the file of a Packager object's `\x01Ole10Native` stream: its size, a type,
/// the label, the source path, two numbers, a temporary path, then the file's size and bytes
/// (as oletools and Apache POI read it). A stream not laid out so holds the file itself after
/// its size (POI's "unparsed" form).
fn ole10_native(stream: &[u8]) -> (Option<String>, &[u8]) {
    let unparsed = stream.get(4..).unwrap_or_default();
    let parsed = || -> Option<(String, &[u8])> {
        let zero_terminated = |at: usize| -> Option<(&[u8], usize)> {
            let rest = stream.get(at..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            Some((&rest[..end], at + end + 1))
        };
        let (label, at) = zero_terminated(6)?;
        let (_source, at) = zero_terminated(at)?;
        let (_temp, at) = zero_terminated(at.checked_add(8)?)?;
        let size = usize::try_from(u32_at(stream, at)?).ok()?;
        let data = stream.get(at + 4..(at + 4).checked_add(size)?)?;
        let label = WINDOWS_1252
            .decode_without_bom_handling(label)
            .0
            .trim()
            .to_owned();
        Some((label, data))
    };
    match parsed() {
        Some((label, data)) => ((!label.is_empty()).then_some(label), data),
        None => (None, unparsed),
    }
}

/// `storage` and everything under it, as a compound file of its own (each stream charged to
/// `budget`).
fn storage_as_file(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    storage: &str,
    budget: &mut u64,
) -> Result<Vec<u8>, ExtractError> {
    use std::io::Write;
    let copy_error = |e: std::io::Error| ExtractError::Malformed(format!("{storage}: {e}"));
    let root = std::path::Path::new("/").join(storage);
    let entries: Vec<(std::path::PathBuf, bool)> = file
        .walk_storage(&root)
        .map_err(copy_error)?
        .map(|e| (e.path().to_path_buf(), e.is_stream()))
        .collect();
    let mut out = cfb::CompoundFile::create(Cursor::new(Vec::new())).map_err(copy_error)?;
    for (path, is_stream) in entries {
        let Ok(inner) = path.strip_prefix(&root) else {
            continue;
        };
        if inner.as_os_str().is_empty() {
            continue;
        }
        let inner = std::path::Path::new("/").join(inner);
        if is_stream {
            let data = read_stream(file, &path.to_string_lossy(), budget)?;
            if let Some(parent) = inner.parent() {
                out.create_storage_all(parent).map_err(copy_error)?;
            }
            out.create_stream(&inner)
                .and_then(|mut s| s.write_all(&data))
                .map_err(copy_error)?;
        } else {
            out.create_storage_all(&inner).map_err(copy_error)?;
        }
    }
    out.flush().map_err(copy_error)?;
    Ok(out.into_inner().into_inner())
}

/// Pictures of one document read by OCR at most (a slide deck's, a package's media).
pub const MAX_PICTURES: usize = 50;

/// Pictures larger than this are not read by OCR (a poster-sized scan takes minutes).
pub const MAX_PICTURE_BYTES: u64 = 20 << 20;

/// OfficeArt record types of pictures (MS-ODRAW 2.2.23–2.2.32) and their containers.
const DGG_CONTAINER: u16 = 0xF000;
const BSTORE_CONTAINER: u16 = 0xF001;
const FBSE: u16 = 0xF007;
const BLIP_EMF: u16 = 0xF01A;
const BLIP_WMF: u16 = 0xF01B;
const BLIP_JPEG: u16 = 0xF01D;
const BLIP_PNG: u16 = 0xF01E;
const BLIP_DIB: u16 = 0xF01F;
const BLIP_TIFF: u16 = 0xF029;
const BLIP_JPEG_CMYK: u16 = 0xF02A;
/// Bytes of an `OfficeArtFBSE` record before its name and its picture.
const FBSE_FIXED: usize = 36;
/// Bytes of the `OfficeArtMetafileHeader` before a metafile BLIP's data.
const METAFILE_HEADER: usize = 34;
/// A metafile BLIP's `compression` value for DEFLATE (zlib); `0xFE` is none.
const METAFILE_DEFLATE: u8 = 0;

/// The pictures among OfficeArt records laid end to end (PowerPoint's `Pictures` stream;
/// Excel's drawing group, `OfficeArtDggContainer`, and the picture store in it,
/// `OfficeArtBStoreContainer` and its `FBSE` entries, are looked into), each with its file name
/// ending: PNG, JPEG and TIFF as stored, a DIB as a BMP file, EMF and WMF metafiles inflated (at
/// most [`MAX_PICTURE_BYTES`] each, charged to the sink's decompression total). PICT pictures
/// and records cut short are skipped; at most [`MAX_PICTURES`] are collected.
pub fn blip_pictures(records: &[u8], sink: &mut TextSink) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    collect_blips(records, 0, &mut out, sink);
    out
}

/// Writes the words of `pictures` ([`blip_pictures`]), after the document's text, each under
/// the name `image{n}.{ending}` ([`write_picture`]): up to [`MAX_PICTURES`] of at most
/// [`MAX_PICTURE_BYTES`], the same picture once.
pub fn write_pictures(
    pictures: Vec<(&'static str, Vec<u8>)>,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    // The same picture placed twice (Word keeps each inline copy) is read once.
    let mut seen = std::collections::HashSet::new();
    let readable = pictures
        .into_iter()
        .filter(|(_, bytes)| bytes.len() as u64 <= MAX_PICTURE_BYTES)
        .filter(|(_, bytes)| {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(bytes, &mut hasher);
            seen.insert(std::hash::Hasher::finish(&hasher))
        })
        .take(MAX_PICTURES);
    for (n, (ending, bytes)) in readable.enumerate() {
        sink.check_deadline()?;
        write_picture(&format!("image{}.{ending}", n + 1), &bytes, sink)?;
    }
    Ok(())
}

/// Writes the words of one picture under its `name`: a metafile's text as it draws it
/// ([`crate::metafile`]), a bitmap's by OCR as an optional file
/// ([`TextSink::extract_optional`]) when the sink reads pictures
/// ([`TextSink::reads_pictures`]); nothing for a picture without words.
pub fn write_picture(name: &str, bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    if !crate::metafile::is_metafile(bytes) {
        if sink.reads_pictures() {
            sink.extract_optional(name, bytes)?;
        }
        return Ok(());
    }
    if let Some(text) = crate::metafile::text(bytes) {
        sink.line_break()?;
        sink.push(name)?;
        sink.line_break()?;
        sink.push(&text)?;
        sink.line_break()?;
    }
    Ok(())
}

/// The pictures of BLIP records found anywhere in `bytes`, at any offset (Word's `Data` stream
/// holds each inline picture's record after a `PICF` header; floating ones are in the
/// `WordDocument` stream after the text): a record is taken where its header names a picture
/// type with one of that type's instances and its bytes start as that format does.
pub fn scan_blips(bytes: &[u8], sink: &mut TextSink) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 8 <= bytes.len() && out.len() < MAX_PICTURES {
        let ver_instance = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let typ = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]);
        let instance = ver_instance >> 4;
        let known = ver_instance & 0xF == 0
            && matches!(
                (typ, instance & !1),
                (BLIP_JPEG, 0x46A | 0x6E2)
                    | (BLIP_JPEG_CMYK, 0x6E2)
                    | (BLIP_PNG, 0x6E0)
                    | (BLIP_DIB, 0x7A8)
                    | (BLIP_TIFF, 0x6E4)
                    | (BLIP_EMF, 0x3D4)
                    | (BLIP_WMF, 0x216)
            );
        let body = known
            .then(|| u32_le(bytes, at + 4))
            .flatten()
            .and_then(|len| bytes.get(at + 8..(at + 8).checked_add(usize::try_from(len).ok()?)?));
        match body.and_then(|body| Some((body.len(), blip_picture(typ, instance, body, sink)?))) {
            Some((len, picture)) => {
                out.push(picture);
                at += 8 + len;
            }
            None => at += 1,
        }
    }
    out
}

fn collect_blips(
    records: &[u8],
    depth: u8,
    out: &mut Vec<(&'static str, Vec<u8>)>,
    sink: &mut TextSink,
) {
    let mut at = 0usize;
    while let (Some(head), Some(len)) = (records.get(at..at + 4), u32_le(records, at + 4)) {
        if out.len() >= MAX_PICTURES {
            return;
        }
        let instance = u16::from_le_bytes([head[0], head[1]]) >> 4;
        let typ = u16::from_le_bytes([head[2], head[3]]);
        let start = at + 8;
        let Some(body) = usize::try_from(len)
            .ok()
            .and_then(|len| records.get(start..start.checked_add(len)?))
        else {
            break;
        };
        match typ {
            DGG_CONTAINER | BSTORE_CONTAINER if depth < 3 => {
                collect_blips(body, depth + 1, out, sink);
            }
            FBSE if depth < 3 => {
                let name = usize::from(body.get(FBSE_FIXED - 3).copied().unwrap_or(0));
                if let Some(blip) = body.get(FBSE_FIXED + name..) {
                    collect_blips(blip, depth + 1, out, sink);
                }
            }
            _ => out.extend(blip_picture(typ, instance, body, sink)),
        }
        at = start + body.len();
    }
}

fn u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// One BLIP record's picture: after one or, when the instance is odd, two 16-byte ids, a
/// bitmap's tag byte and bytes, or a metafile's header and (usually compressed) bytes.
fn blip_picture(
    typ: u16,
    instance: u16,
    body: &[u8],
    sink: &mut TextSink,
) -> Option<(&'static str, Vec<u8>)> {
    let ids = if instance & 1 == 1 { 32 } else { 16 };
    if matches!(typ, BLIP_EMF | BLIP_WMF) {
        let header = body.get(ids..ids + METAFILE_HEADER)?;
        let size = u64::from(u32::from_le_bytes(header[..4].try_into().ok()?));
        let data = body.get(ids + METAFILE_HEADER..)?;
        let bytes = if header[32] == METAFILE_DEFLATE {
            // Inflated bytes count against the input's decompression total.
            let room = size.min(MAX_PICTURE_BYTES).min(sink.decompressed_room());
            let mut out = Vec::new();
            let _ = flate2::read::ZlibDecoder::new(data)
                .take(room)
                .read_to_end(&mut out);
            if !sink.charge_decompressed(out.len() as u64) {
                return None;
            }
            out
        } else {
            data.to_vec()
        };
        let ending = if typ == BLIP_EMF { "emf" } else { "wmf" };
        return crate::metafile::is_metafile(&bytes).then_some((ending, bytes));
    }
    // A bitmap is only copied out for a reader (OCR).
    if !sink.reads_pictures() {
        return None;
    }
    let data = body.get(ids + 1..)?;
    match typ {
        BLIP_PNG if data.starts_with(b"\x89PNG") => Some(("png", data.to_vec())),
        BLIP_JPEG | BLIP_JPEG_CMYK if data.starts_with(b"\xFF\xD8") => Some(("jpg", data.to_vec())),
        BLIP_TIFF if data.starts_with(b"II*\0") || data.starts_with(b"MM\0*") => {
            Some(("tif", data.to_vec()))
        }
        BLIP_DIB => Some(("bmp", bmp_file(data)?)),
        _ => None,
    }
}

/// A device-independent bitmap (a `BITMAPINFOHEADER`, its colour table and pixels) as a BMP
/// file: the 14-byte file header before it, pointing at the pixels.
fn bmp_file(dib: &[u8]) -> Option<Vec<u8>> {
    let header = u32_le(dib, 0)?;
    if !(40..=124).contains(&header) || dib.len() < 40 {
        return None;
    }
    let bits = u16::from_le_bytes([dib[14], dib[15]]);
    let compression = u32_le(dib, 16)?;
    let used = u32_le(dib, 32)?;
    let colours = match (used, bits) {
        (0, 1 | 2 | 4 | 8) => 1u32 << bits,
        (n, _) => n.min(256),
    };
    let masks = if compression == 3 && header == 40 {
        12
    } else {
        0
    };
    let pixels = 14 + header + colours * 4 + masks;
    let size = u32::try_from(dib.len() + 14).ok()?;
    let mut file = Vec::with_capacity(dib.len() + 14);
    file.extend_from_slice(b"BM");
    file.extend_from_slice(&size.to_le_bytes());
    file.extend_from_slice(&[0; 4]);
    file.extend_from_slice(&pixels.to_le_bytes());
    file.extend_from_slice(dib);
    Some(file)
}

#[cfg(test)]
#[path = "ole_tests.rs"]
mod tests;
