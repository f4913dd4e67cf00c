//! A streaming RTF reader: one pass over the bytes with an explicit group stack (no recursion),
//! writing text to the sink as it goes. Destinations that hold no document text (font, colour and
//! style tables, document info, pictures, objects, field instructions, `\*` destinations we do
//! not know) are skipped, but for the document info's title, author, times and page count, which
//! are the document's metadata; `\uN` characters skip their `\ucN` fallback characters; `\'hh`
//! bytes are decoded in the code page of the current font (its `\fcharset` or `\cpg`) or the
//! document's `\ansicpg`.

use std::collections::HashMap;

use encoding_rs::{Encoding, WINDOWS_1252};
use inlet_core::extract::{ExtractError, MAX_METADATA_CHARS, TextSink, keep, keep_names};

/// Groups nested deeper than this are read as if flat (and reported as damage at the end).
pub(crate) const MAX_DEPTH: usize = 512;

/// Bytes of text buffered before they are pushed into the sink.
const FLUSH_AT: usize = 8 * 1024;

/// Tokens read between two looks at the clock.
const DEADLINE_EVERY_TOKENS: u32 = 8192;

/// Longest control word kept (longer ones are read and ignored).
const MAX_WORD: usize = 32;

/// Destinations whose content is not document text.
const SKIPPED: &[&str] = &[
    "author",
    "bkmkend",
    "bkmkstart",
    "buptim",
    "colortbl",
    "comment",
    "creatim",
    "datafield",
    "datastore",
    "do",
    "doccomm",
    "docvar",
    "falt",
    "filetbl",
    "fldinst",
    "fontemb",
    "fontfile",
    "footnotesep",
    "ftncn",
    "ftnsep",
    "ftnsepc",
    "generator",
    "info",
    "keywords",
    "latentstyles",
    "listoverridetable",
    "listtable",
    "mmathPr",
    "nextfile",
    "object",
    "objdata",
    "operator",
    "panose",
    "pict",
    "pntxta",
    "pntxtb",
    "printim",
    "private",
    "revtbl",
    "revtim",
    "rsidtbl",
    "shppict",
    "nonshppict",
    "stylesheet",
    "subject",
    "tc",
    "template",
    "themedata",
    "colorschememapping",
    "title",
    "txe",
    "xe",
    "xmlnstbl",
    "userprops",
    "wgrffmtfilter",
    "pgdsctbl",
    "protusertbl",
    "passwordhash",
    "company",
    "manager",
    "category",
    "hlinkbase",
    "sp",
    "shprslt",
];

/// Optional (`\*`) destinations whose content is text: shapes, whose text boxes are in
/// `\shptxt` (their properties, `\sp`, and their fallback rendering, `\shprslt`, are skipped).
const STARRED_TEXT: &[&str] = &["shpinst", "shptxt"];

/// What the current group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Document text.
    Text,
    /// The font table (read for code pages, not written).
    Fonts,
    /// Not text: read only to find its end.
    Skip,
    /// The document information group (`\info`): its `\nofpages` is read.
    Info,
    /// A text property of `\info` (`\title`, `\author`), read as text into the metadata.
    Field(Field),
    /// A date of `\info` (`\creatim`, `\revtim`): its `\yr \mo \dy \hr \min \sec`.
    Date(Field),
}

/// A document property of the `\info` group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Title,
    Author,
    Created,
    Modified,
}

/// Bytes of a `\title` or `\author` kept (more than `keep` keeps).
const MAX_FIELD_BYTES: usize = 4 * MAX_METADATA_CHARS;

/// State that a group inherits from its parent and that `}` restores.
#[derive(Debug, Clone, Copy)]
struct Group {
    dest: Dest,
    /// Fallback characters after each `\uN`.
    uc: u32,
    /// Encoding of `\'hh` bytes; `None` means the document's default.
    encoding: Option<CodePage>,
}

