//! Whitespace collapsing for text read from markup: runs of spaces, tabs and newlines become one
//! space, whitespace between text nodes separates words, and a word split across nodes stays
//! joined.

use std::borrow::Cow;

use inlet_core::extract::{ExtractError, TextSink};

/// Collapsed text is pushed in pieces of about this many bytes, so that a huge text node still
/// stops at the output cap early.
const FLUSH_BYTES: usize = 8 * 1024;

/// Whitespace state between the text nodes of one document.
#[derive(Debug, Default)]
pub struct Words {
    /// Whitespace was seen since the last word: the next word is preceded by a space.
    pending_space: bool,
    /// Reused buffer, so a text node costs a few sink calls rather than one per word.
    buf: String,
}

impl Words {
    /// Writes `text` with its whitespace collapsed.
    pub fn text(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        self.text_with(sink, text, |word| Cow::Borrowed(word))
    }

    /// [`Words::text`], with `clean` applied to every word (e.g. to blank out control
    /// characters).
    pub fn text_with(
        &mut self,
        sink: &mut TextSink,
        text: &str,
        clean: fn(&str) -> Cow<'_, str>,
    ) -> Result<(), ExtractError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let result = self.collapse(sink, text, clean, &mut buf);
        self.buf = buf;
        result
    }

    fn collapse(
        &mut self,
        sink: &mut TextSink,
        text: &str,
        clean: fn(&str) -> Cow<'_, str>,
        buf: &mut String,
    ) -> Result<(), ExtractError> {
        for (i, word) in text.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.pending_space = true;
            }
            if word.is_empty() {
                continue;
            }
            if self.pending_space {
                self.pending_space = false;
                // The buffer continues the sink's text: the same rule as `TextSink::space`.
                if buf.is_empty() {
                    sink.space()?;
                } else if !buf.ends_with(char::is_whitespace) {
                    buf.push(' ');
                }
            }
            buf.push_str(&clean(word));
            if buf.len() >= FLUSH_BYTES {
                sink.push(buf)?;
                buf.clear();
            }
        }
        if buf.is_empty() {
            Ok(())
        } else {
            sink.push(buf)
        }
    }

    /// Separates words, as whitespace in the source would.
    pub fn space(&mut self) {
        self.pending_space = true;
    }

    /// Forgets a pending word separator (literal text follows).
    pub fn cancel_space(&mut self) {
        self.pending_space = false;
    }

    /// Writes a pending word separator now (before text written as is).
    pub fn write_pending_space(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if self.pending_space {
            sink.space()?;
            self.pending_space = false;
        }
        Ok(())
    }

    /// Ends the current line.
    pub fn line_break(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        sink.line_break()
    }

    /// Separates table cells on one line with a tab (none at the start of a line).
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

    fn sink() -> TextSink {
        TextSink::new(&Limits::default())
    }

    #[test]
    fn whitespace_collapses_and_split_words_stay_joined() {
        let mut sink = sink();
        let mut w = Words::default();
        w.text(&mut sink, "  one \n\t two").unwrap();
        w.text(&mut sink, "-three ").unwrap();
        w.text(&mut sink, "four").unwrap();
        w.line_break(&mut sink).unwrap();
        w.text(&mut sink, "   ").unwrap();
        w.text(&mut sink, " five").unwrap();
        w.cell(&mut sink).unwrap();
        w.text(&mut sink, "six").unwrap();
        w.space();
        w.cancel_space();
        w.text(&mut sink, "seven").unwrap();
        assert_eq!(sink.as_str(), "one two-three four\nfive\tsixseven");
    }

    #[test]
    fn cleaned_words_are_separated_as_if_pushed_one_by_one() {
        fn blank_controls(word: &str) -> Cow<'_, str> {
            word.replace(|c: char| c.is_control(), " ").into()
        }
        let mut sink = sink();
        let mut w = Words::default();
        w.text_with(&mut sink, "a \u{1} b\u{1}c \u{1}", blank_controls)
            .unwrap();
        w.text_with(&mut sink, " d", blank_controls).unwrap();
        assert_eq!(sink.as_str(), "a  b c  d");
    }

    #[test]
    fn a_huge_text_node_reads_the_same_and_stops_at_the_cap() {
        let node = "word  ".repeat(10_000);
        let mut whole = sink();
        Words::default().text(&mut whole, &node).unwrap();
        assert_eq!(whole.as_str(), "word ".repeat(10_000).trim_end());
        let mut capped = TextSink::new(&Limits {
            max_chars: 100,
            ..Limits::default()
        });
        let result = Words::default().text(&mut capped, &node);
        assert!(matches!(result, Err(ExtractError::Full)));
        assert_eq!(capped.as_str(), &whole.as_str()[..100]);
    }

    #[test]
    fn a_pending_space_is_written_before_literal_text() {
        let mut sink = sink();
        let mut w = Words::default();
        w.text(&mut sink, "pre ").unwrap();
        w.write_pending_space(&mut sink).unwrap();
        sink.push("formatted").unwrap();
        w.write_pending_space(&mut sink).unwrap();
        assert_eq!(sink.as_str(), "pre formatted");
    }
}
