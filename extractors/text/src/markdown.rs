//! Markdown (`markdown`): the text of paragraphs, headings, list items, code and table cells,
//! one line per block, without markup.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::decode;

/// Source bytes parsed at a time; a piece ends at a blank line outside a code fence, because
/// pulldown-cmark parses a whole document's block structure before yielding the first event.
const PIECE_BYTES: usize = 1024 * 1024;

/// A piece is cut at a line end after this many bytes even without a blank line.
const PIECE_HARD_BYTES: usize = 4 * PIECE_BYTES;

/// Lines of the head examined when sniffing.
const SNIFF_LINES: usize = 400;

/// Renders Markdown to plain text.
struct Markdown;

impl Extractor for Markdown {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let text = decode::decode_text(input)?;
        for piece in pieces(&text) {
            render(piece, sink)?;
            sink.line_break()?;
        }
        Ok(())
    }
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_DEFINITION_LIST
}

fn render(markdown: &str, sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut first_cell = true;
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(tag) => match tag {
                Tag::TableHead | Tag::TableRow => {
                    sink.line_break()?;
                    first_cell = true;
                }
                Tag::TableCell => {
                    if !first_cell {
                        sink.push("\t")?;
                    }
                    first_cell = false;
                }
                Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::BlockQuote(_)
                | Tag::CodeBlock(_)
                | Tag::HtmlBlock
                | Tag::List(_)
                | Tag::Item
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList
                | Tag::DefinitionListTitle
                | Tag::DefinitionListDefinition
                | Tag::Table(_)
                | Tag::MetadataBlock(_) => sink.line_break()?,
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::BlockQuote(_)
                | TagEnd::CodeBlock
                | TagEnd::HtmlBlock
                | TagEnd::List(_)
                | TagEnd::Item
                | TagEnd::FootnoteDefinition
                | TagEnd::DefinitionList
                | TagEnd::DefinitionListTitle
                | TagEnd::DefinitionListDefinition
                | TagEnd::Table
                | TagEnd::TableHead
                | TagEnd::TableRow
                | TagEnd::MetadataBlock(_) => sink.line_break()?,
                _ => {}
            },
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                sink.push(&decode::without_controls(&t))?
            }
            Event::Html(html) => {
                let text = strip_tags(&decode::without_controls(&html));
                let text = text.trim();
                if !text.is_empty() {
                    sink.push(text)?;
                    sink.line_break()?;
                }
            }
            Event::SoftBreak => sink.space()?,
            Event::HardBreak | Event::Rule => sink.line_break()?,
            Event::InlineHtml(_) | Event::FootnoteReference(_) | Event::TaskListMarker(_) => {}
        }
    }
    Ok(())
}

/// The text of a raw HTML block line: everything outside `<...>`.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Splits a document into pieces of about [`PIECE_BYTES`], each ending after a blank line outside
/// a fenced code block (or, failing that within [`PIECE_HARD_BYTES`], after any line).
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = cut_point(rest);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

fn cut_point(text: &str) -> usize {
    if text.len() <= PIECE_BYTES {
        return text.len();
    }
    let mut pos = 0;
    let mut fence: Option<&str> = None;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        if end > PIECE_HARD_BYTES {
            break;
        }
        let line = &text[pos..end];
        let trimmed = line.trim_start_matches(' ');
        let marker = ["```", "~~~"]
            .into_iter()
            .find(|m| trimmed.starts_with(m) && line.len() - trimmed.len() <= 3);
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            _ => {}
        }
        pos = end;
        if pos >= PIECE_BYTES && fence.is_none() && line.trim().is_empty() {
            return pos;
        }
    }
    if pos > 0 {
        // Before the line that would make the piece too long.
        return pos;
    }
    // One enormous line: cut it at a character boundary.
    let mut cut = PIECE_HARD_BYTES.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    cut.max(1)
}

/// Markdown syntax seen in the head.
#[derive(Debug, Default)]
struct Signals {
    /// Kinds of syntax that plain text rarely has: ATX headings, fences, inline links or
    /// reference definitions, table rules, emphasis or inline code.
    strong: usize,
    /// Kinds that plain text has too: list items, `> ` quotes, setext underlines.
    weak: usize,
    /// Lines showing any of them.
    lines: usize,
    /// A table rule (`|---|---|`) under a row of cells: unmistakably Markdown.
    table: bool,
}

fn signals(head: &str) -> Signals {
    let mut strong = [false; 5];
    let mut weak = [false; 3];
    let mut lines = 0;
    let mut previous_text = false;
    let mut table = false;
    let mut previous_cells = false;
    for line in head.lines().take(SNIFF_LINES) {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let found_strong = [
            indent <= 3 && is_atx_heading(t),
            indent <= 3 && (t.starts_with("```") || t.starts_with("~~~")),
            has_link(t),
            is_table_rule(t),
            has_emphasis(t),
        ];
        let found_weak = [
            indent <= 8 && is_list_item(t),
            indent <= 3 && t.starts_with("> "),
            previous_text && is_setext_rule(t),
        ];
        for (seen, found) in strong.iter_mut().zip(found_strong) {
            *seen |= found;
        }
        for (seen, found) in weak.iter_mut().zip(found_weak) {
            *seen |= found;
        }
        table |= previous_cells && found_strong[3];
        previous_cells = t.starts_with('|') || t.trim_end().ends_with('|');
        let found = found_strong.contains(&true) || found_weak.contains(&true);
        lines += usize::from(found);
        previous_text = !t.is_empty() && !found;
    }
    let count = |kinds: &[bool]| kinds.iter().filter(|&&k| k).count();
    Signals {
        strong: count(&strong),
        weak: count(&weak),
        lines,
        table,
    }
}