/// How a font's `\'hh` bytes are read.
#[derive(Debug, Clone, Copy)]
enum CodePage {
    /// Characters of a code page.
    Encoding(&'static Encoding),
    /// A symbol font's glyphs (`\fcharset2`: Symbol, Wingdings): byte `hh` is the character
    /// Windows gives that glyph, U+F0hh (as Word writes them in `\uN`: a Symbol bullet is
    /// `\u-3913`, U+F0B7), where decoding it in the text's code page would damage it.
    Symbol,
}

/// One pass over an RTF document.
pub(crate) struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    stack: Vec<Group>,
    cur: Group,
    /// Groups opened past [`MAX_DEPTH`] and not yet closed.
    overflow: usize,
    too_deep: bool,
    default_encoding: &'static Encoding,
    fonts: HashMap<i64, Option<CodePage>>,
    /// The font being defined in the font table.
    font_def: Option<i64>,
    /// A `{` was just read: the next control word may name a destination.
    group_start: bool,
    /// `\*` was just read at a group start.
    starred: bool,
    /// Fallback characters still to skip after a `\uN`.
    skip_chars: u32,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// `\'hh` bytes waiting to be decoded together (multi-byte code pages).
    pending: Vec<u8>,
    out: String,
    /// The text of the `\info` property being read.
    field: String,
    /// The parts of the `\info` date being read: year, month, day, hour, minute, second.
    date: [Option<i64>; 6],
    closed: bool,
}

