//! HTML (`html`): the `<title>`, then the body's text in document order. Scripts, styles and the
//! rest of the head are skipped; block elements become line breaks and table cells are separated
//! by tabs. Pages are parsed into a tree with html5ever (through scraper); very large or very
//! deeply nested ones are read with the streaming [tag scanner](crate::tags) instead. The title,
//! authors, dates and language the head declares are the document's metadata.

use ego_tree::iter::Edge;
use inlet_core::extract::{
    DocumentMetadata, ExtractError, Extractor, ExtractorInfo, Probe, TextSink, keep, keep_names,
};
use scraper::{Html as Document, Node};

use crate::{
    decode, markup,
    tags::{self, Piece, Tags},
    words::Words,
};

/// Documents larger than this are read with the tag scanner, which streams and stops at the
/// output cap, instead of html5ever, which builds the whole tree first.
const TREE_MAX_BYTES: usize = 8 * 1024 * 1024;

/// Nesting depth above which a document is read with the tag scanner instead of html5ever, whose
/// tree building takes time quadratic in the depth. Real pages nest a few dozen levels.
const MAX_TREE_DEPTH: usize = 512;

/// Elements whose content is not text for a reader.
const SKIPPED: &[&str] = &[
    "head", "title", "script", "style", "noscript", "template", "svg", "iframe", "object",
    "canvas", "select", "datalist",
];

/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "tr",
    "ul",
    "legend",
    "frameset",
    "frame",
];

/// Root elements that make a document without `<html>` or a DOCTYPE HTML rather than XML.
const HTML_ROOTS: &[&str] = &[
    "head",
    "body",
    "title",
    "meta",
    "link",
    "script",
    "style",
    "div",
    "p",
    "span",
    "table",
    "ul",
    "ol",
    "dl",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "b",
    "i",
    "em",
    "strong",
    "br",
    "img",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "form",
    "center",
    "font",
    "pre",
    "blockquote",
    "iframe",
    "noscript",
    "frameset",
];

/// Extracts the text of an HTML document.
struct Html;

impl Extractor for Html {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let detected = decode::detect_or_fail(input)?;
        let label = charset(&detected.head).map(str::to_owned);
        let detected = decode::prefer_declared(input, detected, label.as_deref());
        let text = decode::decode_all(input, &detected);
        let html = &*text;
        if html.len() > TREE_MAX_BYTES || tags::depth_exceeds(html, MAX_TREE_DEPTH) {
            if let Some(m) = sink.metadata_mut() {
                head_metadata(html, m);
            }
            return write_flat(html, sink);
        }
        let document = Document::parse_document(html);
        sink.check_deadline()?;
        if let Some(m) = sink.metadata_mut() {
            metadata(&document, m);
        }
        write_text(&document, sink)
    }
}

/// Bytes of a page too large or too deep for a tree read (as a tree) for its metadata: the head,
/// up to `<body>`.
const HEAD_MAX_BYTES: usize = 64 * 1024;

/// The metadata of a page read without a tree: its head (up to `<body>`, at most
/// [`HEAD_MAX_BYTES`]) parsed alone, unless that too nests too deeply.
fn head_metadata(html: &str, m: &mut DocumentMetadata) {
    let head = prefix(html, HEAD_MAX_BYTES);
    let head = &head[..head
        .to_ascii_lowercase()
        .find("<body")
        .unwrap_or(head.len())];
    if !tags::depth_exceeds(head, MAX_TREE_DEPTH) {
        metadata(&Document::parse_document(head), m);
    }
}

