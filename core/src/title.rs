//! Record titles from uploaded file names (spec 2.4).

use unicode_normalization::UnicodeNormalization;

/// Normalizes an uploaded file name into a record title.
///
/// The name is decomposed (NFKD) so accents split off their letters, every non-ASCII character is
/// dropped, and each run of characters other than ASCII letters, digits, `-`, `_`, `.` and `'`
/// becomes a single `_`.
pub fn normalize_title(file_name: &str) -> String {
    let mut out = String::with_capacity(file_name.len());
    let mut in_run = false;
    for c in file_name.nfkd().filter(char::is_ascii) {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '\'') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize_title;

    #[test]
    fn spec_examples_and_edges() {
        let cases = [
            ("report.pdf", "report.pdf"),
            ("My Report (final).pdf", "My_Report_final_.pdf"),
            ("Résumé été.docx", "Resume_ete.docx"),
            ("a  b\t(c).txt", "a_b_c_.txt"),
            ("l'été-2026_v2.txt", "l'ete-2026_v2.txt"),
            ("日本語.pdf", ".pdf"),
            ("日本 語.pdf", "_.pdf"),
            ("ﬁle.txt", "file.txt"),
            ("a/b\\c.txt", "a_b_c.txt"),
            ("100% done!.md", "100_done_.md"),
            ("", ""),
            ("   ", "_"),
            ("Ærø.txt", "r.txt"),
            ("naïve café.html", "naive_cafe.html"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize_title(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn dropped_characters_do_not_split_a_run() {
        // The non-ASCII character is dropped first, so the spaces around it form one run.
        assert_eq!(normalize_title("a ✓ b"), "a_b");
    }
}