impl<'a> Parser<'a> {
    /// A parser over `input`.
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            pos: 0,
            stack: Vec::new(),
            cur: Group {
                dest: Dest::Text,
                uc: 1,
                encoding: None,
            },
            overflow: 0,
            too_deep: false,
            default_encoding: WINDOWS_1252,
            fonts: HashMap::new(),
            font_def: None,
            group_start: false,
            starred: false,
            skip_chars: 0,
            high: None,
            pending: Vec::new(),
            out: String::new(),
            field: String::new(),
            date: [None; 6],
            closed: false,
        }
    }

    /// Reads the whole document into `sink`.
    pub(crate) fn run(mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        let result = self.read(sink);
        match result {
            Ok(()) => {
                self.flush(sink)?;
                sink.line_break()?;
                if !self.closed {
                    Err(ExtractError::Malformed("RTF ends inside a group".into()))
                } else if self.too_deep {
                    Err(ExtractError::Malformed(format!(
                        "RTF groups nested deeper than {MAX_DEPTH}"
                    )))
                } else {
                    Ok(())
                }
            }
            Err(e) => Err(e),
        }
    }

    fn read(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        let input = self.input;
        let mut tokens = 0u32;
        // Skip a BOM and anything before the first brace.
        self.pos = input.iter().position(|&b| b == b'{').unwrap_or(input.len());
        while let Some(&b) = input.get(self.pos) {
            tokens = tokens.wrapping_add(1);
            if tokens.is_multiple_of(DEADLINE_EVERY_TOKENS) {
                sink.check_deadline()?;
            }
            match b {
                b'{' => {
                    self.pos += 1;
                    self.open_group(sink)?;
                }
                b'}' => {
                    self.pos += 1;
                    self.close_group(sink)?;
                    if self.closed {
                        return Ok(());
                    }
                }
                b'\\' => self.control(sink)?,
                b'\r' | b'\n' => self.pos += 1,
                _ => {
                    // A run of plain text up to the next special byte.
                    let start = self.pos;
                    let end = input[start..]
                        .iter()
                        .position(|&c| matches!(c, b'{' | b'}' | b'\\' | b'\r' | b'\n'))
                        .map_or(input.len(), |i| start + i);
                    self.pos = end;
                    self.group_start = false;
                    self.text_bytes(&input[start..end], sink)?;
                }
            }
        }
        Ok(())
    }

    fn open_group(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.decode_pending(sink)?;
        self.skip_chars = 0;
        if self.stack.len() >= MAX_DEPTH {
            self.overflow += 1;
            self.too_deep = true;
        } else {
            self.stack.push(self.cur);
        }
        self.group_start = true;
        self.starred = false;
        Ok(())
    }

    fn close_group(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.decode_pending(sink)?;
        self.skip_chars = 0;
        self.group_start = false;
        self.starred = false;
        if self.overflow > 0 {
            self.overflow -= 1;
            return Ok(());
        }
        if self.cur.dest == Dest::Fonts {
            self.font_def = None;
        }
        match self.stack.pop() {
            Some(parent) => {
                if parent.dest != self.cur.dest {
                    self.end_property(sink);
                }
                self.cur = parent;
                if self.stack.is_empty() {
                    self.closed = true;
                }
            }
            None => self.closed = true,
        }
        Ok(())
    }

    /// Reads a control word or symbol at `self.pos` (a backslash).
    fn control(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        let input = self.input;
        let start = self.pos + 1;
        let Some(&c) = input.get(start) else {
            self.pos = start;
            return Ok(());
        };
        if !c.is_ascii_alphabetic() {
            self.pos = start + 1;
            return self.symbol(c, sink);
        }
        let mut end = start;
        while end < input.len() && input[end].is_ascii_alphabetic() {
            end += 1;
        }
        let word = &input[start..end.min(start + MAX_WORD)];
        let mut param: Option<i64> = None;
        let mut p = end;
        let negative = input.get(p) == Some(&b'-');
        if negative {
            p += 1;
        }
        let digits_start = p;
        while p < input.len() && input[p].is_ascii_digit() {
            p += 1;
        }
        if p > digits_start {
            let digits = &input[digits_start..p.min(digits_start + 10)];
            let value = digits
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
            param = Some(if negative { -value } else { value });
            end = p;
        }
        // One space after a control word is its delimiter.
        if input.get(end) == Some(&b' ') {
            end += 1;
        }
        self.pos = end;
        let word = std::str::from_utf8(word).unwrap_or("");
        self.word(word, param, sink)
    }

    /// Handles a control symbol (`\` followed by a non-letter).
    fn symbol(&mut self, c: u8, sink: &mut TextSink) -> Result<(), ExtractError> {
        match c {
            b'\'' => {
                let hex = self.input.get(self.pos..self.pos + 2);
                let byte = hex
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(byte) = byte {
                    self.pos += 2;
                    self.group_start = false;
                    if self.skip_chars > 0 {
                        self.skip_chars -= 1;
                    } else if self.collects_text() {
                        self.pending.push(byte);
                    }
                }
                Ok(())
            }
            b'*' => {
                if self.group_start {
                    self.starred = true;
                }
                Ok(())
            }
            b'\\' | b'{' | b'}' => {
                self.group_start = false;
                self.text_bytes(&[c], sink)
            }
            b'~' => self.emit_char('\u{A0}', sink),
            b'_' => self.emit_char('\u{2011}', sink),
            b'\r' | b'\n' => self.emit_str("\n", sink),
            b'\t' => self.emit_str("\t", sink),
            // Optional hyphen, index subentry, formula: nothing to write.
            _ => {
                self.group_start = false;
                Ok(())
            }
        }
    }

    /// Handles a control word.
    fn word(
        &mut self,
        word: &str,
        param: Option<i64>,
        sink: &mut TextSink,
    ) -> Result<(), ExtractError> {
        let at_group_start = std::mem::take(&mut self.group_start);
        let starred = std::mem::take(&mut self.starred);
        if at_group_start {
            if word == "fonttbl" {
                self.cur.dest = Dest::Fonts;
                return Ok(());
            }
            if let Some(dest) = self.info_dest(word) {
                self.cur.dest = dest;
                self.field.clear();
                self.date = [None; 6];
                return Ok(());
            }
            if SKIPPED.contains(&word) {
                self.cur.dest = Dest::Skip;
                return Ok(());
            }
        }
        if word == "bin" {
            // Raw binary data: skip it whatever the destination.
            let n = usize::try_from(param.unwrap_or(0).max(0)).unwrap_or(usize::MAX);
            self.pos = self.pos.saturating_add(n).min(self.input.len());
            return Ok(());
        }
        match self.cur.dest {
            Dest::Skip => return Ok(()),
            Dest::Fonts => {
                self.font_word(word, param);
                return Ok(());
            }
            Dest::Info => {
                if word == "nofpages"
                    && let Some(m) = sink.metadata_mut()
                    && m.pages.is_none()
                {
                    m.pages = param.and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0);
                }
                return Ok(());
            }
            Dest::Date(_) => {
                let part = ["yr", "mo", "dy", "hr", "min", "sec"]
                    .iter()
                    .position(|p| *p == word);
                if let Some(i) = part {
                    self.date[i] = param;
                }
                return Ok(());
            }
            Dest::Text | Dest::Field(_) => {}
        }
        if starred && at_group_start && !STARRED_TEXT.contains(&word) {
            // An optional destination we do not know: not text.
            self.cur.dest = Dest::Skip;
            return Ok(());
        }
        match word {
            "u" => {
                self.decode_pending(sink)?;
                let Some(n) = param else { return Ok(()) };
                self.unicode(n, sink)?;
                self.skip_chars = self.cur.uc;
                return Ok(());
            }
            "uc" => {
                self.cur.uc = u32::try_from(param.unwrap_or(1).clamp(0, 16)).unwrap_or(1);
                return Ok(());
            }
            "ansicpg" => {
                if let Some(enc) = param.and_then(codepage) {
                    self.default_encoding = enc;
                }
                return Ok(());
            }
            "mac" => {
                self.default_encoding = encoding_rs::MACINTOSH;
                return Ok(());
            }
            "f" => {
                self.decode_pending(sink)?;
                self.cur.encoding = param.and_then(|f| self.fonts.get(&f).copied().flatten());
                return Ok(());
            }
            _ => {}
        }
        // Any other control word is one fallback character of a `\uN`.
        if self.skip_chars > 0 {
            self.skip_chars -= 1;
            return Ok(());
        }
        let text = match word {
            "par" | "line" | "sect" | "page" | "row" | "lbr" | "column" | "softline" => "\n",
            "tab" | "cell" | "nestcell" => "\t",
            "emdash" => "\u{2014}",
            "endash" => "\u{2013}",
            "bullet" => "\u{2022}",
            "lquote" => "\u{2018}",
            "rquote" => "\u{2019}",
            "ldblquote" => "\u{201C}",
            "rdblquote" => "\u{201D}",
            "emspace" | "enspace" | "qmspace" => " ",
            "zwj" => "\u{200D}",
            "zwnj" => "\u{200C}",
            _ => return Ok(()),
        };
        self.emit_str(text, sink)
    }

    /// The destination a group starting with `word` opens for the document information, if
    /// it is one: `\info` in the text, its title, author and dates inside it.
    fn info_dest(&self, word: &str) -> Option<Dest> {
        match (self.cur.dest, word) {
            (Dest::Text, "info") => Some(Dest::Info),
            (Dest::Info, "title") => Some(Dest::Field(Field::Title)),
            (Dest::Info, "author") => Some(Dest::Field(Field::Author)),
            (Dest::Info, "creatim") => Some(Dest::Date(Field::Created)),
            (Dest::Info, "revtim") => Some(Dest::Date(Field::Modified)),
            _ => None,
        }
    }

    /// Whether text read now is kept: document text, or an `\info` property's.
    fn collects_text(&self) -> bool {
        matches!(self.cur.dest, Dest::Text | Dest::Field(_))
    }

    /// Where text read now goes: the output, or the `\info` property being read (up to its
    /// cap); `None` when it is not kept.
    fn text_target(&mut self) -> Option<&mut String> {
        match self.cur.dest {
            Dest::Text => Some(&mut self.out),
            Dest::Field(_) if self.field.len() < MAX_FIELD_BYTES => Some(&mut self.field),
            _ => None,
        }
    }

    /// Records the `\info` property whose group is closing as the document's metadata.
    fn end_property(&mut self, sink: &mut TextSink) {
        let Some(m) = sink.metadata_mut() else {
            return;
        };
        match self.cur.dest {
            Dest::Field(field) => {
                let text = self.field.split_whitespace().collect::<Vec<_>>().join(" ");
                match field {
                    Field::Author => keep_names(&mut m.authors, [text.as_str()]),
                    _ => keep(&mut m.title, &text),
                }
            }
            Dest::Date(field) => {
                let date = rtf_date(&self.date).unwrap_or_default();
                match field {
                    Field::Created => keep(&mut m.created, &date),
                    _ => keep(&mut m.modified, &date),
                }
            }
            _ => {}
        }
    }

    /// A control word inside the font table.
    fn font_word(&mut self, word: &str, param: Option<i64>) {
        match (word, param) {
            ("f", Some(n)) => self.font_def = Some(n),
            ("fcharset", Some(cs)) => {
                if let Some(f) = self.font_def {
                    self.fonts.entry(f).or_insert(charset(cs));
                }
            }
            ("cpg", Some(cp)) => {
                if let Some(f) = self.font_def
                    && let Some(enc) = codepage(cp)
                {
                    self.fonts.insert(f, Some(CodePage::Encoding(enc)));
                }
            }
            _ => {}
        }
    }

    /// Writes the UTF-16 code unit of a `\uN` (negative values wrap, surrogates pair up).
    fn unicode(&mut self, n: i64, sink: &mut TextSink) -> Result<(), ExtractError> {
        if !self.collects_text() {
            return Ok(());
        }
        let unit = (n.rem_euclid(65_536)) as u16;
        match unit {
            0xD800..=0xDBFF => {
                self.high = Some(unit);
                Ok(())
            }
            0xDC00..=0xDFFF => {
                let c = self
                    .high
                    .take()
                    .and_then(|h| char::decode_utf16([h, unit]).next().and_then(Result::ok));
                self.emit_char(c.unwrap_or(char::REPLACEMENT_CHARACTER), sink)
            }
            _ => {
                self.high = None;
                let c = char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER);
                if c.is_control() {
                    return Ok(());
                }
                self.emit_char(c, sink)
            }
        }
    }

    /// Plain text bytes (ASCII, or raw 8-bit bytes in the current code page).
    fn text_bytes(&mut self, bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        if !self.collects_text() {
            return Ok(());
        }
        let mut bytes = bytes;
        while self.skip_chars > 0 && !bytes.is_empty() {
            self.skip_chars -= 1;
            bytes = &bytes[1..];
        }
        if bytes.is_empty() {
            return Ok(());
        }
        if bytes.is_ascii() {
            self.decode_pending(sink)?;
            self.high = None;
            let Some(out) = self.text_target() else {
                return Ok(());
            };
            // Control characters in the text (other than tabs) carry nothing.
            if bytes.iter().all(|&b| b >= 0x20 || b == b'\t') {
                // ASCII is valid UTF-8.
                out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
            } else {
                out.extend(
                    bytes
                        .iter()
                        .filter(|&&b| b >= 0x20 || b == b'\t')
                        .map(|&b| char::from(b)),
                );
            }
            return self.maybe_flush(sink);
        }
        self.pending.extend_from_slice(bytes);
        Ok(())
    }

    fn emit_char(&mut self, c: char, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.emit_str(c.encode_utf8(&mut [0; 4]), sink)
    }

    fn emit_str(&mut self, s: &str, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.group_start = false;
        if !self.collects_text() {
            return Ok(());
        }
        self.decode_pending(sink)?;
        if let Some(out) = self.text_target() {
            out.push_str(s);
        }
        self.maybe_flush(sink)
    }

    /// Decodes the buffered `\'hh` bytes in the current code page.
    fn decode_pending(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let text = self.decode(&pending);
        if let Some(out) = self.text_target() {
            out.extend(text.chars().filter(|c| !c.is_control() || *c == '\t'));
        }
        self.pending = pending;
        self.pending.clear();
        self.maybe_flush(sink)
    }

    /// `bytes` read in the current font's code page.
    fn decode<'b>(&self, bytes: &'b [u8]) -> std::borrow::Cow<'b, str> {
        match self.cur.encoding {
            Some(CodePage::Symbol) => bytes
                .iter()
                .filter_map(|&b| char::from_u32(0xF000 + u32::from(b)))
                .collect::<String>()
                .into(),
            Some(CodePage::Encoding(e)) => e.decode(bytes).0,
            None => self.default_encoding.decode(bytes).0,
        }
    }

    fn maybe_flush(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if self.out.len() >= FLUSH_AT {
            self.flush(sink)?;
        }
        Ok(())
    }

    fn flush(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if !self.pending.is_empty() {
            let text = self.decode(&self.pending).into_owned();
            self.out.push_str(&text);
            self.pending.clear();
        }
        if !self.out.is_empty() {
            let out = std::mem::take(&mut self.out);
            sink.push(&out)?;
        }
        Ok(())
    }
}

