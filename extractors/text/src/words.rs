//! Writing markup text into a sink with whitespace collapsed: runs of spaces, tabs and newlines
//! inside a text node become one space, and block boundaries become line breaks. The collapsing
//! is `inlet-extract-support`'s; control characters are blanked out here.

use inlet_core::extract::{ExtractError, TextSink};

use crate::decode;

/// Whitespace state between pieces of text written to a sink.
#[derive(Debug, Default)]
pub(crate) struct Words(inlet_extract_support::words::Words);

impl Words {
    /// Writes `text` with its whitespace collapsed; words split across calls stay joined.
    pub fn text(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        self.0.text_with(sink, text, decode::without_controls)
    }

    /// Writes `text` keeping its line breaks (preformatted text); CR is dropped.
    pub fn preformatted(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        self.0.write_pending_space(sink)?;
        let text = decode::without_controls(text);
        if text.contains('\r') {
            sink.push(&text.replace("\r\n", "\n").replace('\r', "\n"))
        } else {
            sink.push(&text)
        }
    }

    /// Separates words (as whitespace in the source would).
    pub fn space(&mut self) {
        self.0.space();
    }

    /// Ends the current line.
    pub fn line_break(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.0.line_break(sink)
    }

    /// Separates table cells on one line with a tab.
    pub fn cell(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.0.cell(sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inlet_core::extract::Limits;

    #[test]
    fn collapses_whitespace_and_keeps_split_words_joined() {
        let mut sink = TextSink::new(&Limits::default());
        let mut w = Words::default();
        w.text(&mut sink, "  one \n\t two").unwrap();
        w.text(&mut sink, "-three ").unwrap();
        w.text(&mut sink, "four").unwrap();
        w.line_break(&mut sink).unwrap();
        w.text(&mut sink, "   ").unwrap();
        w.text(&mut sink, " five").unwrap();
        w.cell(&mut sink).unwrap();
        w.text(&mut sink, "six").unwrap();
        assert_eq!(sink.as_str(), "one two-three four\nfive\tsix");
    }
}
