//! Writing markup text into a sink with whitespace collapsed: runs of spaces, tabs and newlines
//! inside a text node become one space, and block boundaries become line breaks.

use inlet_core::extract::{ExtractError, TextSink};

use crate::decode;

/// Whitespace state between pieces of text written to a sink.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// Whitespace was seen since the last word: the next word is preceded by a space.
    pending_space: bool,
}

impl Words {
    /// Writes `text` with its whitespace collapsed; words split across calls stay joined.
    pub fn text(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        for (i, word) in text.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.pending_space = true;
            }
            if word.is_empty() {
                continue;
            }
            if self.pending_space {
                sink.space()?;
                self.pending_space = false;
            }
            sink.push(&decode::without_controls(word))?;
        }
        Ok(())
    }

    /// Writes `text` keeping its line breaks (preformatted text); CR is dropped.
    pub fn preformatted(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        if self.pending_space {
            sink.space()?;
            self.pending_space = false;
        }
        let text = decode::without_controls(text);
        if text.contains('\r') {
            sink.push(&text.replace("\r\n", "\n").replace('\r', "\n"))
        } else {
            sink.push(&text)
        }
    }

    /// Separates words (as whitespace in the source would).
    pub fn space(&mut self) {
        self.pending_space = true;
    }

    /// Ends the current line.
    pub fn line_break(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        sink.line_break()
    }

    /// Separates table cells on one line with a tab.
    pub fn cell(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        let text = sink.as_str();
        if text.is_empty() || text.ends_with(['\n', '\t']) {
            return Ok(());
        }
        sink.push("\t")
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
