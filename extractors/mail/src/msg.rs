//! Outlook messages (`.msg`, MS-OXMSG): a compound file whose storages are the message, its
//! recipients (`__recip_version1.0_#…`) and its attachments (`__attach_version1.0_#…`). Fixed-size
//! properties (integers, times) are 16-byte entries of a `__properties_version1.0` stream; strings
//! and binaries are streams `__substg1.0_IIIITTTT` (property id, type: `001F` UTF-16LE, `001E`
//! 8-bit in the message's code page, `0102` binary).
//!
//! Written like an `.eml`: `Subject:`, `From:`, `To:`, `Cc:`, `Bcc:` and `Date:` lines (the client's
//! submit time, else the delivery time), the plain body (or the HTML body through the registry,
//! or else the compressed RTF body, decompressed and read by the registry's RTF extractor), then
//! each attachment under its file name, extracted with the registry; an attached message (an
//! embedded `.msg` storage) is written the same way, [`MAX_NESTING`] deep at most. Every stream
//! read is charged to the sink's decompression budget, and a compressed RTF body's size before it
//! is decompressed; once the budget is spent the text so far is kept and reported cut.

use std::{collections::HashMap, io::Cursor, io::Read};

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, MAX_NESTING, Probe, TextSink};

use crate::{Headers, address};

/// The OLE2 (Compound File Binary) signature.
const OLE2_MAGIC: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";

/// The fixed-size properties of a message, recipient or attachment.
const PROPERTIES: &str = "__properties_version1.0";
/// Prefix of the streams of variable-size properties.
const SUBSTG: &str = "__substg1.0_";
const RECIPIENT_PREFIX: &str = "__recip_version1.0_#";
const ATTACHMENT_PREFIX: &str = "__attach_version1.0_#";
/// The storage of an attached message (`PR_ATTACH_DATA_OBJ` of type `PT_OBJECT`).
const EMBEDDED_MESSAGE: &str = "__substg1.0_3701000D";

/// Header sizes of `__properties_version1.0` before its entries.
const TOP_HEADER: usize = 32;
const EMBEDDED_HEADER: usize = 24;
const CHILD_HEADER: usize = 8;

const PT_LONG: u16 = 0x0003;
const PT_SYSTIME: u16 = 0x0040;

const PR_SUBJECT: u16 = 0x0037;
const PR_CLIENT_SUBMIT_TIME: u16 = 0x0039;
const PR_SENT_REPRESENTING_NAME: u16 = 0x0042;
const PR_SENT_REPRESENTING_EMAIL: u16 = 0x0065;
const PR_SENDER_NAME: u16 = 0x0C1A;
const PR_SENDER_EMAIL: u16 = 0x0C1F;
const PR_RECIPIENT_TYPE: u16 = 0x0C15;
const PR_DISPLAY_BCC: u16 = 0x0E02;
const PR_DISPLAY_CC: u16 = 0x0E03;
const PR_DISPLAY_TO: u16 = 0x0E04;
const PR_MESSAGE_DELIVERY_TIME: u16 = 0x0E06;
const PR_BODY: u16 = 0x1000;
const PR_RTF_COMPRESSED: u16 = 0x1009;
const PR_HTML: u16 = 0x1013;
const PR_DISPLAY_NAME: u16 = 0x3001;
const PR_EMAIL_ADDRESS: u16 = 0x3003;
const PR_ATTACH_DATA: u16 = 0x3701;
const PR_ATTACH_FILENAME: u16 = 0x3704;
const PR_ATTACH_LONG_FILENAME: u16 = 0x3707;
const PR_SMTP_ADDRESS: u16 = 0x39FE;
const PR_INTERNET_CPID: u16 = 0x3FDE;
const PR_MESSAGE_CODEPAGE: u16 = 0x3FFD;
const PR_SENDER_SMTP_ADDRESS: u16 = 0x5D01;

/// `PR_RECIPIENT_TYPE` values.
const MAPI_TO: u32 = 1;
const MAPI_CC: u32 = 2;
const MAPI_BCC: u32 = 3;

/// `PR_RTF_COMPRESSED`'s header (MS-OXRTFCP): COMPSIZE, RAWSIZE, COMPTYPE, CRC.
const RTF_HEADER: usize = 16;
/// COMPTYPE of compressed (`LZFu`) and of uncompressed (`MELA`) RTF.
const LZFU: u32 = 0x7546_5A4C;
const MELA: u32 = 0x414C_454D;
/// At most 8 bytes out per compressed byte (a control byte and eight 2-byte references of at
/// most 17 bytes each): a larger RAWSIZE is a lie.
const MAX_RTF_RATIO: u64 = 9;