/// What a page says about itself before its body: `<title>`, `<meta name="author">` (and the
/// Dublin Core creator), the Dublin Core dates and `<meta name="date">`, and `<html lang>` as its
/// primary language subtag.
fn metadata(document: &Document, m: &mut DocumentMetadata) {
    let mut authors = Vec::new();
    for node in document.tree.root().descendants() {
        let Some(e) = node.value().as_element() else {
            continue;
        };
        match e.name() {
            "body" => break,
            "html" => {
                let lang = e.attr("lang").or_else(|| e.attr("xml:lang"));
                keep(
                    &mut m.language,
                    &lang.and_then(language).unwrap_or_default(),
                );
            }
            "title" if m.title.is_none() => {
                let text: String = node
                    .descendants()
                    .filter_map(|n| n.value().as_text().map(|t| &**t))
                    .collect();
                keep(
                    &mut m.title,
                    &text.split_whitespace().collect::<Vec<_>>().join(" "),
                );
            }
            "meta" => {
                let (Some(name), Some(content)) = (e.attr("name"), e.attr("content")) else {
                    continue;
                };
                match name.to_ascii_lowercase().as_str() {
                    "author" | "dc.creator" | "dcterms.creator" => authors.push(content),
                    "date" | "dc.date" | "dc.date.created" | "dcterms.created" => {
                        keep(&mut m.created, content);
                    }
                    "dc.date.modified" | "dcterms.modified" => keep(&mut m.modified, content),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    keep_names(&mut m.authors, authors);
}

/// The ISO 639 primary subtag of a language tag (`de` of `de-CH`), if it is one.
fn language(tag: &str) -> Option<String> {
    let primary = tag.trim().split(['-', '_']).next()?;
    ((2..=3).contains(&primary.len()) && primary.bytes().all(|b| b.is_ascii_alphabetic()))
        .then(|| primary.to_ascii_lowercase())
}

/// `text` cut to at most `max` bytes at a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

fn write_text(document: &Document, sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut words = Words::default();
    let root = document.tree.root();
    let title = root
        .descendants()
        .find(|n| n.value().as_element().is_some_and(|e| e.name() == "head"))
        .and_then(|head| {
            head.descendants()
                .find(|n| n.value().as_element().is_some_and(|e| e.name() == "title"))
        });
    if let Some(title) = title {
        for node in title.descendants() {
            if let Node::Text(t) = node.value() {
                words.text(sink, t)?;
            }
        }
        words.line_break(sink)?;
    }

    // Depth inside skipped elements and inside `<pre>`; the walk is iterative, so deeply nested
    // documents cannot overflow the stack.
    let mut skipped = 0usize;
    let mut pre = 0usize;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    let name = e.name();
                    if skipped > 0 || SKIPPED.contains(&name) {
                        skipped += 1;
                        continue;
                    }
                    match name {
                        "br" => words.line_break(sink)?,
                        "td" | "th" => words.cell(sink)?,
                        "pre" => pre += 1,
                        _ => {}
                    }
                    if BLOCKS.contains(&name) {
                        words.line_break(sink)?;
                    } else if matches!(name, "img" | "input" | "wbr" | "textarea") {
                        words.space();
                    }
                }
                Node::Text(t) if skipped == 0 => {
                    if pre > 0 {
                        words.preformatted(sink, t)?;
                    } else {
                        words.text(sink, t)?;
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(e) = node.value() {
                    if skipped > 0 {
                        skipped -= 1;
                        continue;
                    }
                    let name = e.name();
                    if name == "pre" {
                        pre = pre.saturating_sub(1);
                    }
                    if BLOCKS.contains(&name) {
                        words.line_break(sink)?;
                    } else if matches!(name, "td" | "th") {
                        words.space();
                    }
                }
            }
        }
    }
    Ok(())
}

/// Writes the text of a document without building a tree: tags are dropped, blocks and `br`
/// become line breaks, table cells are separated by tabs, scripts and styles are skipped, and of
/// the head only the title is kept.
fn write_flat(html: &str, sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut words = Words::default();
    let (mut in_head, mut in_title) = (false, false);
    for piece in Tags::new(html) {
        match piece {
            Piece::Text(t) => {
                if !in_head || in_title {
                    words.text(sink, &markup::decode_entities(t))?;
                }
            }
            Piece::Start(name, _) | Piece::End(name) => {
                let start = matches!(piece, Piece::Start(..));
                let name = name.to_ascii_lowercase();
                match name.as_str() {
                    "head" => in_head = start,
                    "body" => in_head = false,
                    "title" => {
                        in_title = start;
                        if !start {
                            words.line_break(sink)?;
                        }
                    }
                    "td" | "th" if start => words.cell(sink)?,
                    "br" => words.line_break(sink)?,
                    name if BLOCKS.contains(&name) => words.line_break(sink)?,
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// The `charset` a page declares in its head (`<meta charset=...>` or `content="...;
/// charset=..."`).
fn charset(head: &str) -> Option<&str> {
    let window = prefix(head, 4096);
    let at = window.to_ascii_lowercase().find("charset=")?;
    let value = window[at + 8..].trim_start_matches(['"', '\'', ' ']);
    let end = value
        .find(|c: char| matches!(c, '"' | '\'' | ';' | '>' | '/') || c.is_whitespace())
        .unwrap_or(value.len());
    Some(&value[..end]).filter(|v| !v.is_empty())
}

/// How sure we are that `head` (decoded, leading whitespace trimmed) is HTML.
pub(crate) fn score(head: &str) -> u8 {
    let prolog = markup::prolog(head);
    if prolog.doctype_is_html() || prolog.root_is_html() {
        return 95;
    }
    // Another DOCTYPE or an XML declaration: XML, unless it turns out to be XHTML (handled above).
    if prolog.doctype.is_some() || prolog.xml_decl {
        return 0;
    }
    match prolog.root {
        Some(root) if HTML_ROOTS.iter().any(|h| h.eq_ignore_ascii_case(root)) => 70,
        _ => 0,
    }
}

fn sniff(probe: &Probe<'_>) -> u8 {
    decode::detect(probe.bytes).map_or(0, |d| score(d.head_trimmed()))
}

inventory::submit! {
    ExtractorInfo {
        id: "html",
        version: 1,
        media_type: "text/html",
        sniff,
        make: || Box::new(Html),
    }
}

#[cfg(test)]
mod tests {
    use super::TREE_MAX_BYTES;
    use crate::testutil::{CORPUS, capped, detect, metadata, text};
    use inlet_core::extract::DocumentMetadata;

    fn page(name: &str) -> Vec<u8> {
        let path = format!("{CORPUS}/html/{name}");
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn head_metadata_is_reported() {
        // Expected values read from each page's <html> start tag and <title> (printed with a
        // few lines of Python); none of the corpus pages has an author or a date meta.
        let m = metadata("html", &page("berlin_german.html"));
        assert_eq!(m.title.as_deref(), Some("Berlin – Wikipedia"));
        assert_eq!(m.language.as_deref(), Some("de"));
        assert!(m.authors.is_empty());
        let m = metadata("html", &page("beijing_chinese.html"));
        assert_eq!(
            m.title.as_deref(),
            Some("北京市 - 维基百科，自由的百科全书")
        );
        assert_eq!(m.language.as_deref(), Some("zh"));
        // No lang attribute: the language is left to detection.
        let m = metadata("html", &page("complex_table.html"));
        assert_eq!(m.title.as_deref(), Some("Complex Table Test"));
        assert_eq!(m.language, None);
        // A page read without a tree (too large or deep) reports the same from its head.
        for name in ["berlin_german.html", "complex_table.html"] {
            let bytes = page(name);
            let html = std::str::from_utf8(&bytes).unwrap();
            let mut m = DocumentMetadata::default();
            super::head_metadata(html, &mut m);
            assert_eq!(m, metadata("html", &bytes), "{name}");
        }
    }

    #[test]
    fn author_and_date_metas_and_language_tags() {
        let mut m = DocumentMetadata::default();
        let head = "<html xml:lang=\"PT-br\"><head><META NAME=\"Author\" CONTENT=\" Ann Lee \">\
            <meta name=\"DC.creator\" content=\"Bo Ek\"><meta name=\"dcterms.created\" \
            content=\"2020-01-02\"><meta name=\"dcterms.modified\" content=\"2021-03-04\">\
            <title>A\n  page</title></head><body><meta name=\"author\" content=\"late\">";
        super::head_metadata(head, &mut m);
        assert_eq!(m.authors, ["Ann Lee", "Bo Ek"]);
        assert_eq!(m.created.as_deref(), Some("2020-01-02"));
        assert_eq!(m.modified.as_deref(), Some("2021-03-04"));
        assert_eq!(m.title.as_deref(), Some("A page"));
        assert_eq!(m.language.as_deref(), Some("pt"));
        for tag in ["x-klingon", "english", "", "1234"] {
            assert_eq!(super::language(tag), None, "{tag}");
        }
    }

    const PAGE: &str = "<!DOCTYPE html><html><head><title>The  Title</title>\
        <style>p { color: red }</style><script>var x = 1;</script><meta charset=utf-8></head>\
        <body><h1>Heading</h1><p>First <b>bold</b> para&amp;graph.</p><div>Line<br>break</div>\
        <table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>\
        <ul><li>one</li><li>two</li></ul><noscript>enable js</noscript>\
        <template><p>hidden</p></template><pre>  keep\n  lines</pre><p>caf&eacute;</p></body></html>";

    #[test]
    fn html_text_in_document_order() {
        assert_eq!(
            text("html", PAGE.as_bytes()),
            "The Title\nHeading\nFirst bold para&graph.\nLine\nbreak\nA\tB\n1\t2\none\ntwo\n  \
             keep\n  lines\ncafé\n"
        );
    }

    #[test]
    fn html_is_told_from_xml_and_text() {
        assert_eq!(detect(PAGE.as_bytes()), Some("html"));
        assert_eq!(detect(b"<html><body>Hi</body></html>"), Some("html"));
        assert_eq!(detect(b"<p>A fragment</p><p>of HTML</p>"), Some("html"));
        assert_eq!(
            detect(
                b"<?xml version=\"1.0\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \
                  \"x.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>x</p></body></html>"
            ),
            Some("html")
        );
        assert_eq!(
            detect(b"<note><body>Don't forget</body></note>"),
            Some("xml")
        );
        assert_eq!(detect(b"Use <b>bold</b> sparingly."), Some("text"));
    }

    #[test]
    fn declared_legacy_charset_is_used() {
        let page = "<html><head><meta charset=\"windows-1251\"><title>Привет</title></head>\
                    <body><p>Съешь же ещё этих мягких французских булок.</p></body></html>";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(page);
        assert_eq!(
            text("html", &bytes),
            "Привет\nСъешь же ещё этих мягких французских булок.\n"
        );
    }

    #[test]
    fn big_documents_are_streamed_to_the_cap() {
        let mut page =
            String::from("<html><head><title>Big</title><style>p{}</style></head><body>");
        while page.len() <= TREE_MAX_BYTES {
            page.push_str("<p>Some <b>text</b> here</p>\n");
        }
        let (out, full) = capped("html", page.as_bytes(), 1000);
        assert!(full);
        assert!(
            out.starts_with("Big\nSome text here\nSome text here\n"),
            "{out:.40}"
        );
    }

    #[test]
    fn deep_nesting_is_read_without_a_tree() {
        let page = format!(
            "<html><head><title>T</title><script>x</script></head><body>{}<p>deep &amp; \
             deeper</p><table><tr><td>a</td><td>b</td></tr></table>{}</body></html>",
            "<div>".repeat(100_000),
            "</div>".repeat(100_000)
        );
        let started = std::time::Instant::now();
        assert_eq!(text("html", page.as_bytes()), "T\ndeep & deeper\na\tb\n");
        assert!(started.elapsed().as_secs() < 5);
        // Just under the limit, html5ever still builds the tree.
        let page = format!("{}deep{}", "<div>".repeat(500), "</div>".repeat(500));
        assert_eq!(text("html", page.as_bytes()), "deep\n");
    }
}
