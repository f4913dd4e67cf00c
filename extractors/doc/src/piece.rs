//! The Word binary format's text: the FIB (file information block) at the start of the
//! `WordDocument` stream, the piece table (CLX / PlcPcd) in the table stream that maps character
//! positions to byte runs, and the writer that turns Word's control characters into text
//! (paragraph and cell marks, fields whose instructions are dropped and results kept).

use encoding_rs::{Encoding, WINDOWS_1252};
use inlet_core::extract::{ExtractError, TextSink};

/// `wIdent` of a Word binary document (Word 97 and later).
const WORD_IDENT: u16 = 0xA5EC;

/// `wIdent` of a Word 6.0 or Word 95 document.
const WORD6_IDENT: u16 = 0xA5DC;

/// Bit of the FIB flags: the document was fast-saved and has a piece table (Word 6/95).
const F_COMPLEX: u16 = 0x0004;

/// Where a Word 6/95 FIB holds its story lengths (`ccpText` … `ccpHdrTxbx`) and its CLX's
/// place in the `WordDocument` stream (`fcClx`, `lcbClx`).
const WORD6_CCP: usize = 0x34;
const WORD6_CLX: usize = 0x160;

/// Characters decoded between two pushes into the sink (and looks at the clock).
const CHUNK_CHARS: usize = 16 * 1024;

/// Bit of the FIB flags: the document is encrypted.
const F_ENCRYPTED: u16 = 0x0100;

/// Bit of the FIB flags: the table stream is `1Table` (else `0Table`).
const F_WHICH_TBL_STM: u16 = 0x0200;

/// Bit of a piece's file position: 8-bit (compressed) text.
const FC_COMPRESSED: u32 = 0x4000_0000;

/// The parts of the FIB we use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fib {
    /// The document is encrypted (we do not decrypt).
    pub(crate) encrypted: bool,
    /// The table stream is `1Table`.
    pub(crate) table_one: bool,
    /// Offset of the CLX in the table stream.
    pub(crate) clx_offset: u32,
    /// Length of the CLX (0 when there is none: Word 95 and earlier).
    pub(crate) clx_len: u32,
    /// Character counts of the stories: main text, footnotes, headers, macros, comments,
    /// endnotes, text boxes, header text boxes.
    pub(crate) ccp: [u32; 8],
    /// Start and end of the text in the `WordDocument` stream (Word 95 and earlier).
    pub(crate) fc_min: u32,
    pub(crate) fc_mac: u32,
    /// A Word 6/95 document: no table stream (the CLX is in the `WordDocument` stream), every
    /// piece 8-bit.
    pub(crate) word6: bool,
    /// The encoding of 8-bit text: Windows-1252 from Word 97 on; in Word 6/95 the code page
    /// of the document's language.
    pub(crate) encoding: &'static Encoding,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn short() -> ExtractError {
    ExtractError::Malformed("WordDocument stream too short for its FIB".into())
}

