//! Sync runs: open / push / close (spec 3, DESIGN 5) as pure transition functions that every store
//! calls inside its own atomic section.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{Error, Result, time::Timestamp};

/// How a sync is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OpenOperation {
    /// The first sync of an object type.
    StartInitial,
    /// Every later sync.
    Start,
}

/// How a sync is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CloseOperation {
    /// Full sync: records not uploaded or touched in it are removed.
    Complete,
    /// Incremental sync: nothing is removed.
    CompleteIncremental,
    /// The run failed: nothing is removed.
    Fail,
}

/// State of a sync run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SyncState {
    /// Accepting uploads and touches.
    Open,
    /// Closed with COMPLETE or COMPLETE_INCREMENTAL.
    Completed,
    /// Closed with FAIL.
    Failed,
}

/// What happened during a sync run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncCounters {
    /// Uploads that stored new content (created, replaced or revived).
    pub uploaded: u64,
    /// Touches that succeeded.
    pub touched: u64,
    /// Uploads skipped because the checksum was unchanged.
    pub unchanged: u64,
    /// Uploads whose extraction failed (stored with empty content).
    pub extraction_failures: u64,
    /// Records removed when the sync closed.
    pub removed: u64,
}

/// What a write did, for the counters of the sync it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncEvent {
    /// A stored upload; `extraction_failed` when its content is empty because extraction failed.
    Uploaded {
        /// Extraction failed for this upload.
        extraction_failed: bool,
    },
    /// A touch.
    Touched,
    /// A checksum-equal upload.
    Unchanged,
}

impl SyncCounters {
    /// Counts one write event.
    pub fn count(&mut self, event: SyncEvent) {
        match event {
            SyncEvent::Uploaded { extraction_failed } => {
                self.uploaded += 1;
                self.extraction_failures += u64::from(extraction_failed);
            }
            SyncEvent::Touched => self.touched += 1,
            SyncEvent::Unchanged => self.unchanged += 1,
        }
    }
}

/// One sync run of an object type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncRun {
    /// The object type synced.
    pub object_type_id: Uuid,
    /// 1 for the first sync, then incremented.
    pub sync_number: i64,
    /// The opening operation.
    pub operation: OpenOperation,
    /// Current state.
    pub state: SyncState,
    /// The closing operation, once closed.
    pub close_operation: Option<CloseOperation>,
    /// When it was opened.
    pub started_at: Timestamp,
    /// When it was closed.
    pub closed_at: Option<Timestamp>,
    /// What happened during it.
    pub counters: SyncCounters,
    /// Records kept by the close (live records of the object type after it).
    pub kept: Option<u64>,
}

/// Decides the number of a new sync given the object type's latest sync (`None` if it never had
/// one). START_INITIAL only when there was none; START only after one; never while one is open.
pub fn open(latest: Option<&SyncRun>, op: OpenOperation) -> Result<i64> {
    match (latest, op) {
        (Some(run), _) if run.state == SyncState::Open => Err(Error::conflict(format!(
            "sync {} is still open; close it before opening another",
            run.sync_number
        ))),
        (None, OpenOperation::StartInitial) => Ok(1),
        (None, OpenOperation::Start) => Err(Error::conflict(
            "START needs an earlier sync; open the first sync with START_INITIAL",
        )),
        (Some(run), OpenOperation::StartInitial) => Err(Error::conflict(format!(
            "START_INITIAL is only for the first sync; sync {} already happened, use START",
            run.sync_number
        ))),
        (Some(run), OpenOperation::Start) => Ok(run.sync_number + 1),
    }
}

/// Decides the state a sync closes into; only an open sync can be closed.
pub fn close(run: &SyncRun, op: CloseOperation) -> Result<SyncState> {
    if run.state != SyncState::Open {
        return Err(Error::conflict(format!(
            "sync {} is already closed",
            run.sync_number
        )));
    }
    Ok(match op {
        CloseOperation::Complete | CloseOperation::CompleteIncremental => SyncState::Completed,
        CloseOperation::Fail => SyncState::Failed,
    })
}

