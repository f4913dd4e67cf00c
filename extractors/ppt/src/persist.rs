//! Where a presentation's objects are (MS-PPT 2.1.2): the `Current User` stream points at the
//! last `UserEditAtom` of the `PowerPoint Document` stream; each edit points at its
//! `PersistDirectoryAtom` (persist ids to stream offsets) and at the edit before it. Later edits
//! override earlier ones, so the map is built newest first. The chain is followed at most
//! [`MAX_EDITS`] steps and never visits an offset twice.

use std::collections::{HashMap, HashSet};

use crate::record::{Record, u32_at};

/// `RT_UserEditAtom`.
const USER_EDIT: u16 = 0x0FF5;
/// `RT_PersistDirectoryAtom`.
const PERSIST_DIRECTORY: u16 = 0x1772;
/// `RT_CurrentUserAtom`.
const CURRENT_USER: u16 = 0x0FF6;

/// The `headerToken` of a `CurrentUserAtom` whose presentation is encrypted.
const ENCRYPTED_TOKEN: u32 = 0xF3D1_C4DF;

/// Edits followed at most (a presentation saved incrementally thousands of times is unheard of).
pub(crate) const MAX_EDITS: usize = 4096;

/// The persist directory of a presentation and the persist id of its document.
#[derive(Debug, Default)]
pub(crate) struct Directory {
    /// Stream offset of each persist object.
    pub offsets: HashMap<u32, usize>,
    /// The `DocumentContainer`'s persist id.
    pub document: u32,
    /// Whether the newest edit names a `CryptSession10Container` or the current user atom says
    /// the presentation is encrypted.
    pub encrypted: bool,
}

impl Directory {
    /// The record of persist object `id`, if the directory has it and it fits the stream.
    pub fn object<'a>(&self, stream: &'a [u8], id: u32) -> Option<Record<'a>> {
        Record::at(stream, *self.offsets.get(&id)?).ok()
    }
}

/// Reads the directory from the `Current User` stream and the document stream; `None` when the
/// chain cannot be followed from its start (the caller then reads the stream in order).
pub(crate) fn directory(current_user: &[u8], stream: &[u8]) -> Option<Directory> {
    let user = Record::at(current_user, 0).ok()?;
    if user.typ != CURRENT_USER {
        return None;
    }
    let token_encrypted = u32_at(user.data, 4) == Some(ENCRYPTED_TOKEN);
    let mut at = usize::try_from(u32_at(user.data, 8)?).ok()?;
    let mut dir = Directory {
        encrypted: token_encrypted,
        ..Directory::default()
    };
    let mut seen = HashSet::new();
    let mut newest = true;
    while seen.len() < MAX_EDITS && seen.insert(at) {
        let Ok(edit) = Record::at(stream, at) else {
            break;
        };
        if edit.typ != USER_EDIT {
            break;
        }
        if newest {
            dir.document = u32_at(edit.data, 16)?;
            // `encryptSessionPersistIdRef` is there only in encrypted presentations.
            dir.encrypted |= u32_at(edit.data, 28).is_some_and(|id| id != 0);
            newest = false;
        }
        if let Some(offset) = u32_at(edit.data, 12).and_then(|o| usize::try_from(o).ok())
            && let Ok(persist) = Record::at(stream, offset)
            && persist.typ == PERSIST_DIRECTORY
        {
            add_entries(&mut dir.offsets, persist.data);
        }
        match u32_at(edit.data, 8) {
            Some(0) | None => break,
            Some(previous) => match usize::try_from(previous) {
                Ok(p) => at = p,
                Err(_) => break,
            },
        }
    }
    (!newest).then_some(dir)
}

/// Adds the entries of a `PersistDirectoryAtom` that newer edits have not set.
fn add_entries(offsets: &mut HashMap<u32, usize>, mut data: &[u8]) {
    while let Some(entry) = u32_at(data, 0) {
        let first = entry & 0x000F_FFFF;
        let count = (entry >> 20) as usize;
        data = &data[4..];
        for k in 0..count {
            let Some(offset) = u32_at(data, 4 * k) else {
                return;
            };
            if let Ok(offset) = usize::try_from(offset) {
                offsets.entry(first + k as u32).or_insert(offset);
            }
        }
        data = data.get(4 * count..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persist_entries_of_newer_edits_win() {
        let mut offsets = HashMap::new();
        // Ids 1 and 2 at 100 and 200, then id 7 at 700.
        let entries: Vec<u8> = [(2u32 << 20) | 1, 100, 200, (1 << 20) | 7, 700]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        add_entries(&mut offsets, &entries);
        let older: Vec<u8> = [(1u32 << 20) | 2, 999]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        add_entries(&mut offsets, &older);
        assert_eq!(offsets.get(&1), Some(&100));
        assert_eq!(offsets.get(&2), Some(&200));
        assert_eq!(offsets.get(&7), Some(&700));
        // A count larger than the entry: what is there is read, nothing more.
        add_entries(&mut offsets, &((4095u32 << 20) | 50).to_le_bytes());
        assert!(!offsets.contains_key(&50));
    }
}