/// Seconds from 1601-01-01 (FILETIME's epoch) to 1970-01-01.
const FILETIME_UNIX_OFFSET: i64 = 11_644_473_600;
/// The last second of year 9999, past which a date is nonsense.
const MAX_UNIX_SECONDS: i64 = 253_402_300_799;

/// Detection score: an OLE2 file with the message property stream and property streams.
const SCORE: u8 = 95;

type File<'a> = cfb::CompoundFile<Cursor<&'a [u8]>>;

/// Fixed-size property values of one object, by property id: (type, the 8 value bytes).
struct Fixed(HashMap<u16, (u16, [u8; 8])>);

impl Fixed {
    fn long(&self, id: u16) -> Option<u32> {
        match self.0.get(&id) {
            Some((PT_LONG, v)) => Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            _ => None,
        }
    }

    /// A `PT_SYSTIME` property as seconds since 1970, if it is a plausible date.
    fn time(&self, id: u16) -> Option<i64> {
        match self.0.get(&id) {
            Some((PT_SYSTIME, v)) => {
                let ticks = i64::try_from(u64::from_le_bytes(*v)).ok()?;
                let secs = ticks / 10_000_000 - FILETIME_UNIX_OFFSET;
                (0..=MAX_UNIX_SECONDS).contains(&secs).then_some(secs)
            }
            _ => None,
        }
    }
}

/// One message (the file's root, or an attached message's storage) being read.
struct Message<'f, 'a> {
    file: &'f mut File<'a>,
    /// The storage's path, ending in `/`.
    dir: String,
    /// Encoding of its 8-bit strings.
    encoding: &'static encoding_rs::Encoding,
}

impl Message<'_, '_> {
    /// The stream at `path` (within the file), charged to the sink's budget; `None` if there is no
    /// such stream or it cannot be read.
    fn stream(&mut self, path: &str, sink: &mut TextSink) -> Result<Option<Vec<u8>>, ExtractError> {
        if !self.file.is_stream(path) {
            return Ok(None);
        }
        let Ok(stream) = self.file.open_stream(path) else {
            return Ok(None);
        };
        if !sink.charge_decompressed(stream.len()) {
            return Err(sink.cut());
        }
        let mut out = Vec::new();
        match stream
            .take(sink.max_decompressed_bytes())
            .read_to_end(&mut out)
        {
            Ok(_) => Ok(Some(out)),
            Err(_) => Ok(None),
        }
    }

    /// The fixed-size properties of the object stored at `dir` (a path ending in `/`).
    fn fixed(
        &mut self,
        dir: &str,
        header_len: usize,
        sink: &mut TextSink,
    ) -> Result<Fixed, ExtractError> {
        let mut map = HashMap::new();
        if let Some(data) = self.stream(&format!("{dir}{PROPERTIES}"), sink)? {
            for entry in data.get(header_len..).unwrap_or_default().chunks_exact(16) {
                let tag = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
                let mut value = [0; 8];
                value.copy_from_slice(&entry[8..16]);
                map.insert((tag >> 16) as u16, ((tag & 0xFFFF) as u16, value));
            }
        }
        Ok(Fixed(map))
    }

