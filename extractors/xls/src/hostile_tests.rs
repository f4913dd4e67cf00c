//! Generated BIFF8 workbooks and hostile inputs: empty, random and truncated files, records that
//! make `calamine` panic or allocate without the checks of `biff`, cell grids far over the
//! budget, sheets without end records, output far over the cap. Every case must finish fast and
//! never panic.

use std::{
    fs,
    io::{Cursor, Write},
    path::Path,
    time::Instant,
};

use inlet_core::extract::{ExtractError, Limits};
use inlet_extract_testkit::{
    capped, check_damage, check_decompression_cap, check_output_cap, detect, documents_in, noise,
    run, run_with, survives, text,
};

/// One BIFF record.
fn rec(typ: u16, data: &[u8]) -> Vec<u8> {
    let mut out = typ.to_le_bytes().to_vec();
    out.extend_from_slice(&(data.len() as u16).to_le_bytes());
    out.extend_from_slice(data);
    out
}

fn bof(dt: u16) -> Vec<u8> {
    let mut data = 0x0600u16.to_le_bytes().to_vec();
    data.extend(dt.to_le_bytes());
    data.extend([0; 12]);
    rec(0x0809, &data)
}

fn eof() -> Vec<u8> {
    rec(0x000A, &[])
}

/// A `LabelSst` cell pointing at shared string `index`.
fn label_sst(row: u16, col: u16, index: u32) -> Vec<u8> {
    let mut data = row.to_le_bytes().to_vec();
    data.extend(col.to_le_bytes());
    data.extend(15u16.to_le_bytes());
    data.extend(index.to_le_bytes());
    rec(0x00FD, &data)
}

/// A `Number` cell.
fn number(row: u16, col: u16, value: f64) -> Vec<u8> {
    let mut data = row.to_le_bytes().to_vec();
    data.extend(col.to_le_bytes());
    data.extend(15u16.to_le_bytes());
    data.extend(value.to_le_bytes());
    rec(0x0203, &data)
}

/// A BIFF8 workbook stream: `sheets` (a name and the records between the sheet's BOF and EOF),
/// the shared strings `sst`, and `globals` records added after the BOF.
fn stream(globals: &[Vec<u8>], sst: &[&str], sheets: &[(&str, Vec<Vec<u8>>)]) -> Vec<u8> {
    let mut body = globals.concat();
    if !sst.is_empty() {
        let mut data = (sst.len() as u32).to_le_bytes().to_vec();
        data.extend((sst.len() as u32).to_le_bytes());
        for s in sst {
            // Compressed: one Latin-1 byte a character.
            data.extend((s.chars().count() as u16).to_le_bytes());
            data.push(0);
            data.extend(s.chars().map(|c| c as u8));
        }
        body.extend(rec(0x00FC, &data));
    }
    body.extend(eof());
    let bof_len = bof(5).len();
    let bound_len: usize = sheets.iter().map(|(name, _)| 4 + 8 + name.len()).sum();
    let mut at = bof_len + bound_len + body.len();
    let mut out = bof(5);
    let mut substreams = Vec::new();
    for (name, records) in sheets {
        let mut data = (at as u32).to_le_bytes().to_vec();
        data.extend([0, 0, name.len() as u8, 0]);
        data.extend(name.as_bytes());
        out.extend(rec(0x0085, &data));
        let mut sheet = bof(0x10);
        sheet.extend(records.concat());
        sheet.extend(eof());
        at += sheet.len();
        substreams.push(sheet);
    }
    out.extend(body);
    out.extend(substreams.concat());
    out
}

/// A compound file holding `stream` as its `Workbook`.
fn xls(stream: &[u8]) -> Vec<u8> {
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    file.create_stream("Workbook")
        .unwrap()
        .write_all(stream)
        .unwrap();
    file.flush().unwrap();
    file.into_inner().into_inner()
}

fn simple() -> Vec<u8> {
    xls(&stream(
        &[],
        &["Name", "Café"],
        &[(
            "Prices",
            vec![
                label_sst(0, 0, 0),
                label_sst(0, 1, 1),
                number(1, 0, 2.5),
                number(1, 1, 12.0),
            ],
        )],
    ))
}

#[test]
fn generated_workbooks_read_back() {
    let d = simple();
    assert_eq!(detect(&d), Some("xls"));
    assert_eq!(text("xls", &d), "Prices\nName\tCafé\n2.5\t12\n");
}

#[test]
fn records_that_would_panic_or_allocate_in_calamine_are_skipped() {
    // A formula whose token stream claims more than it holds (a PtgRef3d cut short: calamine
    // 0.36 panics on such a real BIFF5 file), a MulRk whose columns run backwards, a
    // MergeCells record counting more areas than it has, a Dimensions record claiming 2^32 rows,
    // a defined name whose formula is longer than the record, a short BOF-like record.
    let mut formula = vec![2, 0, 0, 0, 15, 0];
    formula.extend(7.0f64.to_le_bytes());
    formula.extend([0; 6]);
    formula.extend([10, 0, 0x3A]);
    let sheet = vec![
        rec(
            0x0200,
            &[0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0xFF, 0, 0, 0],
        ),
        rec(0x0006, &formula),
        rec(0x00BD, &[0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0]),
        rec(0x00E5, &[0xFF, 0xFF, 1, 0]),
        label_sst(0, 0, 0),
    ];
    let globals = vec![
        rec(0x0018, &[0, 0, 0, 1, 0xFF, 0xFF]),
        rec(0x0017, &[5]),
        rec(0x0022, &[1]),
    ];
    let d = xls(&stream(&globals, &["kept"], &[("S", sheet)]));
    let t = survives("hostile records", 2.0, || text("xls", &d));
    assert_eq!(t, "S\nkept\n7\n");
}

