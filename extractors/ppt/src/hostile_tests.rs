//! Generated presentations (a document with its slide lists, slides with drawings, notes, a
//! master, the persist directory and the current user atom) and hostile inputs: empty, random
//! and truncated files, edit chains that loop, records running past their containers, deep
//! nesting, references repeated many times, encryption, output over the cap. Every case must
//! finish fast and never panic.

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

/// An atom: version 0, `instance`, `typ`, `data`.
fn atom(instance: u16, typ: u16, data: &[u8]) -> Vec<u8> {
    let mut out = (instance << 4).to_le_bytes().to_vec();
    out.extend(typ.to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// A container (version `0xF`) of `children`.
fn container(instance: u16, typ: u16, children: &[Vec<u8>]) -> Vec<u8> {
    let data = children.concat();
    let mut out = ((instance << 4) | 0xF).to_le_bytes().to_vec();
    out.extend(typ.to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    out
}

fn chars(text: &str) -> Vec<u8> {
    let data: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    atom(0, 0x0FA0, &data)
}

fn bytes(text: &str) -> Vec<u8> {
    atom(0, 0x0FA8, text.as_bytes())
}

fn u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A shape whose client text box holds `records`.
fn shape(records: &[Vec<u8>]) -> Vec<u8> {
    container(0, 0xF004, &[container(0, 0xF00D, records)])
}

/// A drawing of shapes.
fn drawing(shapes: &[Vec<u8>]) -> Vec<u8> {
    container(
        0,
        0x040C,
        &[container(0, 0xF002, &[container(0, 0xF003, shapes)])],
    )
}

/// A slide container: its `SlideAtom` naming notes `notes_id`, then `rest`.
fn slide(notes_id: u32, rest: &[Vec<u8>]) -> Vec<u8> {
    let mut atom_data = vec![0; 24];
    atom_data[16..20].copy_from_slice(&notes_id.to_le_bytes());
    let mut children = vec![atom(2, 0x03EF, &atom_data)];
    children.extend_from_slice(rest);
    container(0, 0x03EE, &children)
}

/// A `SlidePersistAtom` (or `NotesPersistAtom`).
fn persist_atom(persist: u32, id: u32) -> Vec<u8> {
    atom(0, 0x03F3, &u32s(&[persist, 0, 0, id, 0]))
}

/// A presentation: `objects` (persist id, record) laid out in the given order, the document
/// being persist id 1, then the persist directory and the user edit; `user` edits the
/// `CurrentUserAtom` and `edit` the `UserEditAtom`'s data.
fn presentation_with(
    objects: &[(u32, Vec<u8>)],
    user: impl FnOnce(&mut Vec<u8>),
    edit: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let mut stream = Vec::new();
    let mut entries = Vec::new();
    for (id, record) in objects {
        entries.push((*id, stream.len() as u32));
        stream.extend(record);
    }
    let directory_at = stream.len() as u32;
    let mut dir = Vec::new();
    for (id, offset) in entries {
        dir.extend((1u32 << 20 | id).to_le_bytes());
        dir.extend(offset.to_le_bytes());
    }
    stream.extend(atom(0, 0x1772, &dir));
    let edit_at = stream.len() as u32;
    let mut edit_data = u32s(&[0, 0, 0, directory_at, 1, 5, 0]);
    edit(&mut edit_data);
    stream.extend(atom(0, 0x0FF5, &edit_data));
    let mut user_data = u32s(&[0x14, 0xE391_C05F, edit_at, 0, 0]);
    user(&mut user_data);
    let current_user = atom(0, 0x0FF6, &user_data);
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    file.create_stream("PowerPoint Document")
        .unwrap()
        .write_all(&stream)
        .unwrap();
    file.create_stream("Current User")
        .unwrap()
        .write_all(&current_user)
        .unwrap();
    file.flush().unwrap();
    file.into_inner().into_inner()
}

/// Two slides and a notes page, laid out in the stream in another order than the slides'.
fn objects() -> Vec<(u32, Vec<u8>)> {
    let document = container(
        0,
        0x03E8,
        &[
            container(
                0,
                0x0FF0,
                &[
                    persist_atom(2, 256),
                    atom(0, 0x0F9F, &[0; 4]),
                    chars("Title one"),
                    bytes("Body one\rsecond line"),
                    persist_atom(3, 257),
                    chars("Title two"),
                ],
            ),
            container(
                1,
                0x0FF0,
                &[persist_atom(5, 0x8000_0000), chars("Master title")],
            ),
            container(2, 0x0FF0, &[persist_atom(4, 0x100)]),
        ],
    );
    let first = slide(
        0x100,
        &[drawing(&[
            shape(&[atom(0, 0x0F9E, &1u32.to_le_bytes())]),
            shape(&[atom(0, 0x0F9E, &0u32.to_le_bytes())]),
            shape(&[
                atom(0, 0x0F9F, &[0; 4]),
                chars("A text box \u{2013} caf\u{e9}"),
            ]),
            shape(&[chars("*")]),
        ])],
    );
    let notes = container(0, 0x03F0, &[drawing(&[shape(&[chars("Speaker notes")])])]);
    // A master: a placeholder's prompt (left out) and a line it draws on every slide.
    let prompt = container(
        0,
        0xF004,
        &[
            container(0, 0xF011, &[atom(0, 0x0BC3, &[0; 8])]),
            container(0, 0xF00D, &[chars("Click to edit")]),
        ],
    );
    let master = container(
        0,
        0x03F8,
        &[drawing(&[prompt, shape(&[chars("Company footer")])])],
    );
    vec![
        (3, slide(0, &[])),
        (5, master),
        (1, document),
        (4, notes),
        (2, first),
    ]
}

fn presentation() -> Vec<u8> {
    presentation_with(&objects(), |_| {}, |_| {})
}

const EXPECTED: &str = "Body one\nsecond line\nTitle one\nA text box \u{2013} caf\u{e9}\nSpeaker notes\nTitle two\nCompany footer\n";

#[test]
fn generated_presentations_read_back_in_slide_order() {
    let d = presentation();
    assert_eq!(detect(&d), Some("ppt"));
    assert_eq!(text("ppt", &d), EXPECTED);
}

#[test]
fn without_the_current_user_stream_the_stream_order_is_read() {
    let d = presentation_with(&objects(), |user| user[8..12].fill(0xFF), |_| {});
    // The current edit is not in the stream: stream order, placeholders after the slides,
    // the master's text last without its placeholder's prompt.
    assert_eq!(
        text("ppt", &d),
        "Speaker notes\nA text box \u{2013} caf\u{e9}\nTitle one\nBody one\nsecond line\nTitle two\nCompany footer\n"
    );
}

#[test]
fn encrypted_presentations_are_unsupported() {
    let token = presentation_with(
        &objects(),
        |user| user[4..8].copy_from_slice(&0xF3D1_C4DFu32.to_le_bytes()),
        |_| {},
    );
    let session = presentation_with(&objects(), |_| {}, |edit| edit.extend(9u32.to_le_bytes()));
    for d in [token, session] {
        match run("ppt", &d) {
            Err((ExtractError::Unsupported(reason), t)) => {
                assert!(reason.starts_with("encrypted"), "{reason}");
                assert_eq!(t, "");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn edit_chains_that_loop_and_repeated_references_end() {
    // The user edit names itself as the edit before it.
    let d = presentation_with(
        &objects(),
        |_| {},
        |edit| {
            let at = edit.len() as u32; // any offset; the loop is caught by offset
            edit[8..12].copy_from_slice(&at.to_le_bytes());
        },
    );
    let _ = survives("edit loop", 2.0, || run("ppt", &d));
    // 20,000 list entries naming one slide, whose drawing points 20,000 times at one text.
    let refs: Vec<Vec<u8>> = (0..20_000)
        .map(|_| shape(&[atom(0, 0x0F9E, &0u32.to_le_bytes())]))
        .collect();
    let mut list: Vec<Vec<u8>> = (0..20_000).map(|_| persist_atom(2, 256)).collect();
    list.insert(1, chars("Once"));
    let objects = vec![
        (1, container(0, 0x03E8, &[container(0, 0x0FF0, &list)])),
        (2, slide(0, &[drawing(&refs)])),
    ];
    let d = presentation_with(&objects, |_| {}, |_| {});
    assert_eq!(
        survives("repeated references", 2.0, || text("ppt", &d)),
        "Once\n"
    );
}

#[test]
fn deep_nesting_and_records_past_their_container_are_bounded() {
    let mut nested = chars("Deep");
    for _ in 0..100_000 {
        nested = container(0, 0xF004, &[nested]);
    }
    let objects = vec![
        (
            1,
            container(0, 0x03E8, &[container(0, 0x0FF0, &[persist_atom(2, 256)])]),
        ),
        (2, slide(0, &[nested, shape(&[chars("Shallow")])])),
    ];
    let d = presentation_with(&objects, |_| {}, |_| {});
    // Text deeper than the bound is not read; the rest is.
    assert_eq!(
        survives("deep nesting", 2.0, || text("ppt", &d)),
        "Shallow\n"
    );
    // A text atom claiming more than its container holds: the text before it is kept.
    let mut broken = shape(&[chars("Kept")]);
    broken.extend(atom(0, 0x0FA0, &[0; 8]));
    let n = broken.len();
    broken[n - 12..n - 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let objects = vec![
        (
            1,
            container(0, 0x03E8, &[container(0, 0x0FF0, &[persist_atom(2, 256)])]),
        ),
        (2, slide(0, &[drawing(&[broken])])),
    ];
    let d = presentation_with(&objects, |_| {}, |_| {});
    match survives("broken record", 2.0, || run("ppt", &d)) {
        Err((ExtractError::Malformed(_), t)) => assert_eq!(t, "Kept\n"),
        other => panic!("{other:?}"),
    }
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
    }
    for input in &inputs {
        assert_eq!(detect(input), None);
        assert!(survives("noise", 2.0, || run("ppt", input)).is_err());
    }
    let mut files: Vec<Vec<u8>> = documents_in(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/ppt"
    )))
    .iter()
    .map(|p| fs::read(p).unwrap())
    .collect();
    files.push(presentation());
    check_damage("ppt", &files, 40);
}

#[test]
fn damaged_document_streams_never_panic() {
    // Noise over the records of the generated stream, the container kept readable.
    let d = presentation();
    let mut file = cfb::CompoundFile::open(Cursor::new(d)).unwrap();
    let mut stream = Vec::new();
    std::io::Read::read_to_end(
        &mut file.open_stream("PowerPoint Document").unwrap(),
        &mut stream,
    )
    .unwrap();
    let mut user = Vec::new();
    std::io::Read::read_to_end(&mut file.open_stream("Current User").unwrap(), &mut user).unwrap();
    for seed in 0..500u64 {
        let mut damaged = stream.clone();
        let at = (seed as usize * 7919) % damaged.len();
        let patch = noise((seed as usize % 8 + 1).min(damaged.len() - at), seed + 1);
        damaged[at..at + patch.len()].copy_from_slice(&patch);
        let mut out = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        out.create_stream("PowerPoint Document")
            .unwrap()
            .write_all(&damaged)
            .unwrap();
        out.create_stream("Current User")
            .unwrap()
            .write_all(&user)
            .unwrap();
        out.flush().unwrap();
        let bytes = out.into_inner().into_inner();
        let _ = survives("damaged stream", 2.0, || run("ppt", &bytes));
    }
}

#[test]
fn configured_limits_cut_the_output() {
    let d = presentation();
    let (full, cut) = check_decompression_cap("ppt", &d, 64);
    assert_eq!(full, EXPECTED);
    assert_eq!(cut, "");
    assert_eq!(check_output_cap("ppt", &d, 12), "Body one\nsec");
}

#[test]
fn the_output_cap_and_the_deadline_stop_extraction() {
    let body = "A paragraph of generated text for the cap.\r".repeat(1000);
    let slides: Vec<Vec<u8>> = (0..200).map(|_| shape(&[chars(&body)])).collect();
    let objects = vec![
        (
            1,
            container(0, 0x03E8, &[container(0, 0x0FF0, &[persist_atom(2, 256)])]),
        ),
        (2, slide(0, &[drawing(&slides)])),
    ];
    let d = presentation_with(&objects, |_| {}, |_| {});
    let (out, full) = capped("ppt", &d, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("ppt", &d, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}

#[test]
fn embedded_object_records_are_bounded_and_never_panic() {
    use flate2::{Compression, write::ZlibEncoder};
    let zlib = |data: &[u8]| {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    };
    // A compound file holding a Packager-less `CONTENTS` stream.
    let mut c = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    c.create_stream("CONTENTS")
        .unwrap()
        .write_all(b"plain words")
        .unwrap();
    let storage = c.into_inner().into_inner();
    let stored = |size: u32, body: &[u8]| [&size.to_le_bytes()[..], body].concat();
    let records = [
        // Readable: stored as is, and compressed.
        atom(0, crate::EX_OLE_OBJ_STG, &storage),
        atom(
            1,
            crate::EX_OLE_OBJ_STG,
            &stored(storage.len() as u32, &zlib(&storage)),
        ),
        // A size past the budget, a bomb cut at its declared size, noise, a cut record.
        atom(1, crate::EX_OLE_OBJ_STG, &stored(u32::MAX, &zlib(&storage))),
        atom(
            1,
            crate::EX_OLE_OBJ_STG,
            &stored(64, &zlib(&vec![0; 1 << 24])),
        ),
        atom(1, crate::EX_OLE_OBJ_STG, &stored(4096, &noise(512, 7))),
        atom(1, crate::EX_OLE_OBJ_STG, &[1, 2]),
        atom(0, crate::EX_OLE_OBJ_STG, &noise(512, 8)),
    ]
    .concat();
    let mut sink = inlet_core::extract::TextSink::new(&Limits::default());
    let mut budget = 1 << 20;
    let (t, room) = survives("ppt objects", 2.0, || {
        crate::embedded_objects(&records, &mut budget, &mut sink).unwrap();
        let room = sink.decompressed_room();
        (sink.into_text(), room)
    });
    // Two objects found (their headings; no nested extractor here), nothing else.
    assert_eq!(t.matches("embedded object").count(), 2, "{t}");
    assert!(budget < 1 << 20, "the objects' streams are charged");
    // The compressed storage and the bomb's first 64 bytes count as decompressed.
    let inflated = Limits::default().max_decompressed_bytes - room;
    assert!(inflated >= storage.len() as u64 + 64, "{inflated}");
}
