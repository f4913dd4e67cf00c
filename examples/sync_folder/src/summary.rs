//! What a run did, and the summary it prints.

use std::{fmt, time::Duration};

use indicatif::HumanBytes;

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Only GET requests were sent.
    pub dry_run: bool,
    /// Files uploaded (stored content), or that would be.
    pub uploaded: u64,
    /// Records touched (unchanged), or that would be.
    pub touched: u64,
    /// Records the COMPLETE close removed as the server reported it (`None` when the sync was
    /// closed with FAIL or not closed); in a dry run, the records that would be removed.
    pub removed: Option<u64>,
    /// Files or folders that failed.
    pub failed: u64,
    /// Files stored with empty content because the server could not read them.
    pub unreadable: u64,
    /// The first few of those: externalId and the server's reason.
    pub unreadable_examples: Vec<(String, String)>,
    /// Files not attempted because an earlier failure made going on pointless.
    pub not_attempted: u64,
    /// File bytes handed to the connection (in a dry run: bytes that would be uploaded).
    pub bytes: u64,
    /// Folders created or corrected.
    pub folders_put: u64,
    /// Folders deleted because their directory is gone.
    pub folders_removed: u64,
    /// The sync this run used and how it was closed.
    pub sync: Option<(i64, Closed)>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// How the run's sync was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// With COMPLETE: records not seen were removed.
    Complete,
    /// With FAIL: nothing was removed.
    Fail,
    /// Closing failed; the sync may still be open.
    NotClosed,
}

impl Summary {
    /// Whether the run did all it should (the exit status is 0 exactly then).
    pub fn succeeded(&self) -> bool {
        self.failed == 0
            && !self.interrupted
            && (self.dry_run || matches!(self.sync, Some((_, Closed::Complete))))
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let elapsed = self.elapsed.as_secs_f64();
        if self.dry_run {
            return write!(
                f,
                "summary (dry run, nothing changed): would upload {}, would touch {}, would \
                 remove {}, failed {}, bytes to send {} ({}), folders to put {}, folders to \
                 remove {}, elapsed {elapsed:.2}s",
                self.uploaded,
                self.touched,
                self.removed.unwrap_or(0),
                self.failed,
                self.bytes,
                HumanBytes(self.bytes),
                self.folders_put,
                self.folders_removed,
            );
        }
        let removed = match (self.removed, self.sync) {
            (Some(n), _) => n.to_string(),
            (None, Some((n, Closed::Fail))) => format!("none (sync {n} closed with FAIL)"),
            (None, Some((n, Closed::NotClosed))) => format!("none (sync {n} not closed)"),
            _ => "none".into(),
        };
        write!(
            f,
            "summary: uploaded {}, touched {}, removed {removed}, failed {}, bytes sent {} ({}), \
             folders put {}, folders removed {}, elapsed {elapsed:.2}s",
            self.uploaded,
            self.touched,
            self.failed,
            self.bytes,
            HumanBytes(self.bytes),
            self.folders_put,
            self.folders_removed,
        )?;
        if self.not_attempted > 0 {
            write!(f, ", not attempted {}", self.not_attempted)?;
        }
        if self.interrupted {
            write!(f, " (interrupted)")?;
        }
        if self.unreadable > 0 {
            write!(
                f,
                "\nunreadable {} (stored with empty content, not found by search):",
                self.unreadable
            )?;
            for (id, why) in &self.unreadable_examples {
                write!(f, "\n  {id}: {why}")?;
            }
            let more = self.unreadable - self.unreadable_examples.len() as u64;
            if more > 0 {
                write!(f, "\n  and {more} more (--verbose lists every one)")?;
            }
        }
        Ok(())
    }
}