impl Fib {
    /// Reads the FIB at the start of the `WordDocument` stream.
    pub(crate) fn parse(word: &[u8]) -> Result<Self, ExtractError> {
        match u16_at(word, 0).ok_or_else(short)? {
            WORD_IDENT => {}
            WORD6_IDENT => return Self::parse_word6(word),
            _ => return Err(ExtractError::Malformed("not a Word binary document".into())),
        }
        let flags = u16_at(word, 0x0A).ok_or_else(short)?;
        let fc_min = u32_at(word, 0x18).ok_or_else(short)?;
        let fc_mac = u32_at(word, 0x1C).ok_or_else(short)?;
        // FibBase (32 bytes), then csw and FibRgW, cslw and FibRgLw, cbRgFcLcb and FibRgFcLcb.
        let csw = usize::from(u16_at(word, 32).ok_or_else(short)?);
        let rg_lw = 34 + csw * 2 + 2;
        let cslw = usize::from(u16_at(word, rg_lw - 2).ok_or_else(short)?);
        let mut ccp = [0u32; 8];
        if cslw >= 11 {
            for (i, c) in ccp.iter_mut().enumerate() {
                *c = u32_at(word, rg_lw + (3 + i) * 4).ok_or_else(short)?;
            }
        } else {
            ccp[0] = fc_mac.saturating_sub(fc_min);
        }
        let rg_fc_lcb = rg_lw + cslw * 4 + 2;
        let cb_rg_fc_lcb = usize::from(u16_at(word, rg_fc_lcb - 2).ok_or_else(short)?);
        // fcClx / lcbClx are pair 33 of FibRgFcLcb97.
        let (clx_offset, clx_len) = if cslw >= 11 && cb_rg_fc_lcb > 33 {
            (
                u32_at(word, rg_fc_lcb + 33 * 8).ok_or_else(short)?,
                u32_at(word, rg_fc_lcb + 33 * 8 + 4).ok_or_else(short)?,
            )
        } else {
            (0, 0)
        };
        Ok(Self {
            encrypted: flags & F_ENCRYPTED != 0,
            table_one: flags & F_WHICH_TBL_STM != 0,
            clx_offset,
            clx_len,
            ccp,
            fc_min,
            fc_mac,
            word6: false,
            encoding: WINDOWS_1252,
        })
    }

    /// Reads a Word 6.0/95 FIB: the same base, then fixed places for the story lengths and,
    /// when the file was fast-saved (`fComplex`), the CLX.
    fn parse_word6(word: &[u8]) -> Result<Self, ExtractError> {
        let flags = u16_at(word, 0x0A).ok_or_else(short)?;
        let lid = u16_at(word, 0x06).ok_or_else(short)?;
        let mut ccp = [0u32; 8];
        for (i, c) in ccp.iter_mut().enumerate() {
            *c = u32_at(word, WORD6_CCP + i * 4).ok_or_else(short)?;
        }
        let (clx_offset, clx_len) = if flags & F_COMPLEX != 0 {
            (
                u32_at(word, WORD6_CLX).ok_or_else(short)?,
                u32_at(word, WORD6_CLX + 4).ok_or_else(short)?,
            )
        } else {
            (0, 0)
        };
        let fc_min = u32_at(word, 0x18).ok_or_else(short)?;
        let fc_mac = u32_at(word, 0x1C).ok_or_else(short)?;
        let mut encoding = language_encoding(lid);
        if encoding == WINDOWS_1252 {
            let text = word
                .get(fc_min as usize..fc_mac as usize)
                .unwrap_or_default();
            encoding = guessed_8bit_encoding(text);
        }
        Ok(Self {
            encrypted: flags & F_ENCRYPTED != 0,
            table_one: false,
            clx_offset,
            clx_len,
            ccp,
            fc_min,
            fc_mac,
            word6: true,
            encoding,
        })
    }

    /// Characters in all stories together.
    pub(crate) fn total_chars(&self) -> u64 {
        self.ccp.iter().map(|&c| u64::from(c)).sum::<u64>() + 1
    }

    /// The whole text as one 8-bit piece (for files without a piece table).
    pub(crate) fn flat_piece(&self) -> Piece {
        Piece {
            cp_len: self.fc_mac.saturating_sub(self.fc_min),
            offset: self.fc_min,
            compressed: true,
        }
    }
}

/// The Windows code page of a language id (`lid`), as Word 6/95 wrote 8-bit text in it:
/// Central European, Cyrillic, Greek, Turkish, Hebrew, Arabic, Baltic, Vietnamese, Thai and the
/// East Asian double-byte ones; Windows-1252 for the others.
fn language_encoding(lid: u16) -> &'static Encoding {
    let code_page = match (lid & 0x3FF, lid >> 10) {
        // Serbian in Cyrillic shares Croatian's primary id.
        (0x1A, 3) => 1251,
        (0x05 | 0x0E | 0x15 | 0x18 | 0x1A | 0x1B | 0x1C | 0x24, _) => 1250,
        (0x02 | 0x19 | 0x22 | 0x23 | 0x2F, _) => 1251,
        (0x08, _) => 1253,
        (0x1F, _) => 1254,
        (0x0D, _) => 1255,
        (0x01 | 0x20 | 0x29, _) => 1256,
        (0x25..=0x27, _) => 1257,
        (0x2A, _) => 1258,
        (0x1E, _) => 874,
        (0x11, _) => 932,
        (0x12, _) => 949,
        // Chinese: Taiwan and Hong Kong traditional, else simplified.
        (0x04, 1 | 3) => 950,
        (0x04, _) => 936,
        _ => 1252,
    };
    codepage::to_encoding(code_page).unwrap_or(WINDOWS_1252)
}

