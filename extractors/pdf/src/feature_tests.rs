//! Behaviour on small generated PDFs: word spacing from positions and kerning, line breaks,
//! encodings (WinAnsi, `/Differences`, glyph names), ligatures, ToUnicode CMaps with Type0
//! fonts, form XObjects, object streams, inline images, bookmarks and detection.

use inlet_core::extract::Probe;
use inlet_extract_testkit::text;

use crate::testutil::{build_pdf, deflate, one_page, stream};

#[test]
fn words_are_spaced_by_position_and_lines_by_baseline() {
    let pdf = one_page(
        b"BT /F1 12 Tf 72 700 Td [(Hello) -300 (W) 80 (orld) -400 (again)] TJ \
          0 -14 Td (Next line) Tj ET",
        &[],
    );
    assert_eq!(text("pdf", &pdf), "Hello World again\nNext line\n");
}

#[test]
fn glyph_by_glyph_placement_still_makes_words() {
    let pdf = one_page(
        b"BT /F1 10 Tf 1 0 0 1 100 500 Tm (a) Tj 1 0 0 1 105.56 500 Tm (b) Tj \
          1 0 0 1 115 500 Tm (c) Tj ET",
        &[],
    );
    assert_eq!(text("pdf", &pdf), "ab c\n");
}

#[test]
fn winansi_and_differences_decode_non_ascii() {
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << \
          /F1 << /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding /WinAnsiEncoding >> \
          /F2 << /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding \
             << /BaseEncoding /MacRomanEncoding /Differences [1 /fi /uni20AC /Gamma] >> >> \
          >> >> >>"
            .to_vec(),
        stream(
            "",
            b"BT /F1 12 Tf 72 700 Td (Caf\xe9 \x80) Tj 0 -20 Td /F2 12 Tf (\x01nal \x8a\x02\x03) Tj ET",
        ),
    ]);
    assert_eq!(text("pdf", &pdf), "Café €\nfinal ä€Γ\n");
}

#[test]
fn type0_fonts_use_their_to_unicode_cmap() {
    let cmap = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap \
        1 begincodespacerange <0000> <FFFF> endcodespacerange \
        2 beginbfchar <0001> <0041> <0002> <00660066> endbfchar \
        1 beginbfrange <0010> <0012> <03B1> endbfrange endcmap end end";
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream("", b"BT /F1 10 Tf 72 700 Td <0001000200100011 0012> Tj ET"),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H \
          /DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /DW 500 >>] /ToUnicode 6 0 R >>"
            .to_vec(),
        stream("/Filter /FlateDecode", &deflate(cmap)),
    ]);
    assert_eq!(text("pdf", &pdf), "Affαβγ\n");
}

#[test]
fn ligature_glyphs_are_spelled_out() {
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << \
          /F1 << /Type /Font /Subtype /Type1 /BaseFont /Foo /Encoding << /Differences [12 /fi 13 /ffl] >> >> \
          >> >> >>"
            .to_vec(),
        stream("", b"BT /F1 12 Tf 72 700 Td (\x0cnd wa\x0de) Tj ET"),
    ]);
    assert_eq!(text("pdf", &pdf), "find waffle\n");
}

#[test]
fn form_xobjects_and_inline_images_are_handled() {
    let form = stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 500 500] \
         /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Courier >> >> >>",
        b"BT /F1 12 Tf 72 600 Td (in a form) Tj ET",
    );
    let pdf = one_page(
        b"BT /F1 12 Tf 72 700 Td (before) Tj ET \
          BI /W 2 /H 2 /BPC 8 /CS /G ID \x00EI\xff\x10 EI \
          /X1 Do BT /F1 12 Tf 72 500 Td (after) Tj ET",
        &[form],
    );
    assert_eq!(text("pdf", &pdf), "before\nin a form\nafter\n");
}