#[test]
fn cell_grids_over_the_budget_are_refused_before_calamine_allocates() {
    // Two cells at opposite corners: a dense grid of 65,536 × 65,536 cells.
    let sheet = vec![number(0, 0, 1.0), number(0xFFFF, 0xFFFF, 2.0)];
    let d = xls(&stream(&[], &[], &[("Corners", sheet)]));
    match survives("grid bomb", 2.0, || run("xls", &d)) {
        Err((ExtractError::LimitExceeded(_), _)) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn sheets_without_end_records_are_not_walked_again_and_again() {
    // 3,000 sheets, each pointing at the next record of one long run without an EOF.
    let cells: Vec<Vec<u8>> = (0..3000).map(|i| number(i, 0, 1.0)).collect();
    let mut out = bof(5);
    let bound = |at: usize| {
        let mut data = (at as u32).to_le_bytes().to_vec();
        data.extend([0, 0, 1, 0, b'x']);
        rec(0x0085, &data)
    };
    let header = out.len() + cells.len() * bound(0).len() + eof().len();
    let mut at = header;
    for c in &cells {
        out.extend(bound(at));
        at += c.len();
    }
    out.extend(eof());
    out.extend(cells.concat());
    let d = xls(&out);
    match survives("overlapping sheets", 2.0, || run("xls", &d)) {
        Err((ExtractError::Malformed(_), _)) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn deeply_nested_substreams_are_skipped() {
    let mut sheet: Vec<Vec<u8>> = (0..50_000).map(|_| bof(0x20)).collect();
    sheet.extend((0..50_000).map(|_| eof()));
    sheet.push(number(0, 0, 3.0));
    let d = xls(&stream(&[], &[], &[("Deep", sheet)]));
    let t = survives("nested substreams", 2.0, || text("xls", &d));
    assert_eq!(t, "Deep\n3\n");
}

#[test]
fn empty_random_and_truncated_files_fail_fast_without_panic() {
    let ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), ole.to_vec()];
    for seed in 1..30u64 {
        inputs.push(noise(4096, seed));
        let mut oleish = ole.to_vec();
        oleish.extend(noise(8192, seed));
        inputs.push(oleish);
        // A compound file whose workbook stream is noise.
        inputs.push(xls(&noise(2048 + seed as usize * 97, seed)));
    }
    for input in &inputs {
        let _ = survives("noise", 2.0, || run("xls", input));
    }
    let mut files: Vec<Vec<u8>> = documents_in(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/xls"
    )))
    .iter()
    .map(|p| fs::read(p).unwrap())
    .collect();
    files.push(simple());
    check_damage("xls", &files, 40);
}

/// Seeds of damage per workbook in [`damaged_workbook_streams_never_panic`]; `INLET_STRESS`
/// raises it for a longer run by hand.
fn damage_seeds() -> u64 {
    std::env::var("INLET_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

#[test]
fn damaged_workbook_streams_never_panic() {
    // Noise written over the records of every test workbook's stream, repackaged so that the
    // container stays readable and the damage reaches the BIFF parser.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/xls");
    for path in documents_in(Path::new(dir)) {
        let mut file = cfb::CompoundFile::open(Cursor::new(fs::read(&path).unwrap())).unwrap();
        let name = if file.is_stream("Workbook") {
            "Workbook"
        } else {
            "Book"
        };
        let mut workbook = Vec::new();
        std::io::Read::read_to_end(&mut file.open_stream(name).unwrap(), &mut workbook).unwrap();
        for seed in 0..damage_seeds() {
            let mut damaged = workbook.clone();
            let at = (seed as usize * 7919) % damaged.len();
            let patch = noise((seed as usize % 16 + 1).min(damaged.len() - at), seed + 1);
            damaged[at..at + patch.len()].copy_from_slice(&patch);
            let d = xls(&damaged);
            let what = format!("{} damaged with seed {seed}", path.display());
            let _ = survives(&what, 2.0, || run("xls", &d));
        }
    }
}

#[test]
fn configured_limits_cut_the_output() {
    let d = simple();
    // The budget bounds the workbook stream first: a budget under its size reads nothing.
    let (full, cut) = check_decompression_cap("xls", &d, 16);
    assert_eq!(full, "Prices\nName\tCafé\n2.5\t12\n");
    assert_eq!(cut, "");
    assert_eq!(check_output_cap("xls", &d, 9), "Prices\nNa");
}

#[test]
fn the_output_cap_and_the_deadline_stop_extraction() {
    let text: String = "A cell of generated text for the cap. ".repeat(4);
    let strings: Vec<&str> = vec![text.as_str(); 50];
    let sheet: Vec<Vec<u8>> = (0..2000)
        .map(|i| label_sst(i, 0, u32::from(i % 50)))
        .collect();
    let d = xls(&stream(&[], &strings, &[("Big", sheet)]));
    let (out, full) = capped("xls", &d, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("xls", &d, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}