    /// String property `id` of the object at `dir`: UTF-16 (`001F`) or 8-bit (`001E`).
    fn string(
        &mut self,
        dir: &str,
        id: u16,
        sink: &mut TextSink,
    ) -> Result<Option<String>, ExtractError> {
        if let Some(data) = self.stream(&format!("{dir}{SUBSTG}{id:04X}001F"), sink)? {
            let units = data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]));
            let text: String = char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            return Ok(Some(text.trim_end_matches('\0').to_owned()));
        }
        if let Some(data) = self.stream(&format!("{dir}{SUBSTG}{id:04X}001E"), sink)? {
            let (text, _) = self.encoding.decode_without_bom_handling(&data);
            return Ok(Some(text.trim_end_matches('\0').to_owned()));
        }
        Ok(None)
    }

    /// Binary property `id` of the object at `dir`.
    fn binary(
        &mut self,
        dir: &str,
        id: u16,
        sink: &mut TextSink,
    ) -> Result<Option<Vec<u8>>, ExtractError> {
        self.stream(&format!("{dir}{SUBSTG}{id:04X}0102"), sink)
    }

    /// The child storages of this message whose names start with `prefix`, sorted.
    fn children(&self, prefix: &str) -> Vec<String> {
        let Ok(entries) = self.file.read_storage(&self.dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter(|e| e.is_storage() && e.name().starts_with(prefix))
            .map(|e| format!("{}{}/", self.dir, e.name()))
            .collect();
        names.sort();
        names
    }

    /// Writes the message: header lines, body, attachments.
    fn write(
        &mut self,
        header_len: usize,
        depth: u8,
        sink: &mut TextSink,
    ) -> Result<(), ExtractError> {
        let dir = self.dir.clone();
        let fixed = self.fixed(&dir, header_len, sink)?;
        if let Some(encoding) = fixed
            .long(PR_MESSAGE_CODEPAGE)
            .or_else(|| fixed.long(PR_INTERNET_CPID))
            .and_then(|cp| u16::try_from(cp).ok())
            .and_then(codepage::to_encoding)
        {
            self.encoding = encoding;
        }
        let subject = self.string(&dir, PR_SUBJECT, sink)?;
        let from = self.sender(&dir, sink)?;
        let Recipients { to, cc, bcc } = self.recipients(sink)?;
        let to = match to {
            Some(to) => Some(to),
            None => self
                .string(&dir, PR_DISPLAY_TO, sink)?
                .map(|s| display_list(&s)),
        };
        let cc = match cc {
            Some(cc) => Some(cc),
            None => self
                .string(&dir, PR_DISPLAY_CC, sink)?
                .map(|s| display_list(&s)),
        };
        let bcc = match bcc {
            Some(bcc) => Some(bcc),
            None => self
                .string(&dir, PR_DISPLAY_BCC, sink)?
                .map(|s| display_list(&s)),
        };
        let date = fixed
            .time(PR_CLIENT_SUBMIT_TIME)
            .or_else(|| fixed.time(PR_MESSAGE_DELIVERY_TIME))
            .map(|secs| mail_parser::DateTime::from_timestamp(secs).to_rfc3339());
        Headers {
            subject,
            from,
            to,
            cc,
            bcc,
            date,
        }
        .write(sink)?;
        match self.string(&dir, PR_BODY, sink)? {
            Some(body) if !body.trim().is_empty() => {
                sink.push(body.trim_end())?;
                sink.line_break()?;
            }
            _ => {
                let html = match self.binary(&dir, PR_HTML, sink)? {
                    Some(html) => Some(html),
                    None => self.string(&dir, PR_HTML, sink)?.map(String::into_bytes),
                };
                if let Some(html) = html.filter(|h| !h.is_empty()) {
                    sink.extract_nested("", &html)?;
                } else if let Some(data) = self.binary(&dir, PR_RTF_COMPRESSED, sink)? {
                    // Only the compressed RTF (Outlook's own format): the RTF extractor reads it,
                    // HTML encapsulated in RTF (`\fromhtml1`) included.
                    if let Some(rtf) = rtf_body(&data, sink)? {
                        sink.extract_nested("", &rtf)?;
                    }
                }
            }
        }
        for attachment in self.children(ATTACHMENT_PREFIX) {
            sink.check_deadline()?;
            self.attachment(&attachment, depth, sink)?;
        }
        Ok(())
    }

    /// `Name <address>` of the sender.
    fn sender(&mut self, dir: &str, sink: &mut TextSink) -> Result<Option<String>, ExtractError> {
        let name = match self.string(dir, PR_SENDER_NAME, sink)? {
            Some(n) if !n.is_empty() => Some(n),
            _ => self.string(dir, PR_SENT_REPRESENTING_NAME, sink)?,
        };
        let mut email = None;
        for id in [
            PR_SENDER_SMTP_ADDRESS,
            PR_SENDER_EMAIL,
            PR_SENT_REPRESENTING_EMAIL,
        ] {
            // Exchange's internal addresses (`/O=…`) are no help to a reader.
            if let Some(e) = self.string(dir, id, sink)?.filter(|e| e.contains('@')) {
                email = Some(e);
                break;
            }
        }
        let name = name.filter(|n| Some(n) != email.as_ref());
        Ok(Some(address(name.as_deref(), email.as_deref())).filter(|s| !s.is_empty()))
    }

    /// The To, Cc and Bcc lines from the recipient storages, each `Name <address>` (a sent
    /// message keeps its blind copies' recipients).
    fn recipients(&mut self, sink: &mut TextSink) -> Result<Recipients, ExtractError> {
        let mut to = Vec::new();
        let mut cc = Vec::new();
        let mut bcc = Vec::new();
        for dir in self.children(RECIPIENT_PREFIX) {
            sink.check_deadline()?;
            let fixed = self.fixed(&dir, CHILD_HEADER, sink)?;
            let name = self.string(&dir, PR_DISPLAY_NAME, sink)?;
            let mut email = self.string(&dir, PR_SMTP_ADDRESS, sink)?;
            if email.is_none() {
                email = self
                    .string(&dir, PR_EMAIL_ADDRESS, sink)?
                    .filter(|e| e.contains('@'));
            }
            let name = name.filter(|n| !n.is_empty() && Some(n) != email.as_ref());
            let entry = address(name.as_deref(), email.as_deref());
            if entry.is_empty() {
                continue;
            }
            match fixed.long(PR_RECIPIENT_TYPE) {
                Some(MAPI_CC) => cc.push(entry),
                Some(MAPI_BCC) => bcc.push(entry),
                Some(MAPI_TO) | None => to.push(entry),
                _ => {}
            }
        }
        let join = |v: Vec<String>| (!v.is_empty()).then(|| v.join(", "));
        Ok(Recipients {
            to: join(to),
            cc: join(cc),
            bcc: join(bcc),
        })
    }

    /// Writes one attachment under its file name: its data extracted with the registry, or an
    /// attached message written as a message.
    fn attachment(
        &mut self,
        dir: &str,
        depth: u8,
        sink: &mut TextSink,
    ) -> Result<(), ExtractError> {
        let mut name = None;
        for id in [PR_ATTACH_LONG_FILENAME, PR_ATTACH_FILENAME, PR_DISPLAY_NAME] {
            if let Some(n) = self.string(dir, id, sink)?.filter(|n| !n.trim().is_empty()) {
                name = Some(n);
                break;
            }
        }
        let name = name.unwrap_or_else(|| "attachment".to_owned());
        let embedded = format!("{dir}{EMBEDDED_MESSAGE}/");
        if self.file.is_storage(&embedded) {
            sink.line_break()?;
            sink.push(&name)?;
            sink.line_break()?;
            if depth < MAX_NESTING {
                let mut inner = Message {
                    file: &mut *self.file,
                    dir: embedded,
                    encoding: self.encoding,
                };
                inner.write(EMBEDDED_HEADER, depth + 1, sink)?;
            } else {
                sink.left_out();
            }
            return sink.line_break();
        }
        match self.binary(dir, PR_ATTACH_DATA, sink)? {
            Some(data) => sink.extract_member(&name, &data),
            None => {
                sink.line_break()?;
                sink.push(&name)?;
                sink.line_break()
            }
        }
    }
}