/// Bytes of a Word 6/95 text looked at by [`guessed_8bit_encoding`].
const GUESS_BYTES: usize = 64 * 1024;

/// The encoding of 8-bit text whose document names a Western language: Windows-1251 when most
/// of its letters are bytes from 0xC0 up (Cyrillic letters are 0xC0–0xFF in Windows-1251; in
/// Western text the accented letters there are a few among ASCII ones), else Windows-1252.
/// Word 6/95 decoded each run in its font's character set; Russian documents written in an
/// English Word carry the English language id.
fn guessed_8bit_encoding(text: &[u8]) -> &'static Encoding {
    let sample = &text[..text.len().min(GUESS_BYTES)];
    let high = sample.iter().filter(|&&b| b >= 0xC0).count();
    let ascii = sample.iter().filter(|b| b.is_ascii_alphabetic()).count();
    if high > ascii {
        encoding_rs::WINDOWS_1251
    } else {
        WINDOWS_1252
    }
}

/// A run of text: `cp_len` characters at byte `offset` of the `WordDocument` stream, one byte
/// each (Windows-1252) when `compressed`, else two (UTF-16LE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) cp_len: u32,
    pub(crate) offset: u32,
    pub(crate) compressed: bool,
}

/// Reads the piece table from the CLX at `offset..offset + len` of the table stream (of the
/// `WordDocument` stream in Word 6/95, whose pieces are all 8-bit text at their `fc`:
/// `eight_bit`).
pub(crate) fn pieces(
    table: &[u8],
    offset: u32,
    len: u32,
    eight_bit: bool,
) -> Result<Vec<Piece>, ExtractError> {
    let bad = |what: &str| ExtractError::Malformed(format!("piece table: {what}"));
    let start = offset as usize;
    let end = start
        .checked_add(len as usize)
        .filter(|&e| e <= table.len())
        .ok_or_else(|| bad("CLX outside the table stream"))?;
    let clx = &table[start..end];
    let mut pos = 0usize;
    // Skip the Prc entries (formatting); then comes the Pcdt.
    while clx.get(pos) == Some(&0x01) {
        let cb = usize::from(u16_at(clx, pos + 1).ok_or_else(|| bad("truncated Prc"))?);
        pos += 3 + cb;
    }
    if clx.get(pos) != Some(&0x02) {
        return Err(bad("no Pcdt"));
    }
    let lcb = u32_at(clx, pos + 1).ok_or_else(|| bad("truncated Pcdt"))? as usize;
    let plc = clx
        .get(pos + 5..)
        .and_then(|rest| rest.get(..lcb))
        .ok_or_else(|| bad("PlcPcd outside the CLX"))?;
    if plc.len() < 4 {
        return Err(bad("empty PlcPcd"));
    }
    // n + 1 character positions of 4 bytes, then n piece descriptors of 8 bytes.
    let n = (plc.len() - 4) / 12;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let cp_start = u32_at(plc, i * 4).ok_or_else(|| bad("truncated CPs"))?;
        let cp_end = u32_at(plc, (i + 1) * 4).ok_or_else(|| bad("truncated CPs"))?;
        let fc = u32_at(plc, (n + 1) * 4 + i * 8 + 2).ok_or_else(|| bad("truncated PCD"))?;
        let compressed = eight_bit || fc & FC_COMPRESSED != 0;
        let raw = fc & !(FC_COMPRESSED | 0x8000_0000);
        out.push(Piece {
            cp_len: cp_end.saturating_sub(cp_start),
            offset: match (eight_bit, compressed) {
                (true, _) => fc,
                (false, true) => raw / 2,
                (false, false) => raw,
            },
            compressed,
        });
    }
    Ok(out)
}

