//! Generated code, kept apart from the hand-written modules. `tables.rs` is written by
//! `scripts/gen_tables.py` (with its SHA-256 in `tables.rs.sha256`); regenerate it rather than
//! edit it.

mod tables;

pub(crate) use tables::{
    GLYPH_LIST, MAC_GLYPH_ORDER, MAC_ROMAN, PDF_DOC, STANDARD, STD14_WIDTHS, WIN_ANSI,
};

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn the_tables_are_what_the_generator_wrote() {
        let digest = Sha256::digest(include_bytes!("tables.rs"));
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            include_str!("tables.rs.sha256").trim(),
            "src/generated/tables.rs differs from the generator's output: regenerate it with \
             `python3 extractors/pdf/scripts/gen_tables.py` rather than edit it"
        );
    }

    #[test]
    fn the_tables_are_sorted_where_they_are_searched() {
        assert!(
            GLYPH_LIST
                .windows(2)
                .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes())
        );
        assert!(STD14_WIDTHS.iter().any(|(font, _)| *font == "Times-Roman"));
        for (font, widths) in STD14_WIDTHS {
            assert!(widths.windows(2).all(|w| w[0].0 < w[1].0), "{font}");
        }
        assert_eq!(MAC_GLYPH_ORDER[3], "space");
        for table in [&STANDARD, &MAC_ROMAN, &WIN_ANSI, &PDF_DOC] {
            assert_eq!(table[usize::from(b'A')], "A");
        }
    }
}