/// A message's recipient lines by kind, each `Name <address>, …`.
struct Recipients {
    to: Option<String>,
    cc: Option<String>,
    bcc: Option<String>,
}

/// The RTF of a `PR_RTF_COMPRESSED` stream (MS-OXRTFCP), its size charged to the sink's
/// decompression budget before it is decompressed; `None` if the stream is corrupt (a bad
/// header, size or CRC).
pub(crate) fn rtf_body(data: &[u8], sink: &mut TextSink) -> Result<Option<Vec<u8>>, ExtractError> {
    let Some(header) = data.get(..RTF_HEADER) else {
        return Ok(None);
    };
    let word =
        |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    let (comp_size, raw_size, comp_type) = (u64::from(word(0)), u64::from(word(4)), word(8));
    // COMPSIZE counts the bytes after itself; bytes past them (padding) are left out.
    let Some(data) = usize::try_from(comp_size + 4)
        .ok()
        .and_then(|end| data.get(..end))
        .filter(|d| d.len() >= RTF_HEADER)
    else {
        return Ok(None);
    };
    let body = (data.len() - RTF_HEADER) as u64;
    let plausible = match comp_type {
        LZFU => raw_size <= body.saturating_mul(MAX_RTF_RATIO),
        MELA => raw_size <= body,
        _ => false,
    };
    if !plausible {
        return Ok(None);
    }
    if !sink.charge_decompressed(raw_size) {
        return Err(sink.cut());
    }
    let Ok(rtf) = compressed_rtf::decompress_rtf(data) else {
        return Ok(None);
    };
    // The crate gives each byte as a char (U+0000 to U+00FF): back to bytes.
    let rtf: Vec<u8> = rtf
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    // RAWSIZE may understate what the references gave.
    let more = (rtf.len() as u64).saturating_sub(raw_size);
    if more > 0 && !sink.charge_decompressed(more) {
        return Err(sink.cut());
    }
    Ok(Some(rtf))
}

/// `PR_DISPLAY_TO`/`PR_DISPLAY_CC` (names separated by `;`) as a comma-separated list.
fn display_list(names: &str) -> String {
    names
        .split(';')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Extracts the text of an Outlook message.
struct Msg;

impl Extractor for Msg {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let mut file =
            cfb::CompoundFile::open(Cursor::new(input)).map_err(ExtractError::malformed)?;
        let mut message = Message {
            file: &mut file,
            dir: "/".to_owned(),
            encoding: encoding_rs::WINDOWS_1252,
        };
        message.write(TOP_HEADER, 0, sink)
    }
}

/// An OLE2 compound file with the message's property stream and property streams at its root.
fn sniff(probe: &Probe<'_>) -> u8 {
    if probe.bytes.starts_with(OLE2_MAGIC)
        && probe.has_entry(PROPERTIES)
        && probe.entries.iter().any(|e| e.starts_with(SUBSTG))
    {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "msg",
        version: 1,
        media_type: "application/vnd.ms-outlook",
        sniff,
        make: || Box::new(Msg),
    }
}