#[test]
fn object_streams_and_xref_streams_are_read() {
    // Objects 2 and 3 live in object stream 5; the xref is a stream (object 6).
    let pages = "<< /Type /Pages /Kids [3 0 R] /Count 1 >> ";
    let page = "<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << \
        /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>";
    let header = format!("2 0 3 {} ", pages.len());
    let objstm_body = format!("{header}{pages}{page}");
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    let mut push = |out: &mut Vec<u8>, num: usize, body: &[u8]| {
        offsets.push((num, out.len()));
        out.extend_from_slice(format!("{num} 0 obj\n").as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    };
    push(&mut out, 1, b"<< /Type /Catalog /Pages 2 0 R >>");
    push(
        &mut out,
        4,
        &stream("", b"BT /F1 12 Tf 72 700 Td (compressed objects) Tj ET"),
    );
    push(
        &mut out,
        5,
        &stream(
            &format!(
                "/Type /ObjStm /N 2 /First {} /Filter /FlateDecode",
                header.len()
            ),
            &deflate(objstm_body.as_bytes()),
        ),
    );
    let xref_at = out.len();
    let mut rows = vec![0u8, 0, 0, 0];
    let off = |n: usize| offsets.iter().find(|(k, _)| *k == n).unwrap().1 as u16;
    for row in [
        [1, off(1).to_be_bytes()[0], off(1).to_be_bytes()[1], 0],
        [2, 0, 5, 0],
        [2, 0, 5, 1],
        [1, off(4).to_be_bytes()[0], off(4).to_be_bytes()[1], 0],
        [1, off(5).to_be_bytes()[0], off(5).to_be_bytes()[1], 0],
        [1, (xref_at >> 8) as u8, xref_at as u8, 0],
    ] {
        rows.extend_from_slice(&row);
    }
    out.extend_from_slice(b"6 0 obj\n");
    out.extend_from_slice(&stream(
        "/Type /XRef /Size 7 /W [1 2 1] /Root 1 0 R /Filter /FlateDecode",
        &deflate(&rows),
    ));
    out.extend_from_slice(format!("\nendobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    assert_eq!(text("pdf", &out), "compressed objects\n");
}

#[test]
fn bookmarks_follow_the_pages() {
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R /Outlines 5 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font \
          /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
            .to_vec(),
        stream("", b"BT /F1 12 Tf 72 700 Td (Body) Tj ET"),
        b"<< /Type /Outlines /First 6 0 R >>".to_vec(),
        b"<< /Title (Chapter One) /Next 7 0 R /First 8 0 R >>".to_vec(),
        b"<< /Title <FEFF004300680061007000740065007200200054007700F6> /Next 6 0 R >>".to_vec(),
        b"<< /Title (Section) >>".to_vec(),
    ]);
    assert_eq!(
        text("pdf", &pdf),
        "Body\nChapter One\nSection\nChapter Twö\n"
    );
}

#[test]
fn rotated_text_keeps_its_words() {
    let pdf = one_page(
        b"BT /F1 12 Tf 0 1 -1 0 30 100 Tm (Vertical words here) Tj ET",
        &[],
    );
    assert_eq!(text("pdf", &pdf), "Vertical words here\n");
}

#[test]
fn detection_looks_for_the_header_in_the_first_kilobyte() {
    let sniff = |bytes: &[u8]| {
        crate::sniff(&Probe {
            bytes,
            entries: &[],
        })
    };
    assert!(sniff(b"%PDF-1.4\n") > 0);
    let mut junk = vec![b' '; 1000];
    junk.extend_from_slice(b"%PDF-1.4");
    assert!(sniff(&junk) > 0);
    let mut far = vec![b' '; 1024];
    far.extend_from_slice(b"%PDF-1.4");
    assert_eq!(sniff(&far), 0);
    assert_eq!(sniff(b""), 0);
    assert_eq!(sniff(b"PK\x03\x04 %PD"), 0);
}

#[test]
fn junk_before_the_header_shifts_offsets() {
    let mut pdf = b"garbage before the header\n".to_vec();
    pdf.extend_from_slice(&one_page(b"BT /F1 12 Tf 72 700 Td (Shifted) Tj ET", &[]));
    assert_eq!(text("pdf", &pdf), "Shifted\n");
}

#[test]
fn annotation_appearances_are_drawn_unless_hidden() {
    let font =
        "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Courier >> >> >>";
    let appearance = |word: &str| {
        stream(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 100 20] {font}"),
            format!("BT /F1 10 Tf 2 5 Td ({word}) Tj ET").as_bytes(),
        )
    };
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Annots [5 0 R 6 0 R 7 0 R 8 0 R 13 0 R] >>"
            .to_vec(),
        stream("", b""),
        // Shown: a stamp, a check box in its /AS state (the other state is not drawn).
        b"<< /Type /Annot /Subtype /Stamp /Rect [100 700 300 740] /AP << /N 9 0 R >> >>".to_vec(),
        b"<< /Type /Annot /Subtype /Widget /Rect [100 600 200 620] /AS /On \
          /AP << /N << /On 10 0 R /Off 11 0 R >> >> >>"
            .to_vec(),
        // Hidden (flag 2) and NoView (flag 32).
        b"<< /Type /Annot /Subtype /Stamp /F 2 /Rect [100 500 200 520] /AP << /N 12 0 R >> >>"
            .to_vec(),
        b"<< /Type /Annot /Subtype /Stamp /F 32 /Rect [100 400 200 420] /AP << /N 12 0 R >> >>"
            .to_vec(),
        appearance("stamped"),
        appearance("checked"),
        appearance("unchecked"),
        appearance("hidden"),
        // An appearance that draws itself is cut, not followed for ever.
        b"<< /Type /Annot /Subtype /Stamp /Rect [100 300 200 320] /AP << /N 14 0 R >> >>".to_vec(),
        stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 100 20] \
                 /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Courier >> >> \
                 /XObject << /Me 14 0 R >> >>",
            b"BT /F1 10 Tf 2 5 Td (loop) Tj ET /Me Do",
        ),
    ];
    let pdf = build_pdf(&objects);
    let (_, text) = crate::testutil::run(&pdf);
    assert_eq!(text, "stamped\nchecked\nloop\n");
}

