//! E-mail messages (RFC 5322 with MIME, `.eml`), parsed by `mail-parser`: the subject, the
//! sender and recipients, the date, the text body (or the HTML body, through the registry's
//! HTML extractor), then every attachment extracted with the registry under its file name
//! ([`TextSink::extract_nested`]), within the same output cap, time budget and nesting bound.
//! Every transfer encoding and charset `mail-parser` decodes is read. Outlook `.msg` files are
//! read by the `msg` module and written in the same layout.

mod msg;

use inlet_core::extract::{
    ExtractError, Extractor, ExtractorInfo, Probe, TextSink, keep, keep_names,
};
use mail_parser::{Address, MessageParser, MimeHeaders};

/// Bytes of the head examined when sniffing.
const SNIFF_BYTES: usize = 8 * 1024;

/// Header names that mark a mail message (lower case).
const MAIL_HEADERS: [&str; 14] = [
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "mime-version",
    "received",
    "return-path",
    "delivered-to",
    "reply-to",
    "sender",
    "in-reply-to",
    "references",
];

/// How sure the sniffer is of a message: above Markdown (75) and plain text, whose bytes a
/// message also is.
const SCORE: u8 = 85;

/// Whether the head is a block of `Name: value` header lines (folded lines allowed) that ends
/// in a blank line and names at least two of the headers a message carries.
fn sniff(probe: &Probe<'_>) -> u8 {
    let head = &probe.bytes[..probe.bytes.len().min(SNIFF_BYTES)];
    let Ok(head) =
        std::str::from_utf8(head).or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
    else {
        return 0;
    };
    let mut known = 0;
    let mut lines = 0;
    let mut ended = false;
    for (i, line) in head.lines().enumerate() {
        if line.trim().is_empty() {
            ended = lines > 0;
            break;
        }
        // mbox files start with a `From ` separator line.
        if i == 0 && line.starts_with("From ") {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if lines == 0 {
                return 0;
            }
            continue;
        }
        let Some((name, _)) = line.split_once(':') else {
            return 0;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return 0;
        }
        lines += 1;
        if MAIL_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            known += 1;
        }
    }
    if known >= 2 && (ended || head.len() < SNIFF_BYTES) {
        SCORE
    } else {
        0
    }
}

struct Mail;

/// One address as both message kinds write it: `Name <address>`, or the one that is known.
fn address(name: Option<&str>, email: Option<&str>) -> String {
    match (name, email) {
        (Some(n), Some(e)) => format!("{n} <{e}>"),
        (Some(n), None) => n.to_string(),
        (None, Some(e)) => e.to_string(),
        (None, None) => String::new(),
    }
}

/// A header line `Label: value`, unless the value is missing or blank (the layout both message
/// kinds share).
fn header(sink: &mut TextSink, label: &str, value: Option<String>) -> Result<(), ExtractError> {
    match value.filter(|v| !v.trim().is_empty()) {
        Some(v) => {
            sink.push(label)?;
            sink.push(": ")?;
            sink.push(&v)?;
            sink.line_break()
        }
        None => Ok(()),
    }
}

/// A message's header lines, as both e-mail formats write them.
struct Headers {
    subject: Option<String>,
    from: Option<String>,
    to: Option<String>,
    cc: Option<String>,
    /// Blind copies: only a sent message (or its draft) knows them.
    bcc: Option<String>,
    /// RFC 3339.
    date: Option<String>,
}

impl Headers {
    /// Records the subject, sender, recipients and date as the document's metadata, then writes
    /// the header lines and a blank line.
    fn write(self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if let Some(m) = sink.metadata_mut() {
            keep(&mut m.title, self.subject.as_deref().unwrap_or_default());
            keep(&mut m.created, self.date.as_deref().unwrap_or_default());
            keep_names(
                &mut m.authors,
                self.from.as_deref().unwrap_or_default().split(", "),
            );
            keep_names(
                &mut m.recipients,
                self.to.as_deref().unwrap_or_default().split(", "),
            );
        }
        header(sink, "Subject", self.subject)?;
        header(sink, "From", self.from)?;
        header(sink, "To", self.to)?;
        header(sink, "Cc", self.cc)?;
        header(sink, "Bcc", self.bcc)?;
        header(sink, "Date", self.date)?;
        sink.line_break()
    }
}

/// `Name <address>` for each address of a header, comma-separated.
fn addresses(list: Option<&Address<'_>>) -> Option<String> {
    let list: Vec<String> = list?
        .iter()
        .map(|a| address(a.name(), a.address()))
        .filter(|s| !s.is_empty())
        .collect();
    (!list.is_empty()).then(|| list.join(", "))
}

impl Extractor for Mail {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let message = MessageParser::default()
            .parse(input)
            .ok_or_else(|| ExtractError::malformed("not a readable e-mail message"))?;
        Headers {
            subject: message.subject().map(str::to_string),
            from: addresses(message.from()),
            to: addresses(message.to()),
            cc: addresses(message.cc()),
            bcc: addresses(message.bcc()),
            date: message.date().map(|d| d.to_rfc3339()),
        }
        .write(sink)?;
        // Every body part of the message in order: each part of a multipart/mixed (text and
        // HTML alike), one of each multipart/alternative (its text, else its HTML). HTML goes
        // through the registry's HTML extractor, which keeps table cells and blocks apart and
        // reads the title; mail-parser's own conversion is the fallback without a registry.
        for i in 0..message.text_body_count() {
            let Some(part) = message.text_part(i as u32) else {
                continue;
            };
            if part.is_text_html() && sink.reads_nested() {
                if let Some(html) = part.text_contents() {
                    sink.extract_nested("", html.as_bytes())?;
                }
            } else if let Some(text) = message.body_text(i) {
                sink.push(text.trim_end())?;
                sink.line_break()?;
            }
        }
        for part in message.attachments() {
            sink.check_deadline()?;
            let name = part.attachment_name().unwrap_or("attachment");
            // A picture is optional: it cannot cost the message its own text.
            sink.extract_member(name, part.contents())?;
        }
        Ok(())
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "eml",
        version: 1,
        media_type: "message/rfc822",
        sniff,
        make: || Box::new(Mail),
    }
}

#[cfg(test)]
mod msg_rtf_tests;
#[cfg(test)]
mod msg_tests;
#[cfg(test)]
mod tests;
