//! The input policy on every store: what one store accepts, every store stores identically, and what one refuses every store refuses.

use crate::{
    Error, RecordStore,
    record::{RecordWrite, Scope},
    tag::{TagValue, Tags},
};

use super::*;

/// Strings the property cases draw for a field of `class`: mostly strings the class allows (any
/// Unicode, CJK, emoji, `%`, and for text every control character but NUL), with a
/// refused character (NUL, a control character) one in sixteen, about 100 KB long one in eight.
pub(super) fn hostile_string(
    class: crate::input::Class,
) -> proptest::strategy::BoxedStrategy<String> {
    use proptest::prelude::*;
    let special = prop::sample::select(vec![
        '東', '京', 'é', 'ß', '🙂', '\u{feff}', '\u{200b}', '%', '\\', ' ',
    ]);
    let allowed = match class {
        crate::input::Class::Line | crate::input::Class::Typed => prop_oneof![
            6 => any::<char>().prop_filter("a line holds no control character", |c| {
                !c.is_ascii_control()
            }),
            2 => special,
        ]
        .boxed(),
        crate::input::Class::Text => prop_oneof![
            5 => any::<char>().prop_filter("text holds no NUL", |c| *c != '\0'),
            2 => special,
            1 => (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('\t')),
            1 => Just('\u{7f}'),
        ]
        .boxed(),
    };
    let collect = |v: Vec<char>| v.into_iter().collect::<String>();
    let clean = prop::collection::vec(allowed, 0..40).prop_map(collect);
    let refused = (
        clean.clone(),
        prop_oneof![
            Just('\0'),
            (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('\0'))
        ],
        clean.clone(),
    )
        .prop_map(|(a, c, b)| format!("{a}{c}{b}"));
    prop_oneof![
        13 => clean.clone(),
        1 => refused,
        2 => clean.prop_map(|s| if s.is_empty() { s } else { s.repeat(100_000 / s.len() + 1) }),
    ]
    .boxed()
}

/// One drawn record write: every stored string field is hostile.
#[derive(Debug, Clone)]
pub(super) struct DrawnWrite {
    external_id: String,
    title: String,
    content: String,
    url: String,
    checksum: String,
    tag: String,
}

pub(super) fn drawn_write() -> impl proptest::strategy::Strategy<Value = DrawnWrite> {
    use crate::input::Class::{Line, Text};
    use proptest::prelude::*;
    (
        hostile_string(Line),
        hostile_string(Text),
        hostile_string(Text),
        hostile_string(Line),
        hostile_string(Line),
        hostile_string(Line),
    )
        .prop_map(
            |(external_id, title, content, url, checksum, tag)| DrawnWrite {
                external_id,
                title,
                content,
                url,
                checksum,
                tag,
            },
        )
}

impl DrawnWrite {
    fn write(&self, scope: Scope, salt: usize) -> RecordWrite {
        let mut w = write(scope, &format!("{salt}-{}", self.external_id), None, None);
        w.title = self.title.clone();
        w.content = self.content.clone();
        // A url is an http(s) link; what follows the scheme is drawn.
        w.url = Some(format!("https://x.test/{}", self.url));
        w.external_checksum = Some(self.checksum.clone());
        w.tags = Tags::from([("color".to_string(), vec![TagValue::Text(self.tag.clone())])]);
        w
    }
}