/// Writes the text of `pieces` (at most `max_chars` characters, the stories' total; 8-bit text
/// in `encoding`) into the sink. A piece pointing outside the stream ends the text with
/// [`ExtractError::Malformed`].
pub(crate) fn write_pieces(
    word: &[u8],
    pieces: &[Piece],
    max_chars: u64,
    encoding: &'static Encoding,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let mut writer = TextWriter::default();
    let mut left = max_chars;
    for piece in pieces {
        if left == 0 {
            break;
        }
        let count = u64::from(piece.cp_len).min(left);
        left -= count;
        let width = if piece.compressed { 1 } else { 2 };
        let start = piece.offset as usize;
        let Some(bytes) = (count as usize)
            .checked_mul(width)
            .and_then(|n| start.checked_add(n))
            .and_then(|end| word.get(start..end))
        else {
            // Keep what was read before the damage.
            writer.flush(sink)?;
            return Err(ExtractError::Malformed(
                "piece outside the WordDocument stream".into(),
            ));
        };
        for chunk in bytes.chunks(CHUNK_CHARS * width) {
            sink.check_deadline()?;
            if piece.compressed {
                let (text, _) = encoding.decode_without_bom_handling(chunk);
                writer.write(text.chars(), sink)?;
            } else {
                let units = chunk
                    .chunks_exact(2)
                    .map(|p| u16::from_le_bytes([p[0], p[1]]));
                writer.write(
                    char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)),
                    sink,
                )?;
            }
        }
    }
    writer.flush(sink)?;
    sink.line_break()
}

/// Turns Word's characters into text: paragraph, line, page and section marks end lines, cell
/// marks become tabs, field instructions (between field begin and separator) are dropped, and
/// object anchors and other control characters are left out.
#[derive(Debug, Default)]
pub(crate) struct TextWriter {
    /// Open fields, innermost last: `true` while in the instruction part.
    fields: Vec<bool>,
    out: String,
}

/// Fields nested deeper than this are treated as text (a damaged file, not a real document).
const MAX_FIELD_DEPTH: usize = 64;

impl TextWriter {
    /// Writes characters; text is pushed to the sink chunk by chunk.
    pub(crate) fn write(
        &mut self,
        chars: impl Iterator<Item = char>,
        sink: &mut TextSink,
    ) -> Result<(), ExtractError> {
        for c in chars {
            match c {
                '\u{13}' => {
                    if self.fields.len() < MAX_FIELD_DEPTH {
                        self.fields.push(true);
                    }
                    continue;
                }
                '\u{14}' => {
                    if let Some(last) = self.fields.last_mut() {
                        *last = false;
                    }
                    continue;
                }
                '\u{15}' => {
                    self.fields.pop();
                    continue;
                }
                _ => {}
            }
            if self.fields.iter().any(|&instr| instr) {
                continue;
            }
            match c {
                '\r' | '\u{0B}' | '\u{0C}' | '\u{0E}' => self.out.push('\n'),
                '\u{07}' => self.out.push('\t'),
                '\t' => self.out.push('\t'),
                '\u{1E}' => self.out.push('-'),
                c if c.is_control() => {}
                c => self.out.push(c),
            }
            if self.out.len() >= CHUNK_CHARS {
                self.flush(sink)?;
            }
        }
        Ok(())
    }

