#![doc = include_str!("../README.md")]

use std::io::{Cursor, Read};

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

#[cfg(test)]
mod tests;

/// Members read from one archive at most; the rest are left out and the text is reported cut.
pub const MAX_ENTRIES: usize = 10_000;

const ZIP_LOCAL: &[u8] = b"PK\x03\x04";
const ZIP_EMPTY: &[u8] = b"PK\x05\x06";
const GZIP: &[u8] = b"\x1f\x8b\x08";
/// A tar block.
const BLOCK: usize = 512;

/// Below every package format (OOXML, ODF, EPUB score higher on the same bytes).
const ZIP_SCORE: u8 = 20;
const USTAR_SCORE: u8 = 60;
const V7_SCORE: u8 = 30;
const GZIP_SCORE: u8 = 50;

/// Entries that make a ZIP a document package rather than an archive of files.
const PACKAGE_ENTRIES: &[&str] = &["[Content_Types].xml", "META-INF/container.xml"];

fn sniff_zip(probe: &Probe<'_>) -> u8 {
    let zip = probe.bytes.starts_with(ZIP_LOCAL) || probe.bytes.starts_with(ZIP_EMPTY);
    let package = PACKAGE_ENTRIES.iter().any(|e| probe.has_entry(e))
        || (probe.has_entry("mimetype") && probe.has_entry("META-INF/manifest.xml"));
    if zip && !package { ZIP_SCORE } else { 0 }
}

fn sniff_tar(probe: &Probe<'_>) -> u8 {
    tar_header_score(probe.bytes)
}

fn sniff_gzip(probe: &Probe<'_>) -> u8 {
    if probe.bytes.starts_with(GZIP) {
        GZIP_SCORE
    } else {
        0
    }
}

/// How sure the first block is a tar header: the `ustar` magic, or (v7 tar has none) a name
/// and a checksum that adds up.
fn tar_header_score(bytes: &[u8]) -> u8 {
    let Some(block) = bytes.get(..BLOCK) else {
        return 0;
    };
    if &block[257..262] == b"ustar" {
        return USTAR_SCORE;
    }
    if block[0] != 0 && checksum_matches(block) {
        V7_SCORE
    } else {
        0
    }
}

/// The header checksum: the bytes summed with the checksum field read as spaces, stored as
/// octal digits at 148..156.
fn checksum_matches(block: &[u8]) -> bool {
    let field = &block[148..156];
    let digits: String = field
        .iter()
        .map(|&b| b as char)
        .skip_while(|c| *c == ' ')
        .take_while(|c| c.is_digit(8))
        .collect();
    let Ok(stored) = u32::from_str_radix(&digits, 8) else {
        return false;
    };
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    stored == sum
}

inventory::submit! {
    ExtractorInfo { id: "zip", version: 1, media_type: "application/zip", sniff: sniff_zip, make: || Box::new(Zip) }
}

inventory::submit! {
    ExtractorInfo { id: "tar", version: 1, media_type: "application/x-tar", sniff: sniff_tar, make: || Box::new(Tar) }
}

inventory::submit! {
    ExtractorInfo { id: "gzip", version: 1, media_type: "application/gzip", sniff: sniff_gzip, make: || Box::new(Gzip) }
}

/// ZIP archives.
pub struct Zip;
/// Tar archives.
pub struct Tar;
/// gzip files: a tar within is read as tar, anything else as one file.
pub struct Gzip;

impl Extractor for Zip {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let mut archive =
            zip::ZipArchive::new(Cursor::new(input)).map_err(ExtractError::malformed)?;
        for index in 0..archive.len() {
            if index == MAX_ENTRIES {
                return Err(sink.cut());
            }
            sink.check_deadline()?;
            let listed = archive
                .name_for_index(index)
                .and_then(|n| n.ok())
                .map(|n| n.into_owned());
            let mut member = match archive.by_index(index) {
                Ok(member) => member,
                // An encrypted or damaged member: its name when the directory gives it.
                Err(_) => {
                    if let Some(name) = listed {
                        sink.extract_nested(&name, &[])?;
                    }
                    continue;
                }
            };
            if !member.is_file() {
                continue;
            }
            let name = match member.name() {
                Ok(name) => name.into_owned(),
                Err(_) => String::from_utf8_lossy(member.name_raw()).into_owned(),
            };
            let size = member.size();
            let bytes = read_member(&mut member, size, sink)?;
            sink.extract_member(&name, &bytes)?;
        }
        Ok(())
    }
}

impl Extractor for Tar {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        read_tar(input, sink)
    }
}

impl Extractor for Gzip {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let mut decoder = flate2::read::GzDecoder::new(input);
        let name = decoder
            .header()
            .and_then(|h| h.filename())
            .map(|n| String::from_utf8_lossy(n).into_owned());
        // The whole content, within the size budget (a gzip bomb stops at the budget).
        let bytes = read_member(&mut decoder, u64::MAX, sink)?;
        if tar_header_score(&bytes) > 0 {
            return read_tar(&bytes, sink);
        }
        sink.extract_nested(name.as_deref().unwrap_or(""), &bytes)
    }
}

/// Reads the members of a tar archive (already decompressed, so nothing here inflates).
fn read_tar(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut archive = tar::Archive::new(input);
    let entries = archive.entries().map_err(ExtractError::malformed)?;
    for (index, entry) in entries.enumerate() {
        if index == MAX_ENTRIES {
            return Err(sink.cut());
        }
        sink.check_deadline()?;
        let mut entry = match entry {
            Ok(entry) => entry,
            // A damaged header ends the archive; what was read is kept.
            Err(e) => return Err(ExtractError::malformed(e)),
        };
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let size = entry.size();
        let bytes = read_member(&mut entry, size, sink)?;
        sink.extract_member(&name, &bytes)?;
    }
    Ok(())
}

/// Reads one member, charging its bytes to the sink's decompression budget: a member that
/// would exceed it cuts the archive (what was read so far is kept).
fn read_member(
    reader: &mut impl Read,
    declared: u64,
    sink: &mut TextSink,
) -> Result<Vec<u8>, ExtractError> {
    let room = sink.decompressed_room();
    // Never trust a declared size for the allocation; read at most one byte past the room.
    let mut bytes = Vec::with_capacity(declared.min(room).min(1 << 20) as usize);
    // A damaged member yields what was read before the damage.
    let _ = reader.take(room.saturating_add(1)).read_to_end(&mut bytes);
    if !sink.charge_decompressed(bytes.len() as u64) {
        return Err(sink.cut());
    }
    Ok(bytes)
}