/// Runs a property over drawn writes (with shrinking) inside the async test.
pub(super) fn check_writes(cases: u32, property: impl Fn(DrawnWrite) -> Result<(), String>) {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&drawn_write(), |drawn| {
        property(drawn).map_err(TestCaseError::fail)
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

/// Blocks on a store call from inside the (multi-threaded) conformance test.
pub(super) fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

/// Property: whatever the strings, a write the input policy accepts is stored and reads back
/// byte for byte (title, content, url, checksum, tag value, externalId); one it refuses is
/// `Invalid` on every store, never a storage error. So every store gives the same answer.
pub async fn stored_text_reads_back_identically(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let salt = std::cell::Cell::new(0);
    let accepted = std::cell::Cell::new(0);
    check_writes(64, |drawn| {
        salt.set(salt.get() + 1);
        let w = drawn.write(scope, salt.get());
        let expected = crate::record::check_write(&w);
        let got = block(store.put_record(w.clone()));
        match (expected, got) {
            (Ok(()), Ok(put)) => {
                let back = block(store.get_record(&w.key)).map_err(|e| e.to_string())?;
                for (what, stored, sent) in [
                    ("externalId", &back.external_id, &w.key.external_id),
                    ("title", &back.title, &w.title),
                    ("content", &back.content, &w.content),
                ] {
                    if stored != sent {
                        return Err(format!("{what} changed: {stored:?} != {sent:?}"));
                    }
                }
                if back.url != w.url || back.external_checksum != w.external_checksum {
                    return Err(format!("url/checksum changed: {back:?}"));
                }
                if back.tags != w.tags || put.record.tags != w.tags {
                    return Err(format!("tags changed: {:?}", back.tags));
                }
                accepted.set(accepted.get() + 1);
                Ok(())
            }
            (Err(_), Err(Error::Invalid(_))) => Ok(()),
            (expected, got) => Err(format!(
                "policy said {expected:?}, the store answered {:?}",
                got.map(|p| p.created)
            )),
        }
    });
    // Most draws are allowed input: the property is about storing, not only refusing.
    assert!(
        accepted.get() >= 10,
        "only {} draws were stored",
        accepted.get()
    );
}

/// Refused input is [`Error::Invalid`] naming the field on every store: NUL or another control
/// character in an identifier, tag value, url or checksum; NUL in text; over-long identifiers.
pub async fn refused_input_is_invalid_on_every_store(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let long = "x".repeat(crate::input::MAX_ID_BYTES + 1);
    type Spoil = Box<dyn Fn(&mut RecordWrite)>;
    let cases: Vec<(&str, Spoil)> = vec![
        (
            "externalId",
            Box::new(|w| w.key.external_id = "a\0b".into()),
        ),
        (
            "externalId",
            Box::new(|w| w.key.external_id = "a\u{1}b".into()),
        ),
        (
            "externalId",
            Box::new(move |w| w.key.external_id = long.clone()),
        ),
        (
            "externalChecksum",
            Box::new(|w| w.external_checksum = Some("v\0".into())),
        ),
        (
            "url",
            Box::new(|w| w.url = Some("https://x.test/\0".into())),
        ),
        (
            "url",
            Box::new(|w| w.url = Some("https://x.test/\n".into())),
        ),
        ("title", Box::new(|w| w.title = "t\0".into())),
        ("content", Box::new(|w| w.content = "c\0".into())),
        (
            "tag 'color'",
            Box::new(|w| {
                w.tags = Tags::from([("color".into(), vec![TagValue::Text("r\0".into())])])
            }),
        ),
        (
            "tag 'color'",
            Box::new(|w| {
                w.tags = Tags::from([("color".into(), vec![TagValue::Text("r".repeat(3000))])])
            }),
        ),
    ];
    for (field, spoil) in cases {
        let mut w = write(scope, "hostile", None, None);
        spoil(&mut w);
        match store.put_record(w).await {
            Err(Error::Invalid(m)) => assert!(m.contains(field), "{field}: {m}"),
            other => panic!("{field}: expected Invalid, got {other:?}"),
        }
    }
    assert!(store.get_record(&key(scope, "hostile")).await.is_err());
    let invalid = |e: &Error| matches!(e, Error::Invalid(_));
    let nul = key(scope, "a\0b");
    assert_err(store.get_record(&nul).await, invalid, "Invalid");
    assert_err(store.delete_record(&nul).await, invalid, "Invalid");
    assert_err(
        store.touch_record(&nul, touch(None, None)).await,
        invalid,
        "Invalid",
    );
}
