//! Scanned pages: a page without a text layer whose content draws one image over most of it is
//! handed to OCR as an image file, through the registry ([`TextSink::extract_nested`]), so the
//! PDF extractor runs no OCR itself and reads the same without it.
//!
//! The file is what the image's codec holds (JPEG for DCT, JPEG 2000 for JPX, a one-strip TIFF
//! around CCITT fax data) or, for raw samples, a PNM (8-bit gray or RGB, 1-bit bilevel).
//! JBIG2 and other layouts (indexed colours, 16-bit samples) are left unread.
//!
//! [`TextSink::extract_nested`]: inlet_core::extract::TextSink::extract_nested

use crate::{
    doc::Document,
    object::{Dict, Object, Stream},
};

/// Scanned pages of one PDF read by OCR at most.
pub(crate) const MAX_OCR_PAGES: usize = 50;
/// Largest page image handed to OCR, in pixels: its samples are decoded in memory first (a
/// 22,000 × 22,000 page took the server from 313 MB to 1.3 GB), and OCR refuses larger images
/// anyway (`inlet_extract_ocr::DEFAULT_MAX_PIXELS`).
pub(crate) const MAX_SCAN_PIXELS: u64 = 50_000_000;
/// The share of the page an image must cover to be taken for a scan of it.
pub(crate) const MIN_COVER: f32 = 0.5;

fn int(doc: &Document<'_>, dict: &Dict, key: &[u8]) -> Option<i64> {
    doc.get_in(dict, key).and_then(|o| o.as_i64())
}

/// The page's area in user space, from its MediaBox.
pub(crate) fn page_area(doc: &Document<'_>, page: &Dict) -> Option<f32> {
    let b = doc.get_in(page, b"MediaBox")?;
    let v: Vec<f32> = b.as_array()?.iter().filter_map(Object::as_f32).collect();
    let [x0, y0, x1, y1] = v[..] else {
        return None;
    };
    let area = ((x1 - x0) * (y1 - y0)).abs();
    (area.is_finite() && area > 0.0).then_some(area)
}

/// Whether the image has more pixels than OCR is given ([`MAX_SCAN_PIXELS`]).
pub(crate) fn too_large(doc: &Document<'_>, s: &Stream) -> bool {
    let side = |key: &[u8]| int(doc, &s.dict, key).map_or(0, |v| v.max(0) as u64);
    side(b"Width").saturating_mul(side(b"Height")) > MAX_SCAN_PIXELS
}

/// The image as a file OCR reads, if its layout is one this module writes.
pub(crate) fn image_file(doc: &Document<'_>, s: &Stream) -> Option<Vec<u8>> {
    let width = int(doc, &s.dict, b"Width").filter(|w| (1..=100_000).contains(w))? as u32;
    let height = int(doc, &s.dict, b"Height").filter(|h| (1..=100_000).contains(h))? as u32;
    let (data, codec) = doc.image_data(s).ok()?;
    match codec {
        Some((name, _)) if name == b"DCTDecode" || name == b"DCT" => {
            data.starts_with(b"\xff\xd8").then_some(data)
        }
        Some((name, _)) if name == b"JPXDecode" => Some(data),
        Some((name, parms)) if name == b"CCITTFaxDecode" || name == b"CCF" => {
            Some(ccitt_tiff(doc, &data, parms.as_ref(), width, height))
        }
        Some(_) => None,
        None => raw_pnm(doc, s, &data, width, height),
    }
}

/// Raw samples as PNM: 8-bit gray (P5) or RGB (P6), 1-bit gray or stencil mask (P4).
fn raw_pnm(doc: &Document<'_>, s: &Stream, data: &[u8], w: u32, h: u32) -> Option<Vec<u8>> {
    let mask = matches!(
        doc.get_in(&s.dict, b"ImageMask").as_deref(),
        Some(Object::Bool(true))
    );
    let bpc = if mask {
        1
    } else {
        int(doc, &s.dict, b"BitsPerComponent")?
    };
    let comps = if mask { 1 } else { components(doc, &s.dict)? };
    // A Decode array of [1 0] swaps black and white.
    let inverted = doc
        .get_in(&s.dict, b"Decode")
        .and_then(|d| {
            d.as_array()
                .and_then(|a| a.first().and_then(Object::as_f32))
        })
        .is_some_and(|first| first > 0.5);
    let (w, h) = (w as usize, h as usize);
    match (bpc, comps) {
        (8, 1 | 3) => {
            let len = w.checked_mul(h)?.checked_mul(comps)?;
            let pixels = data.get(..len)?;
            let magic = if comps == 1 { "P5" } else { "P6" };
            let mut out = format!("{magic}\n{w} {h}\n255\n").into_bytes();
            if inverted {
                out.extend(pixels.iter().map(|b| 255 - b));
            } else {
                out.extend_from_slice(pixels);
            }
            Some(out)
        }
        (1, 1) => {
            let len = w.div_ceil(8).checked_mul(h)?;
            let bits = data.get(..len)?;
            // PBM's 1 is black; a PDF sample of 0 is black (for a mask: painted) unless the
            // Decode array swaps them.
            let mut out = format!("P4\n{w} {h}\n").into_bytes();
            if inverted {
                out.extend_from_slice(bits);
            } else {
                out.extend(bits.iter().map(|b| !b));
            }
            Some(out)
        }
        _ => None,
    }
}

