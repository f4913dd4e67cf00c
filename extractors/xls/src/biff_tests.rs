//! Tests of `biff.rs` (a child module of it, so they read its private items).

use super::*;

fn rec(typ: u16, data: &[u8]) -> Vec<u8> {
    let mut out = typ.to_le_bytes().to_vec();
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn chart_caches_give_a_line_per_point_and_a_column_per_series() {
    let number = |row: u16, col: u16, v: f64| {
        let mut d = [row.to_le_bytes(), col.to_le_bytes(), [0, 0]].concat();
        d.extend_from_slice(&v.to_le_bytes());
        rec(NUMBER, &d)
    };
    let label8 = |row: u16, col: u16, text: &str| {
        let mut d = [row.to_le_bytes(), col.to_le_bytes(), [0, 0]].concat();
        d.extend_from_slice(&(text.len() as u16).to_le_bytes());
        d.push(0);
        d.extend_from_slice(text.as_bytes());
        rec(LABEL, &d)
    };
    // Category labels (`SIIndex` 2), then the values of two series (`SIIndex` 1), written
    // out of order; a short record and an empty label are left out.
    let stream = [
        rec(SIINDEX, &2u16.to_le_bytes()),
        label8(0, 0, "North"),
        label8(1, 0, "South"),
        label8(2, 0, " "),
        rec(SIINDEX, &1u16.to_le_bytes()),
        number(1, 0, 2.5),
        number(0, 1, 30.0),
        number(0, 0, 1.0),
        number(1, 1, 40.0),
        rec(NUMBER, &[1, 0]),
    ]
    .concat();
    let recs = records(&stream);
    let text = chart_cache_text(recs.iter().copied(), &stream, true, None);
    assert_eq!(text.as_deref(), Some("North\nSouth\n1\t30\n2.5\t40"));
    // BIFF5 labels are in the workbook's code page.
    let mut d = [0u16.to_le_bytes(), 0u16.to_le_bytes(), [0, 0]].concat();
    d.extend_from_slice(&2u16.to_le_bytes());
    d.extend_from_slice(&[0xEB, 0xE0]);
    let stream = rec(LABEL, &d);
    let recs = records(&stream);
    let cp1251 = Some(encoding_rs::WINDOWS_1251);
    let text = chart_cache_text(recs.iter().copied(), &stream, false, cp1251);
    assert_eq!(text.as_deref(), Some("ла"));
    assert_eq!(chart_cache_text(std::iter::empty(), &[], true, None), None);
}

#[test]
fn page_sections_drop_codes_and_keep_text() {
    assert_eq!(
        page_sections("&LLeft Header&RHippo2000"),
        vec!["Left Header", "Hippo2000"]
    );
    assert_eq!(
        page_sections("&L&P/&N&CCHECK FOR HEADER&R&F &A"),
        vec!["CHECK FOR HEADER"]
    );
    assert_eq!(
        page_sections("&C&\"Times New Roman,Regular\"&12&A"),
        Vec::<String>::new()
    );
    assert_eq!(
        page_sections("&CR&&D &KFF0000red&K01+000 x &B&Ibold"),
        vec!["R&D red x bold"]
    );
    // Cut short anywhere: no panic, no code shown.
    let raw = "&L&\"Arial,Bold\"&14Plan&C&K00FF00Q3";
    for end in (0..=raw.len()).filter(|&i| raw.is_char_boundary(i)) {
        for s in page_sections(&raw[..end]) {
            assert!(!s.contains('&') && !s.contains("Arial"), "{s:?}");
        }
    }
}

#[test]
fn text_box_text_is_read_from_its_continue_records() {
    // A TxO record: cchText at offset 10 (5 characters), cbRuns 16.
    let mut txo = vec![0u8; 18];
    txo[10] = 5;
    txo[12] = 16;
    let runs = [0u8; 16];
    // BIFF8: compressed, then the rest in UTF-16 in a second Continue; the formatting
    // runs after the text are not read as text.
    let utf16: Vec<u8> = [&[1u8][..], &[0x3B, 0x04, b'!', 0]].concat();
    let text = txo_text(&txo, &[&[0, b'a', b'\r', b'\n'], &utf16, &runs], true, None);
    assert_eq!(text.as_deref(), Some("a\nл!"));
    // Cut short with its records: what is there.
    assert_eq!(
        txo_text(&txo, &[&[0, b'h', b'i']], true, None).as_deref(),
        Some("hi")
    );
    assert_eq!(txo_text(&txo, &[&[1, 0x41]], true, None), None);
    assert_eq!(txo_text(&txo, &[&[]], true, None), None);
    assert_eq!(txo_text(&txo[..11], &[&[0, b'x']], true, None), None);
    // BIFF5: bytes in the workbook's code page, no flags byte.
    let cp1251 = Some(encoding_rs::WINDOWS_1251);
    assert_eq!(
        txo_text(
            &txo,
            &[&[0xCF, 0xF0, 0xE8], &[0xE2, 0xE5, b'!']],
            false,
            cp1251
        )
        .as_deref(),
        Some("Приве")
    );
    // No characters: no text.
    txo[10] = 0;
    assert_eq!(txo_text(&txo, &[&[0, b'a']], true, None), None);
}

#[test]
fn chart_text_is_read_from_series_text_records() {
    // Reserved, cch, flags, characters.
    let latin1 = [&[0, 0, 3, 0][..], b"Q3!"].concat();
    assert_eq!(series_text(&latin1, true, None).as_deref(), Some("Q3!"));
    let utf16 = [0, 0, 2, 1, 0x3B, 0x04, 0x30, 0x04];
    assert_eq!(series_text(&utf16, true, None).as_deref(), Some("ла"));
    // Cut short: what is there; a count past the end is not read beyond it.
    assert_eq!(series_text(&latin1[..5], true, None).as_deref(), Some("Q"));
    assert_eq!(series_text(&latin1[..3], true, None), None);
    assert_eq!(series_text(&[0, 0, 2, 0, b' ', b' '], true, None), None);
    // BIFF5: a count and bytes in the code page.
    let biff5 = [0, 0, 2, 0xEB, 0xE0];
    let cp1251 = Some(encoding_rs::WINDOWS_1251);
    assert_eq!(series_text(&biff5, false, cp1251).as_deref(), Some("ла"));
}

#[test]
fn shared_string_tables_that_would_panic_calamine_are_found() {
    // cstTotal, cstUnique, then "ab" compressed.
    let good = [&[1, 0, 0, 0, 1, 0, 0, 0][..], &[2, 0, 0, b'a', b'b']].concat();
    assert!(sst_ok(&good, &[]));
    // The string continues in a Continue record that starts with its flags byte.
    let split = [&[1, 0, 0, 0, 1, 0, 0, 0][..], &[2, 0, 0, b'a']].concat();
    assert!(sst_ok(&split, &[&[0, b'b']]));
    // ... but an empty Continue record there would make calamine index an empty slice.
    assert!(!sst_ok(&split, &[&[]]));
    // A rich string whose run count is cut off.
    let rich = [&[1, 0, 0, 0, 1, 0, 0, 0][..], &[2, 0, 0x8, 1]].concat();
    assert!(!sst_ok(&rich, &[]));
    assert!(!sst_ok(&[0; 4], &[]));
}

/// A workbook stream: the globals (a BOUNDSHEET per sheet is added in front, pointing at
/// it) and the sheets' records.
fn workbook(globals: &[Vec<u8>], sheets: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let bound_len = 4 + 9;
    let mut body: Vec<u8> = globals.concat();
    body.extend(rec(EOF, &[]));
    let mut at = bound_len * sheets.len() + body.len();
    let mut out = Vec::new();
    for (i, sheet) in sheets.iter().enumerate() {
        let mut data = (at as u32).to_le_bytes().to_vec();
        data.extend([0, 0, 1, 0, b'A' + i as u8]);
        out.extend(rec(BOUNDSHEET, &data));
        at += sheet.iter().map(Vec::len).sum::<usize>();
    }
    out.extend(body);
    for sheet in sheets {
        out.extend(sheet.concat());
    }
    out
}

#[test]
fn dangerous_records_are_neutralized_and_formats_collected() {
    let mut number = vec![1, 0, 2, 0, 1, 0];
    number.extend(1.5f64.to_le_bytes());
    let sheet = vec![
        rec(BOF, &[0, 6, 0x10, 0]),
        rec(DIMENSIONS, &[0xFF; 14]),
        // The last column is before the first: calamine would overflow.
        rec(MULRK, &[0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 4, 0]),
        rec(NUMBER, &number),
        rec(LABEL, &[0, 0, 0, 0]),
        rec(EOF, &[]),
    ];
    let globals = [
        rec(BOF, &[0, 6, 5, 0]),
        rec(LBL, &[0; 3]),
        rec(XF, &[0, 0, 9, 0]),
        rec(XF, &[0, 0, 164, 0]),
        rec(FORMAT, &[164, 0, 4, 0, 0, b'0', b'.', b'0', b'0']),
    ];
    let book = vet(&workbook(&globals, &[sheet])).unwrap();
    let types: Vec<u16> = records(&book.stream).iter().map(|r| r.typ).collect();
    assert_eq!(
        types,
        [
            BOUNDSHEET, BOF, NEUTRAL, XF, XF, FORMAT, EOF, BOF, NEUTRAL, NEUTRAL, NUMBER, NEUTRAL,
            EOF
        ]
    );
    assert_eq!(book.format_code(0, 1, 2), Some((164, "0.00")));
    assert_eq!(book.format_code(0, 0, 0), None);
    assert_eq!(book.grid_cells, 1);
    assert!(book.biff8);

    // A sheet pointing into the middle of a record is dropped.
    let mut stream = workbook(&[rec(BOF, &[0, 6, 5, 0])], &[vec![rec(EOF, &[])]]);
    stream[4] += 1;
    let book = vet(&stream).unwrap();
    assert!(book.cell_xfs.is_empty());

    let encrypted = workbook(&[rec(BOF, &[0, 6, 5, 0]), rec(FILEPASS, &[1, 0])], &[]);
    assert!(matches!(
        vet(&encrypted),
        Err(ExtractError::Unsupported(m)) if m.starts_with("encrypted")
    ));
}