/// Whether closing with `op` removes records that did not join the sync.
pub fn removes_stale(op: CloseOperation) -> bool {
    op == CloseOperation::Complete
}

/// Whether a live record whose last sync is `record_sync` is removed when sync `closing` closes
/// with COMPLETE.
pub fn is_stale(record_sync: i64, closing: i64) -> bool {
    record_sync != closing
}

/// Checks the syncNumber of an upload or touch against the object type's open sync: it must name
/// exactly the open one.
pub fn check_sync_number(open_sync: Option<i64>, given: i64) -> Result<()> {
    match open_sync {
        Some(n) if n == given => Ok(()),
        Some(n) => Err(Error::conflict(format!(
            "syncNumber {given} is not the open sync; the open sync is {n}"
        ))),
        None => Err(Error::conflict(format!(
            "syncNumber {given} is not open; no sync is open for this object type"
        ))),
    }
}

/// The sync a write acts on: a given syncNumber must be the open sync; without one, a write
/// joins the open sync if there is one (DESIGN 5: "the current sync"), so a COMPLETE close never
/// removes a record its caller just wrote or touched. `None` when no sync is open and none given.
pub fn resolve(given: Option<i64>, open_sync: Option<i64>) -> Result<Option<i64>> {
    match given {
        Some(n) => check_sync_number(open_sync, n).map(|()| Some(n)),
        None => Ok(open_sync),
    }
}

/// Checks a mass-removal share, in percent: a number from 0 to 100.
pub fn check_removal_share(percent: f64) -> Result<f64> {
    if (0.0..=100.0).contains(&percent) {
        Ok(percent)
    } else {
        Err(Error::invalid(format!(
            "completeMaxRemoval is a percentage from 0 to 100; got {percent}"
        )))
    }
}

/// The mass-removal guard: refuses a COMPLETE close that would remove more than `max_percent`
/// of the object type's `live` records (`removing` of them), so a connector whose listing came
/// back empty by mistake does not wipe the object type. `None` allows any removal.
pub fn check_mass_removal(removing: u64, live: u64, max_percent: Option<f64>) -> Result<()> {
    let Some(max) = max_percent else {
        return Ok(());
    };
    if removing == 0 || live == 0 {
        return Ok(());
    }
    let share = removing as f64 * 100.0 / live as f64;
    if share <= max {
        return Ok(());
    }
    Err(Error::conflict(format!(
        "this COMPLETE close would remove {removing} of the object type's {live} live records \
         ({share:.1}%), more than the {max}% the service allows (--complete-max-removal); the \
         sync stays open. If the removal is meant, close again with \"allowMassRemoval\": true; \
         otherwise check what fed this sync, then close it again or with FAIL (removes nothing)"
    )))
}

/// The object type's current sync number: the open sync, else the latest one, else 0.
pub fn current_number(latest: Option<&SyncRun>) -> i64 {
    latest.map_or(0, |r| r.sync_number)
}