/// An `\info` date (`\yr \mo \dy \hr \min \sec`, the time optional) as RFC 3339. RTF gives no
/// zone: the time is written as UTC, as PDF dates without a zone are.
fn rtf_date(parts: &[Option<i64>; 6]) -> Option<String> {
    let [Some(year), Some(month), Some(day), hour, minute, second] = *parts else {
        return None;
    };
    let (hour, minute, second) = (hour.unwrap_or(0), minute.unwrap_or(0), second.unwrap_or(0));
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..=23).contains(&hour)
        && (0..=59).contains(&minute)
        && (0..=59).contains(&second);
    valid.then(|| format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z"))
}

/// The encoding of a Windows code page number, if `encoding_rs` has it.
fn codepage(cp: i64) -> Option<&'static Encoding> {
    let label: &[u8] = match cp {
        437 | 850 | 1252 => b"windows-1252",
        866 => b"ibm866",
        874 => b"windows-874",
        932 => b"shift_jis",
        936 => b"gbk",
        949 => b"euc-kr",
        950 => b"big5",
        1250 => b"windows-1250",
        1251 => b"windows-1251",
        1253 => b"windows-1253",
        1254 => b"windows-1254",
        1255 => b"windows-1255",
        1256 => b"windows-1256",
        1257 => b"windows-1257",
        1258 => b"windows-1258",
        10000 => b"macintosh",
        10007 => b"x-mac-cyrillic",
        20866 => b"koi8-r",
        21866 => b"koi8-u",
        28591 => b"iso-8859-1",
        28592 => b"iso-8859-2",
        28595 => b"iso-8859-5",
        28597 => b"iso-8859-7",
        28605 => b"iso-8859-15",
        54936 => b"gb18030",
        65001 => b"utf-8",
        _ => return None,
    };
    Encoding::for_label(label)
}

