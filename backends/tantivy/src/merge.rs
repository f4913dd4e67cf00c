//! When segments are merged: as tantivy's log merge policy decides, but never into a segment
//! holding more than the searching cores' share of the index. A search visits its segments on
//! every core at once; one segment holding most of the records (what the log policy makes of a
//! large index: 8 segments of 100,000 become one of 800,000) leaves the other cores idle while
//! a broad query counts and facets its matches.

use std::collections::HashMap;

use tantivy::{
    index::{SegmentId, SegmentMeta},
    indexer::{LogMergePolicy, MergeCandidate, MergePolicy},
};

/// Records a segment may always grow to: below this a segment is searched quickly whatever
/// the cores.
pub const MIN_SHARE: u64 = 100_000;

/// [`LogMergePolicy`] with segments capped at the larger of [`MIN_SHARE`] and the live
/// records divided by `cores`.
#[derive(Debug, Default)]
pub struct SharedMergePolicy {
    log: LogMergePolicy,
    cores: usize,
}

impl SharedMergePolicy {
    /// The policy for an index searched on `cores` threads.
    pub fn new(cores: usize) -> SharedMergePolicy {
        SharedMergePolicy {
            log: LogMergePolicy::default(),
            cores: cores.max(1),
        }
    }
}

impl MergePolicy for SharedMergePolicy {
    fn compute_merge_candidates(&self, segments: &[SegmentMeta]) -> Vec<MergeCandidate> {
        let live: u64 = segments.iter().map(|s| u64::from(s.num_docs())).sum();
        let cap = (live / self.cores as u64).max(MIN_SHARE);
        let sizes: HashMap<SegmentId, u32> =
            segments.iter().map(|s| (s.id(), s.num_docs())).collect();
        self.log
            .compute_merge_candidates(segments)
            .into_iter()
            .filter_map(|MergeCandidate(ids)| {
                let sized = ids
                    .into_iter()
                    .map(|id| (id, sizes.get(&id).copied().unwrap_or(0)))
                    .collect();
                within(sized, cap).map(MergeCandidate)
            })
            .collect()
    }
}

/// The smallest segments of a candidate merge whose records together stay within `cap`;
/// `None` when fewer than two fit (nothing to merge).
fn within(mut segments: Vec<(SegmentId, u32)>, cap: u64) -> Option<Vec<SegmentId>> {
    segments.sort_by_key(|&(_, docs)| docs);
    let mut total = 0u64;
    let kept: Vec<SegmentId> = segments
        .into_iter()
        .take_while(|&(_, docs)| {
            total += u64::from(docs);
            total <= cap
        })
        .map(|(id, _)| id)
        .collect();
    (kept.len() >= 2).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(sizes: &[u32]) -> Vec<(SegmentId, u32)> {
        sizes
            .iter()
            .map(|&n| (SegmentId::generate_random(), n))
            .collect()
    }

    #[test]
    fn a_merge_keeps_the_smallest_segments_that_fit() {
        let s = segments(&[64_000, 10_000, 64_000, 64_000, 12_000]);
        let kept = within(s.clone(), 100_000).expect("merge");
        // The smallest that fit: 10k + 12k + 64k = 86k; a second 64k would not.
        assert_eq!(kept, vec![s[1].0, s[4].0, s[0].0]);
        let all = within(s.clone(), 1_000_000).expect("merge");
        assert_eq!(all.len(), 5);
    }

    #[test]
    fn no_merge_when_fewer_than_two_fit() {
        assert_eq!(within(segments(&[80_000, 70_000]), 100_000), None);
        assert_eq!(within(segments(&[150_000, 10]), 100_000), None);
        assert_eq!(within(segments(&[]), 100_000), None);
    }
}