fn is_atx_heading(t: &str) -> bool {
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t'])
}

fn is_list_item(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix(['-', '*', '+']) {
        return rest.starts_with(' ') && !rest.trim().is_empty();
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (1..=9).contains(&digits)
        && t[digits..].starts_with(['.', ')'])
        && t[digits + 1..].starts_with(' ')
        && !t[digits + 1..].trim().is_empty()
}

fn has_link(t: &str) -> bool {
    // `[text](target` or a reference definition `[label]: target`.
    t.match_indices("](")
        .any(|(i, _)| t[..i].contains('[') && !t[i + 2..].starts_with(' '))
        || (t.starts_with('[') && t.contains("]: "))
}

fn is_table_rule(t: &str) -> bool {
    let t = t.trim_end();
    t.contains('|') && t.contains("---") && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn is_setext_rule(t: &str) -> bool {
    let t = t.trim_end();
    t.len() >= 3 && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

fn has_emphasis(t: &str) -> bool {
    let pairs = |d: &str| {
        t.match_indices(d)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
            .chunks_exact(2)
            .any(|p| p[1] > p[0] + d.len() && !t[p[0] + d.len()..].starts_with(' '))
    };
    pairs("**") || pairs("__") || pairs("`")
}

fn sniff(probe: &Probe<'_>) -> u8 {
    let Some(detected) = decode::detect(probe.bytes) else {
        return 0;
    };
    // JSON, XML and HTML score higher when they apply; Markdown's best is below theirs.
    let head = detected.head_trimmed();
    let signals = signals(head);
    let starts_with_heading = is_atx_heading(head);
    match signals {
        Signals { strong, lines, .. } if strong >= 2 && lines >= 4 => 75,
        Signals {
            strong,
            weak,
            lines,
            ..
        } if strong + weak >= 2 && strong >= 1 && lines >= 3 => 40,
        Signals { table: true, .. } => 40,
        Signals { lines, .. } if starts_with_heading && lines >= 2 => 40,
        // List items and quotes alone are plain text's too: leave those files to `text`.
        _ => 0,
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "markdown",
        version: 1,
        media_type: "text/markdown",
        sniff,
        make: || Box::new(Markdown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{capped, detect, text};

    const DOC: &str = "---\ntitle: Notes\n---\n\n# Heading *one*\n\nSome **bold** text with a \
        [link](https://example.com) and `code`.\nSecond line.\n\n- item one\n- item two\n  \
        1. nested\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| c | d |\n\n\
        > quoted\n\n<div>raw <b>html</b></div>\n";

    #[test]
    fn markdown_is_recognised_by_its_syntax() {
        assert_eq!(detect(DOC.as_bytes()), Some("markdown"));
        assert_eq!(
            detect(b"# Title\n\nSome text.\n\n## More\n"),
            Some("markdown")
        );
        assert_eq!(
            detect(b"A plain note.\nNothing special here.\n"),
            Some("text")
        );
    }

    #[test]
    fn markdown_text_without_markup() {
        assert_eq!(
            text("markdown", DOC.as_bytes()),
            "title: Notes\nHeading one\nSome bold text with a link and code. Second line.\n\
             item one\nitem two\nnested\nfn main() {}\na\tb\nc\td\nquoted\nraw  html\n"
        );
    }

    #[test]
    fn big_documents_are_parsed_in_pieces_and_stop_at_the_cap() {
        let block =
            "## Section\n\nA paragraph of *text* that goes on.\n\n```\ncode\n\nmore code\n```\n\n";
        let doc = block.repeat(3 * PIECE_BYTES / block.len());
        let parts: Vec<&str> = pieces(&doc).collect();
        assert!(parts.len() >= 3);
        assert_eq!(parts.concat(), doc);
        assert!(parts.iter().all(|p| p.matches("```").count() % 2 == 0));
        let (out, full) = capped("markdown", doc.as_bytes(), 10_000);
        assert!(full);
        assert_eq!(out.chars().count(), 10_000);
        assert!(pieces(&"x".repeat(PIECE_HARD_BYTES + 10)).count() == 2);
    }
}

#[cfg(test)]
mod pathological {
    use crate::testutil::run;

    #[test]
    fn pathological_inputs_finish_quickly() {
        let cases = [
            ">".repeat(200_000),
            "[".repeat(200_000),
            "*a ".repeat(100_000),
            "- ".repeat(100_000),
            format!("{}x{}", "[a](".repeat(50_000), ")".repeat(50_000)),
            "`".repeat(200_000),
            "<".repeat(200_000),
            "  - a\n".repeat(50_000),
        ];
        for case in cases {
            let started = std::time::Instant::now();
            let _ = run("markdown", case.as_bytes());
            let took = started.elapsed();
            assert!(took.as_secs() < 3, "{:?}: {took:?}", &case[..10]);
        }
    }
}
