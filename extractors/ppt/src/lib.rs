#![doc = include_str!("../README.md")]

mod persist;
mod record;
mod slides;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod hostile_tests;

use std::io::{Cursor, Read};

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::ole::{
    Summary, blip_pictures, embedded_in_compound_file, read_stream, write_pictures,
};
use record::{Children, u32_at};

use inlet_extract_support::ole::OLE2_MAGIC;

/// The stream holding a presentation's pictures (OfficeArt BLIP records).
const PICTURES_STREAM: &str = "Pictures";

/// The stream holding a presentation's records.
const DOCUMENT_STREAM: &str = "PowerPoint Document";

/// The stream pointing at the newest edit of the document stream.
const CURRENT_USER: &str = "Current User";

/// The stream an encrypted presentation keeps its summary in (MS-PPT 2.1.1).
const ENCRYPTED_SUMMARY: &str = "EncryptedSummary";

/// `ExOleObjStg`: an embedded object's storage.
const EX_OLE_OBJ_STG: u16 = 0x1011;

/// The heading of an embedded object that gives no file name.
const EMBEDDED_NAME: &str = "embedded object";

/// Detection score for an OLE2 file with a `PowerPoint Document` stream.
const SCORE: u8 = 95;

/// Extracts the text of a PowerPoint 97–2003 presentation.
struct Ppt;

impl Extractor for Ppt {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

fn encrypted() -> ExtractError {
    ExtractError::Unsupported("encrypted PowerPoint presentation".into())
}

/// Opens the compound file, reports its summary properties (title, author, dates, slide count)
/// and writes the presentation's text, reading at most the sink's decompression budget from its
/// streams.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut budget = sink.max_decompressed_bytes();
    let mut file = cfb::CompoundFile::open(Cursor::new(input)).map_err(ExtractError::malformed)?;
    if file.is_stream(ENCRYPTED_SUMMARY) {
        return Err(encrypted());
    }
    if let Some(m) = sink.metadata_mut() {
        let summary = Summary::read(&mut file, &mut budget);
        summary.fill(m);
        m.pages = summary.slides;
    }
    let stream = read_stream(&mut file, DOCUMENT_STREAM, &mut budget)?;
    let current_user = if file.is_stream(CURRENT_USER) {
        read_stream(&mut file, CURRENT_USER, &mut budget).ok()
    } else {
        None
    };
    let directory = current_user
        .as_deref()
        .and_then(|user| persist::directory(user, &stream));
    if directory.as_ref().is_some_and(|d| d.encrypted) {
        return Err(encrypted());
    }
    let mut damaged = false;
    let in_order = match &directory {
        Some(dir) => slides::in_order(&stream, dir, sink, &mut damaged)?,
        None => false,
    };
    if !in_order {
        slides::in_stream_order(&stream, sink, &mut damaged)?;
    }
    if damaged {
        return Err(ExtractError::Malformed(
            "a record runs past its container".into(),
        ));
    }
    embedded_objects(&stream, &mut budget, sink)?;
    drop(stream);
    pictures(&mut file, &mut budget, sink)
}

/// The pictures of the `Pictures` stream read by OCR where it runs, after the slides and their
/// embedded objects ([`write_pictures`]). A stream that cannot be read is skipped.
fn pictures(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    budget: &mut u64,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    if !file.is_stream(PICTURES_STREAM) {
        return Ok(());
    }
    match read_stream(file, PICTURES_STREAM, budget) {
        Ok(stream) => {
            let pictures = blip_pictures(&stream, sink);
            write_pictures(pictures, sink)
        }
        Err(_) => Ok(()),
    }
}

/// Each embedded object (an `ExOleObjStg` record at the top level of the stream: the object's
/// storage as a compound file, zlib-compressed after its size when the record's instance is 1)
/// extracted with the registry after the slides, under the Packager's label or
/// [`EMBEDDED_NAME`]; what is inflated is charged to the sink's decompression total
/// ([`TextSink::charge_decompressed`]), what is read from the objects to `budget`. One that
/// cannot be read is skipped.
pub(crate) fn embedded_objects(
    stream: &[u8],
    budget: &mut u64,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    for record in Children::of(stream) {
        let Ok(record) = record else {
            break;
        };
        if record.typ != EX_OLE_OBJ_STG {
            continue;
        }
        sink.check_deadline()?;
        let inflated;
        let storage = if record.instance == 1 {
            // Inflated bytes count against the input's decompression total, shared with the
            // files within it (an embedded presentation embedding another).
            let Some(size) = u32_at(record.data, 0)
                .map(u64::from)
                .filter(|&n| n <= sink.decompressed_room())
            else {
                continue;
            };
            let mut out = Vec::new();
            let read = flate2::read::ZlibDecoder::new(record.data.get(4..).unwrap_or_default())
                .take(size)
                .read_to_end(&mut out);
            if !sink.charge_decompressed(out.len() as u64) || read.is_err() {
                continue;
            }
            inflated = out;
            &inflated[..]
        } else {
            record.data
        };
        if let Some(object) = embedded_in_compound_file(storage, EMBEDDED_NAME, budget) {
            sink.extract_nested(&object.name, &object.bytes)?;
        }
    }
    Ok(())
}

/// An OLE2 compound file with a top-level `PowerPoint Document` stream.
fn sniff(probe: &Probe<'_>) -> u8 {
    if probe.bytes.starts_with(OLE2_MAGIC) && probe.has_entry(DOCUMENT_STREAM) {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "ppt",
        version: 1,
        media_type: "application/vnd.ms-powerpoint",
        sniff,
        make: || Box::new(Ppt),
    }
}
