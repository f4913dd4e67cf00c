//! Documents ([`inlet_core::store::Documents`]): a map by collection and key; a batch applies
//! under the store's lock when every expectation holds.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::Result;
use inlet_core::store::{
    Documents,
    documents::{DocWrite, Document, KeyRange, Op},
};

#[async_trait]
impl Documents for MemoryStore {
    async fn get_document(&self, collection: &str, key: &str) -> Result<Option<Document>> {
        let st = self.state.lock();
        Ok(st
            .documents
            .get(&(collection.to_string(), key.to_string()))
            .map(|(body, revision)| Document {
                key: key.to_string(),
                body: body.clone(),
                revision: *revision,
            }))
    }

    async fn scan_documents(
        &self,
        collection: &str,
        range: KeyRange<'_>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        let st = self.state.lock();
        let from = match range.after {
            Some(a) if a > range.prefix => a,
            _ => range.prefix,
        };
        let start = (collection.to_string(), from.to_string());
        Ok(st
            .documents
            .range(start..)
            .take_while(|((c, k), _)| c == collection && k.starts_with(range.prefix))
            .filter(|((_, k), _)| range.holds(k))
            .take(limit)
            .map(|((_, key), (body, revision))| Document {
                key: key.clone(),
                body: body.clone(),
                revision: *revision,
            })
            .collect())
    }

    async fn write_documents(&self, writes: &[DocWrite]) -> Result<bool> {
        let mut st = self.state.lock();
        // Checked against the batch's own earlier writes, then applied together.
        let mut staged = std::collections::HashMap::new();
        for w in writes {
            let id = (w.collection.to_string(), w.key.clone());
            let stored = match staged.get(&id) {
                Some(s) => *s,
                None => st.documents.get(&id).map(|(_, r)| *r),
            };
            if !w.expect.holds(stored) {
                return Ok(false);
            }
            let after = match w.op {
                Op::Put(_) => Some(stored.unwrap_or(0) + 1),
                Op::Delete => None,
                Op::Check => stored,
            };
            staged.insert(id, after);
        }
        for w in writes {
            let id = (w.collection.to_string(), w.key.clone());
            match &w.op {
                Op::Put(body) => {
                    let revision = st.documents.get(&id).map_or(0, |(_, r)| *r) + 1;
                    st.documents.insert(id, (body.clone(), revision));
                }
                Op::Delete => {
                    st.documents.remove(&id);
                }
                Op::Check => {}
            }
        }
        Ok(true)
    }
}
