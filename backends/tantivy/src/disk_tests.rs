//! The index in a folder: the applied position across reopens and rebuilds, indexes of another
//! format discarded, a folder another process holds refused, damage noticed and replaced.

use super::*;
use crate::tests::{doc, query};

#[test]
fn the_applied_position_survives_a_reopen_and_a_bad_index_is_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, reason) = TantivyIndex::open(dir.path()).expect("open");
        assert_eq!(reason, None);
        assert_eq!(index.applied().expect("applied"), None);
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                deletes: vec![],
                position: Some(42),
                deleted_sources: vec![],
            })
            .expect("apply");
    }
    {
        let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
        assert_eq!(reason, None);
        assert_eq!(index.applied().expect("applied"), Some(42));
        assert_eq!(index.search(&query("alpha")).expect("s").total, 1);
    }
    std::fs::write(dir.path().join("meta.json"), b"{ not json").expect("corrupt");
    let (index, reason) = TantivyIndex::open(dir.path()).expect("rebuilt");
    assert!(reason.is_some());
    assert_eq!(index.applied().expect("applied"), None);
    assert_eq!(index.search(&query("alpha")).expect("s").total, 0);
}

#[test]
fn an_interrupted_rebuild_is_not_mistaken_for_a_corrupt_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, _) = TantivyIndex::open(dir.path()).expect("open");
        index.clear().expect("clear");
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                deletes: vec![],
                deleted_sources: vec![],
                position: None,
            })
            .expect("a rebuild's first batch");
    }
    let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
    assert_eq!(reason, None);
    assert_eq!(index.applied().expect("applied"), None, "rebuild again");
}

#[test]
fn a_rebuilds_pages_are_all_found_once_its_last_page_is_applied() {
    let index = TantivyIndex::in_memory().expect("index");
    index.clear().expect("clear");
    for n in 0..3u128 {
        index
            .apply(IndexBatch {
                upserts: vec![doc(n, "x.txt", "alpha")],
                position: None,
                ..Default::default()
            })
            .expect("a page");
    }
    assert_eq!(index.applied().expect("applied"), None);
    index
        .apply(IndexBatch {
            upserts: vec![doc(3, "x.txt", "alpha")],
            position: Some(7),
            ..Default::default()
        })
        .expect("the last page");
    assert_eq!(index.applied().expect("applied"), Some(7));
    assert_eq!(index.search(&query("alpha")).expect("search").total, 4);
}

#[test]
fn an_index_of_an_earlier_format_or_schema_is_discarded_for_a_rebuild() {
    // The same schema with an earlier format in its payload (analysis changed)...
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, _) = TantivyIndex::open(dir.path()).expect("open");
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                position: Some(42),
                ..Default::default()
            })
            .expect("apply");
    }
    commit_payload(
        &Index::open_in_dir(dir.path()).expect("raw"),
        &format!(r#"{{"format":{},"position":42}}"#, FORMAT - 1),
    );
    let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
    assert!(reason.is_some_and(|r| r.contains("format")));
    assert_eq!(index.applied().expect("applied"), None);
    assert_eq!(index.search(&query("alpha")).expect("s").total, 0);
    drop(index);
    // ...and another schema (fields added or changed), as an index of format 8 has.
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut b = Schema::builder();
        b.add_text_field("id", STRING | STORED);
        let index = Index::create_in_dir(dir.path(), b.build()).expect("old");
        commit_payload(&index, r#"{"format":8,"position":42}"#);
    }
    let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
    assert!(reason.is_some());
    assert_eq!(index.applied().expect("applied"), None);
}

/// Commits `payload` to a raw tantivy index, as another version of the server would have.
fn commit_payload(index: &Index, payload: &str) {
    let mut writer: IndexWriter = index.writer(15_000_000).expect("writer");
    let mut prepared = writer.prepare_commit().expect("prepare");
    prepared.set_payload(payload);
    prepared.commit().expect("commit");
}

#[test]
fn a_folder_another_index_holds_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (owner, _) = TantivyIndex::open(dir.path()).expect("open");
    owner
        .apply(IndexBatch {
            upserts: vec![doc(1, "x.txt", "alpha")],
            position: Some(7),
            ..Default::default()
        })
        .expect("apply");
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let refused = TantivyIndex::open(dir.path())
        .err()
        .expect("a second opener is refused");
    assert!(matches!(refused, Error::Conflict(_)), "{refused}");
    let message = refused.to_string();
    assert!(
        message.contains(&dir.path().display().to_string()) && message.contains("--index-dir"),
        "{message}"
    );
    assert_eq!(listing(), before, "nothing of the owner's was touched");
    assert_eq!(owner.search(&query("alpha")).expect("s").total, 1);
    assert_eq!(owner.applied().expect("applied"), Some(7));
}

#[test]
fn a_discarded_index_takes_only_its_own_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, _) = TantivyIndex::open(dir.path()).expect("open");
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                position: Some(7),
                ..Default::default()
            })
            .expect("apply");
    }
    std::fs::write(dir.path().join("README.txt"), b"the operator's notes").expect("write");
    // One postings file with a block overwritten, its length kept.
    let idx = std::fs::read_dir(dir.path())
        .expect("list")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .expect("an .idx file");
    let mut bytes = std::fs::read(&idx).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&idx, bytes).expect("write");
    let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
    assert!(
        reason.as_deref().is_some_and(|r| r.contains("checksums")),
        "{reason:?}"
    );
    assert_eq!(index.applied().expect("applied"), None);
    assert!(!idx.exists());
    assert!(
        dir.path().join("README.txt").exists(),
        "the operator's file is kept"
    );
}

#[test]
fn a_folder_index_notices_damage_answers_unavailable_and_is_replaced_by_clear() {
    use crate::folder::FolderIndex;
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("index");
    let (index, _) = FolderIndex::open(&dir).expect("open");
    index
        .apply(IndexBatch {
            upserts: vec![doc(1, "x.txt", "alpha")],
            position: Some(3),
            ..Default::default()
        })
        .expect("apply");
    assert_eq!(index.search(&query("alpha")).expect("s").total, 1);

    // A segment file emptied: found before the search reads it.
    let store = std::fs::read_dir(&dir)
        .expect("list")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "store"))
        .expect("a .store file");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&store)
        .and_then(|f| f.set_len(0))
        .expect("truncate");
    assert!(matches!(
        index.search(&query("alpha")),
        Err(Error::Unavailable(_))
    ));
    assert!(index.damage().is_some_and(|d| d.contains("changed size")));
    assert_eq!(index.applied().expect("applied"), None, "to be rebuilt");
    index.clear().expect("replaced");
    assert_eq!(index.damage(), None);
    assert_eq!(index.search(&query("alpha")).expect("s").total, 0);
    index
        .apply(IndexBatch {
            upserts: vec![doc(1, "x.txt", "alpha")],
            position: Some(4),
            ..Default::default()
        })
        .expect("apply after the rebuild");
    assert_eq!(index.search(&query("alpha")).expect("s").total, 1);

    // The folder deleted: found at the follower's next look.
    std::fs::remove_dir_all(&dir).expect("remove");
    assert_eq!(index.applied().expect("applied"), None);
    assert!(matches!(
        index.search(&query("alpha")),
        Err(Error::Unavailable(_))
    ));
    index.clear().expect("replaced");
    assert!(dir.join("meta.json").exists());
    assert_eq!(applied_mode(&dir), 0o700);
}

fn applied_mode(dir: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(dir).expect("stat").permissions().mode() & 0o777
}