    /// Pushes what is buffered.
    pub(crate) fn flush(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if !self.out.is_empty() {
            let text = std::mem::take(&mut self.out);
            sink.push(&text)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inlet_core::extract::Limits;

    #[test]
    fn word_6_text_is_decoded_in_its_languages_code_page() {
        assert_eq!(language_encoding(0x0419), encoding_rs::WINDOWS_1251); // Russian
        assert_eq!(language_encoding(0x0C1A), encoding_rs::WINDOWS_1251); // Serbian, Cyrillic
        assert_eq!(language_encoding(0x041A), encoding_rs::WINDOWS_1250); // Croatian
        assert_eq!(language_encoding(0x0405), encoding_rs::WINDOWS_1250); // Czech
        assert_eq!(language_encoding(0x0408), encoding_rs::WINDOWS_1253); // Greek
        assert_eq!(language_encoding(0x0411), encoding_rs::SHIFT_JIS); // Japanese
        assert_eq!(language_encoding(0x0404), encoding_rs::BIG5); // Chinese, Taiwan
        assert_eq!(language_encoding(0x0804), encoding_rs::GBK); // Chinese, PRC
        assert_eq!(language_encoding(0x040C), WINDOWS_1252); // French
        assert_eq!(language_encoding(0x0409), WINDOWS_1252); // English
        // Western by its language id: Cyrillic when most letters are high bytes.
        let russian = encoding_rs::WINDOWS_1251
            .encode("Компания Аскат М предлагает")
            .0;
        assert_eq!(guessed_8bit_encoding(&russian), encoding_rs::WINDOWS_1251);
        let french = WINDOWS_1252.encode("A l'attention de : Société générale").0;
        assert_eq!(guessed_8bit_encoding(&french), WINDOWS_1252);
        assert_eq!(guessed_8bit_encoding(b""), WINDOWS_1252);
    }

    #[test]
    fn word_6_pieces_are_8_bit_at_their_file_position() {
        // A CLX of one Pcdt: two pieces (CPs 0, 3, 5) at fc 100 and 0x4000_0010.
        let mut plc = Vec::new();
        for cp in [0u32, 3, 5] {
            plc.extend_from_slice(&cp.to_le_bytes());
        }
        for fc in [100u32, 0x4000_0010] {
            plc.extend_from_slice(&[0, 0]);
            plc.extend_from_slice(&fc.to_le_bytes());
            plc.extend_from_slice(&[0, 0]);
        }
        let clx = [&[2u8][..], &(plc.len() as u32).to_le_bytes(), &plc].concat();
        let len = clx.len() as u32;
        let word6 = pieces(&clx, 0, len, true).unwrap();
        assert_eq!(
            word6[0],
            Piece {
                cp_len: 3,
                offset: 100,
                compressed: true
            }
        );
        assert_eq!(word6[1].offset, 0x4000_0010);
        // Word 97: the compressed bit halves the offset; without it, UTF-16.
        let word97 = pieces(&clx, 0, len, false).unwrap();
        assert_eq!(
            word97[0],
            Piece {
                cp_len: 3,
                offset: 100,
                compressed: false
            }
        );
        assert_eq!(
            word97[1],
            Piece {
                cp_len: 2,
                offset: 8,
                compressed: true
            }
        );
    }

    #[test]
    fn fields_keep_results_and_drop_instructions() {
        let mut sink = TextSink::new(&Limits::default());
        let mut w = TextWriter::default();
        let text =
            "See \u{13} HYPERLINK \"http://x\" \u{14}the link\u{15}.\rA\u{7}B\u{7}\u{7}\rend\u{1}";
        w.write(text.chars(), &mut sink).unwrap();
        w.flush(&mut sink).unwrap();
        assert_eq!(sink.as_str(), "See the link.\nA\tB\t\t\nend");
    }

    #[test]
    fn pieces_outside_the_stream_are_damage() {
        let mut sink = TextSink::new(&Limits::default());
        let piece = Piece {
            cp_len: 10,
            offset: 4,
            compressed: true,
        };
        let first = Piece {
            cp_len: 2,
            offset: 0,
            compressed: true,
        };
        let err =
            write_pieces(b"abcdefgh", &[first, piece], 100, WINDOWS_1252, &mut sink).unwrap_err();
        assert_eq!(sink.as_str(), "ab");
        assert!(matches!(err, ExtractError::Malformed(_)));
        let ok = Piece { cp_len: 3, ..piece };
        let mut sink = TextSink::new(&Limits::default());
        write_pieces(b"abcdefgh", &[ok], 100, WINDOWS_1252, &mut sink).unwrap();
        assert_eq!(sink.as_str(), "efg\n");
    }
}