/// The sync a write joins: the given (open) sync, or without one, for a new (or revived) record
/// the latest sync number and for a live record its current membership.
pub fn membership(given: Option<i64>, latest: i64, live: Option<i64>) -> i64 {
    given.or(live).unwrap_or(latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: i64, state: SyncState) -> SyncRun {
        SyncRun {
            object_type_id: Uuid::nil(),
            sync_number: n,
            operation: OpenOperation::Start,
            state,
            close_operation: None,
            started_at: crate::time::now(),
            closed_at: None,
            counters: SyncCounters::default(),
            kept: None,
        }
    }

    #[test]
    fn mass_removal_guard_compares_the_share() {
        assert!(check_mass_removal(100, 100, None).is_ok());
        assert!(check_mass_removal(0, 100, Some(0.0)).is_ok());
        assert!(check_mass_removal(10, 0, Some(0.0)).is_ok());
        assert!(check_mass_removal(50, 100, Some(50.0)).is_ok());
        let Err(Error::Conflict(m)) = check_mass_removal(51, 100, Some(50.0)) else {
            panic!("51% removed under a 50% guard");
        };
        assert!(
            m.contains("51 of") && m.contains("100 live") && m.contains("allowMassRemoval"),
            "{m}"
        );
    }

    #[test]
    fn open_follows_the_state_machine() {
        use OpenOperation::*;
        use SyncState::*;
        assert_eq!(open(None, StartInitial).unwrap(), 1);
        assert!(matches!(open(None, Start), Err(Error::Conflict(_))));
        for closed in [Completed, Failed] {
            assert_eq!(open(Some(&run(3, closed)), Start).unwrap(), 4);
            assert!(matches!(
                open(Some(&run(3, closed)), StartInitial),
                Err(Error::Conflict(_))
            ));
        }
        for op in [Start, StartInitial] {
            assert!(matches!(
                open(Some(&run(1, Open)), op),
                Err(Error::Conflict(_))
            ));
        }
    }

    #[test]
    fn close_only_an_open_sync() {
        use CloseOperation::*;
        let open_run = run(1, SyncState::Open);
        assert_eq!(close(&open_run, Complete).unwrap(), SyncState::Completed);
        assert_eq!(
            close(&open_run, CompleteIncremental).unwrap(),
            SyncState::Completed
        );
        assert_eq!(close(&open_run, Fail).unwrap(), SyncState::Failed);
        for state in [SyncState::Completed, SyncState::Failed] {
            for op in [Complete, CompleteIncremental, Fail] {
                assert!(matches!(close(&run(1, state), op), Err(Error::Conflict(_))));
            }
        }
    }

    #[test]
    fn only_complete_removes_and_only_stale_records() {
        assert!(removes_stale(CloseOperation::Complete));
        assert!(!removes_stale(CloseOperation::CompleteIncremental));
        assert!(!removes_stale(CloseOperation::Fail));
        assert!(is_stale(1, 2));
        assert!(!is_stale(2, 2));
    }

    #[test]
    fn sync_number_must_be_the_open_one() {
        assert!(check_sync_number(Some(2), 2).is_ok());
        assert!(matches!(
            check_sync_number(Some(2), 1),
            Err(Error::Conflict(_))
        ));
        assert!(matches!(
            check_sync_number(None, 1),
            Err(Error::Conflict(_))
        ));
    }

    #[test]
    fn writes_without_a_number_join_the_open_sync() {
        assert_eq!(resolve(None, Some(3)).unwrap(), Some(3));
        assert_eq!(resolve(None, None).unwrap(), None);
        assert_eq!(resolve(Some(3), Some(3)).unwrap(), Some(3));
        assert!(resolve(Some(2), Some(3)).is_err());
        assert!(resolve(Some(2), None).is_err());
    }

    #[test]
    fn membership_without_sync_number() {
        assert_eq!(membership(Some(5), 5, Some(3)), 5);
        assert_eq!(membership(None, 5, Some(3)), 3);
        assert_eq!(membership(None, 5, None), 5);
        assert_eq!(membership(None, 0, None), 0);
        assert_eq!(current_number(None), 0);
        assert_eq!(current_number(Some(&run(7, SyncState::Completed))), 7);
    }

    #[test]
    fn counters_count_events() {
        let mut c = SyncCounters::default();
        c.count(SyncEvent::Uploaded {
            extraction_failed: true,
        });
        c.count(SyncEvent::Uploaded {
            extraction_failed: false,
        });
        c.count(SyncEvent::Touched);
        c.count(SyncEvent::Unchanged);
        assert_eq!(
            c,
            SyncCounters {
                uploaded: 2,
                touched: 1,
                unchanged: 1,
                extraction_failures: 1,
                removed: 0
            }
        );
    }
}