/// The code page of an `\fcharset` value; `None` means the document's default.
fn charset(cs: i64) -> Option<CodePage> {
    let cp = match cs {
        2 => return Some(CodePage::Symbol),
        77 => 10000,
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    };
    codepage(cp).map(CodePage::Encoding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inlet_core::extract::Limits;

    fn text(rtf: &str) -> String {
        let mut sink = TextSink::new(&Limits::default());
        Parser::new(rtf.as_bytes()).run(&mut sink).unwrap();
        sink.into_text()
    }

    #[test]
    fn unicode_escapes_skip_their_fallbacks() {
        assert_eq!(
            text("{\\rtf1\\ansi \\u8216\\'93hi\\u8217\\'94 {\\uc2\\u228\\'E8a}b\\u-3913?\\par}"),
            "\u{2018}hi\u{2019} äb\u{F0B7}\n"
        );
        // A surrogate pair.
        assert_eq!(text("{\\rtf1 \\u-10179?\\u-8704?}"), "\u{1F600}\n");
    }

    #[test]
    fn a_symbol_fonts_bytes_are_its_glyphs_not_the_text_code_page() {
        // Big5 text with Symbol-font bullets, as Outlook writes them: 0xB7 alone is no Big5
        // character; it is the Symbol bullet, U+F0B7, which Word writes as `\u-3913` too.
        let rtf = "{\\rtf1\\ansi\\ansicpg950{\\fonttbl{\\f0\\fnil\\fcharset136 PMingLiU;}\
                   {\\f1\\fnil\\fcharset2 Symbol;}}\\f0 {\\f1\\'b7}\\tab \\'b6\\'7d\\par \
                   {\\f1\\u-3913\\'b7}}";
        assert_eq!(text(rtf), "\u{F0B7}\t\u{958B}\n\u{F0B7}\n");
    }

    #[test]
    fn code_pages_follow_ansicpg_and_font_charsets() {
        assert_eq!(text("{\\rtf1\\ansi caf\\'e9}"), "café\n");
        assert_eq!(text("{\\rtf1\\ansi\\ansicpg1251 \\'cf\\'f0\\'e8}"), "При\n");
        let rtf = "{\\rtf1\\ansi{\\fonttbl{\\f0\\fswiss Arial;}{\\f1\\fcharset128 MS Mincho;}}\
                   \\f1 \\'93\\'fa\\'96\\'7b\\f0  caf\\'e9}";
        assert_eq!(text(rtf), "日本 café\n");
    }

    #[test]
    fn info_properties_are_metadata_not_text() {
        // Escapes in a title and an author decode as in the text; a group inside a property
        // stays in it; an incomplete date is not reported.
        let rtf = "{\\rtf1\\ansi\\ansicpg1251{\\info{\\title \\u1055?\\'f0\\'e8 {\\b \\'e2\\'e5\\'f2}}\
                   {\\author  Ann\\par  Lee }{\\creatim\\yr2024\\mo2}{\\revtim\\yr2024\\mo2\\dy29\\hr23\\min5}\
                   {\\nofpages0}}Body\\par}";
        let mut sink = TextSink::new(&Limits::default());
        Parser::new(rtf.as_bytes()).run(&mut sink).unwrap();
        let m = sink.metadata().clone();
        assert_eq!(sink.into_text(), "Body\n");
        assert_eq!(m.title.as_deref(), Some("При вет"));
        assert_eq!(m.authors, ["Ann Lee"]);
        assert_eq!(m.created, None);
        assert_eq!(m.modified.as_deref(), Some("2024-02-29T23:05:00Z"));
        assert_eq!(m.pages, None);
    }

    #[test]
    fn destinations_are_skipped_and_structure_kept() {
        let rtf = "{\\rtf1{\\fonttbl{\\f0 Times;}}{\\colortbl;\\red0;}{\\*\\generator X;}\
                   {\\info{\\title T}}{\\*\\unknown junk}A\\tab B\\par\
                   {\\field{\\*\\fldinst HYPERLINK \"x\"}{\\fldrslt link}}\\line\
                   {\\pict\\bin4 \\}{}x}C\\cell D\\cell\\row}";
        assert_eq!(text(rtf), "A\tB\nlink\nC\tD\t\n");
        let shape = "{\\rtf1 {\\shp{\\*\\shpinst{\\sp{\\sn fillColor}{\\sv 255}}\
                     {\\shptxt boxed}}{\\shprslt boxed}}}";
        assert_eq!(text(shape), "boxed\n");
    }
}