#[test]
fn annotations_without_appearances_show_their_text_as_viewers_draw_it() {
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R 9 0 R] >> >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Annots [5 0 R 7 0 R 8 0 R 10 0 R 11 0 R 12 0 R] >>"
            .to_vec(),
        stream("", b""),
        // A free-text note of two lines.
        b"<< /Type /Annot /Subtype /FreeText /Rect [100 700 300 740] /DA (/Helv 9 Tf 0 g) \
          /Contents (Call back\\rbefore noon) >>"
            .to_vec(),
        // A text field whose value and type its parent holds, and its widget.
        b"<< /FT /Tx /T (name) /V (Ada Lovelace) /Kids [7 0 R] >>".to_vec(),
        b"<< /Type /Annot /Subtype /Widget /Parent 6 0 R /Rect [100 600 300 620] >>".to_vec(),
        // A choice field's selected values (UTF-16 text strings).
        b"<< /Type /Annot /Subtype /Widget /FT /Ch /Rect [100 500 300 520] \
          /V [<FEFF004F0073006C006F> (Bergen)] >>"
            .to_vec(),
        b"<< /FT /Btn /T (agree) /V /Yes /Kids [10 0 R] >>".to_vec(),
        // Not text on the page: a check box's state, a note's pop-up, a hidden field.
        b"<< /Type /Annot /Subtype /Widget /Parent 9 0 R /Rect [100 400 120 420] >>".to_vec(),
        b"<< /Type /Annot /Subtype /Text /Rect [100 300 120 320] /Contents (popup) >>".to_vec(),
        b"<< /Type /Annot /Subtype /Widget /FT /Tx /F 2 /V (secret) /Rect [100 200 300 220] >>"
            .to_vec(),
    ];
    let pdf = build_pdf(&objects);
    let (_, text) = crate::testutil::run(&pdf);
    assert_eq!(text, "Call back\nbefore noon\nAda Lovelace\nOslo\nBergen\n");
}