/// Colour components of a Gray or RGB space (ICC-based ones by their `/N`); others: none.
fn components(doc: &Document<'_>, dict: &Dict) -> Option<usize> {
    let cs = doc.get_in(dict, b"ColorSpace")?;
    match cs.as_ref() {
        Object::Name(n) if n == b"DeviceGray" || n == b"CalGray" || n == b"G" => Some(1),
        Object::Name(n) if n == b"DeviceRGB" || n == b"CalRGB" || n == b"RGB" => Some(3),
        Object::Array(a) => match a.first().and_then(Object::as_name) {
            Some(b"CalGray") => Some(1),
            Some(b"CalRGB") => Some(3),
            Some(b"ICCBased") => {
                let profile = doc.resolve(a.get(1)?);
                let Object::Stream(p) = profile.as_ref() else {
                    return None;
                };
                match int(doc, &p.dict, b"N") {
                    Some(1) => Some(1),
                    Some(3) => Some(3),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// CCITT fax data in a one-strip TIFF (what `tiffcp` would write): Group 4 when K < 0, else
/// Group 3 (2-D when K > 0).
fn ccitt_tiff(doc: &Document<'_>, data: &[u8], parms: Option<&Dict>, w: u32, h: u32) -> Vec<u8> {
    let get = |key: &[u8]| parms.and_then(|p| doc.get_in(p, key));
    let k = get(b"K").and_then(|o| o.as_i64()).unwrap_or(0);
    let black_is_1 = matches!(get(b"BlackIs1").as_deref(), Some(Object::Bool(true)));
    let rows = get(b"Rows")
        .and_then(|o| o.as_i64())
        .and_then(|r| u32::try_from(r).ok())
        .filter(|r| *r > 0)
        .unwrap_or(h);
    let columns = get(b"Columns")
        .and_then(|o| o.as_i64())
        .and_then(|c| u32::try_from(c).ok())
        .filter(|c| *c > 0)
        .unwrap_or(w);
    let compression: u16 = if k < 0 { 4 } else { 3 };
    let options = u32::from(k > 0);
    // Photometric: 0 = WhiteIsZero, the fax convention; BlackIs1 means 1 bits are black, which
    // is the same thing; PDF's default (0 bits black) is BlackIsZero.
    let photometric: u16 = if black_is_1 { 0 } else { 1 };
    let mut entries: Vec<(u16, u16, u32)> = vec![
        (256, 4, columns), // ImageWidth
        (257, 4, rows),    // ImageLength
        (258, 3, 1),       // BitsPerSample
        (259, 3, u32::from(compression)),
        (262, 3, u32::from(photometric)),
        (273, 4, 0),                 // StripOffsets (filled below)
        (277, 3, 1),                 // SamplesPerPixel
        (278, 4, rows),              // RowsPerStrip
        (279, 4, data.len() as u32), // StripByteCounts
    ];
    if compression == 3 {
        entries.push((292, 4, options)); // T4Options
    } else {
        entries.push((293, 4, 0)); // T6Options
    }
    entries.sort_by_key(|e| e.0);
    let ifd_len = 2 + entries.len() * 12 + 4;
    let data_offset = (8 + ifd_len) as u32;
    let mut out = Vec::with_capacity(data_offset as usize + data.len());
    out.extend_from_slice(b"II*\0");
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        let value = if tag == 273 { data_offset } else { value };
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        if kind == 3 {
            out.extend_from_slice(&(value as u16).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
        } else {
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(data);
    out
}
