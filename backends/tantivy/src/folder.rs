//! An index in a folder that watches its own health (DESIGN 7): before every search and at
//! every round of the follower it checks that the files of the last commit are still there as
//! written ([`TantivyIndex::check`]), and a failed write or a panic inside a search makes it
//! look again. Once damage is found it answers searches with [`Error::Unavailable`] (never with
//! what the damaged files say), reports itself unbuilt ([`SearchIndex::applied`] is `None`), and
//! the follower's rebuild ([`SearchIndex::clear`]) replaces it with a new, empty index in the
//! same folder.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    path::{Path, PathBuf},
    sync::Arc,
};

use inlet_core::{
    Error, Result,
    index::{Hits, IndexBatch, IndexQuery, Position, SearchIndex},
};
use parking_lot::{Mutex, RwLock};

use crate::TantivyIndex;

/// What a search answers while the index is damaged.
const DAMAGED: &str = "the search index is damaged and is being rebuilt from the database";

/// A [`TantivyIndex`] in a folder, replaced by a new one when its files are found damaged.
pub struct FolderIndex {
    dir: PathBuf,
    current: RwLock<Arc<TantivyIndex>>,
    /// Why the current index is unusable, once found.
    damage: Mutex<Option<String>>,
}

impl FolderIndex {
    /// Opens (or creates) the index in `dir`; see [`TantivyIndex::open`] for what is refused
    /// and what discarded. The second value says why an index found there was discarded.
    pub fn open(dir: &Path) -> Result<(Self, Option<String>)> {
        let (index, discarded) = TantivyIndex::open(dir)?;
        Ok((
            Self {
                dir: dir.to_path_buf(),
                current: RwLock::new(Arc::new(index)),
                damage: Mutex::new(None),
            },
            discarded,
        ))
    }

    /// Why the index is unusable until rebuilt, if it is.
    pub fn damage(&self) -> Option<String> {
        self.damage.lock().clone()
    }

    fn current(&self) -> Arc<TantivyIndex> {
        self.current.read().clone()
    }

    /// Records damage (logged once) and gives the folder up so it can be replaced.
    fn damaged(&self, index: &TantivyIndex, why: String) {
        let mut damage = self.damage.lock();
        if damage.is_none() {
            tracing::error!(
                dir = %self.dir.display(),
                reason = %why,
                "search index damaged: searches answer 503 until it is rebuilt from the database"
            );
            index.release();
            *damage = Some(why);
        }
    }

    /// Checks the index's files; records damage and answers `false` when they fail.
    fn healthy(&self, index: &TantivyIndex) -> bool {
        match index.check() {
            Ok(()) => self.damage.lock().is_none(),
            Err(why) => {
                self.damaged(index, why);
                false
            }
        }
    }

    /// Replaces a damaged index with an empty one in the same folder.
    fn replace(&self) -> Result<()> {
        let mut current = self.current.write();
        current.release();
        crate::disk::remove_index_files(&self.dir)?;
        let (fresh, _) = TantivyIndex::open(&self.dir)?;
        *current = Arc::new(fresh);
        *self.damage.lock() = None;
        tracing::info!(dir = %self.dir.display(), "search index replaced; rebuilding");
        Ok(())
    }
}

impl SearchIndex for FolderIndex {
    fn applied(&self) -> Result<Option<Position>> {
        let index = self.current();
        if !self.healthy(&index) {
            return Ok(None);
        }
        index.applied().inspect_err(|_| {
            self.healthy(&index);
        })
    }

    fn apply(&self, batch: IndexBatch) -> Result<()> {
        let index = self.current();
        if self.damage.lock().is_some() {
            return Err(Error::Unavailable(DAMAGED.into()));
        }
        index.apply(batch).inspect_err(|_| {
            self.healthy(&index);
        })
    }

    fn clear(&self) -> Result<()> {
        if self.damage.lock().is_some() {
            return self.replace();
        }
        let index = self.current();
        match index.clear() {
            Ok(()) => Ok(()),
            Err(_) if !self.healthy(&index) => self.replace(),
            Err(e) => Err(e),
        }
    }

    fn search(&self, query: &IndexQuery) -> Result<Hits> {
        let index = self.current();
        if !self.healthy(&index) {
            return Err(Error::Unavailable(DAMAGED.into()));
        }
        match catch_unwind(AssertUnwindSafe(|| index.search(query))) {
            Ok(Err(Error::Backend { source })) => {
                // A read that fails may be a damaged file: look before answering.
                if let Some(why) = index.verify() {
                    self.damaged(&index, why);
                    return Err(Error::Unavailable(DAMAGED.into()));
                }
                Err(Error::Backend { source })
            }
            Ok(answer) => answer,
            Err(_) => match index.verify() {
                Some(why) => {
                    self.damaged(&index, why);
                    Err(Error::Unavailable(DAMAGED.into()))
                }
                // Intact files: a bug, not damage (rebuilding would not help).
                None => Err(Error::backend(std::io::Error::other("a search panicked"))),
            },
        }
    }

    fn size_bytes(&self) -> u64 {
        self.current().size_bytes()
    }
}
