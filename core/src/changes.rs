//! The change feed: a workspace's record changes in commit order, for consumers besides search
//! (an embedding pipeline, an archive, a second index). It reads the same ordered write log the
//! search index follows ([`crate::index`]): one mechanism, not two.
//!
//! A walk without a cursor opens with a snapshot: every live record whose last write is at or
//! before the log head read when the walk began, as UPSERTs in record id order. It then reads
//! the log after that head, in commit order: a record's write is an UPSERT (a REMOVE when the
//! write was a DELETE), a COMPLETE close is one REMOVE per record it removed (in record id order,
//! so a page may end inside a close), and a deleted source is one SOURCE_DELETED. The log is
//! compacted by record, so a record shows once per walk at its last write, carrying its state
//! now; a consumer applying the changes in order ends at the store's state.
//!
//! Retention: entries that are not one record's (closes, source deletions) are purged once
//! older than the operator's retention ([`RecordStore::purge_log`]); the log's floor is the
//! last position purged. A cursor behind the floor could miss a removal, so it is
//! [`Error::Gone`] and the consumer starts again without one.

use uuid::Uuid;

use crate::{
    Error, RecordStore, Result,
    index::{Change, LogScope, Position, Removed},
    ingest::page_limit,
    record::Record,
};

/// Where a walk of the feed stands; its text form is the opaque `cursor` of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// Nothing read yet: the walk opens with a snapshot.
    Start,
    /// Inside the snapshot of the records written at or before `head`, after record `after`.
    Snapshot {
        /// The log head read when the walk began.
        head: Position,
        /// The last record given.
        after: Option<Uuid>,
    },
    /// Every entry at or before `after` given.
    Log {
        /// The last position given.
        after: Position,
    },
    /// Every entry before `position` given, and the close at `position` up to record `after`.
    Closing {
        /// The close's position.
        position: Position,
        /// The last removed record given.
        after: Uuid,
    },
}

impl Cursor {
    /// The cursor's text form.
    pub fn encode(&self) -> String {
        match self {
            Cursor::Start => "s".into(),
            Cursor::Snapshot { head, after: None } => format!("s{head}"),
            Cursor::Snapshot {
                head,
                after: Some(id),
            } => format!("s{head}.{}", id.simple()),
            Cursor::Log { after } => format!("c{after}"),
            Cursor::Closing { position, after } => format!("x{position}.{}", after.simple()),
        }
    }

    /// Reads a cursor this feed returned.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || Error::invalid("cursor is not one this feed returned");
        if text == "s" {
            return Ok(Cursor::Start);
        }
        let (kind, rest) = text.split_at_checked(1).ok_or_else(bad)?;
        let (pos, id) = match rest.split_once('.') {
            Some((p, i)) => (p, Some(i)),
            None => (rest, None),
        };
        if pos.is_empty() || !pos.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let pos: Position = pos.parse().map_err(|_| bad())?;
        let id = id
            .map(|i| {
                if i.len() == 32 {
                    Uuid::try_parse(i).map_err(|_| bad())
                } else {
                    Err(bad())
                }
            })
            .transpose()?;
        match (kind, id) {
            ("s", after) => Ok(Cursor::Snapshot { head: pos, after }),
            ("c", None) => Ok(Cursor::Log { after: pos }),
            ("x", Some(after)) if pos > 0 => Ok(Cursor::Closing {
                position: pos,
                after,
            }),
            _ => Err(bad()),
        }
    }

    /// The log position the walk resumes after (`None` before it began).
    fn position(&self) -> Option<Position> {
        match *self {
            Cursor::Start => None,
            Cursor::Snapshot { head, .. } => Some(head),
            Cursor::Log { after } => Some(after),
            Cursor::Closing { position, .. } => Some(position - 1),
        }
    }
}

/// One change of the feed.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedChange {
    /// The record was written (created, stored again or revived); this is its state now.
    Upsert(Box<Record>),
    /// The record was deleted or removed by a COMPLETE close.
    Remove(Removed),
    /// The source was deleted with every record of it.
    SourceDeleted {
        /// The source.
        source_id: Uuid,
    },
}

impl FeedChange {
    /// Whether `viewer` may read it (a deleted source's news is everyone's).
    pub fn readable_by(&self, viewer: &crate::access::Viewer) -> bool {
        match self {
            Self::SourceDeleted { .. } => true,
            Self::Upsert(record) => record.readable_by(viewer),
            Self::Remove(r) => {
                matches!(viewer, crate::access::Viewer::All)
                    || viewer.reads(&crate::access::record_terms(
                        r.access.as_deref(),
                        r.source_id,
                        r.object_type_id,
                    ))
            }
        }
    }
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedPage {
    /// The changes, in commit order (the snapshot in record id order).
    pub changes: Vec<FeedChange>,
    /// Where the next read continues; always present.
    pub cursor: Cursor,
}

/// Reads up to `limit` changes (default 100, at most 1,000) of `scope` after `cursor`.
pub async fn read(
    store: &dyn RecordStore,
    scope: &LogScope,
    cursor: Cursor,
    limit: Option<u64>,
) -> Result<FeedPage> {
    let limit = page_limit(limit)?;
    if let Some(position) = cursor.position() {
        let floor = store.log_floor().await?;
        if position < floor {
            // The floor is a position in the log every workspace shares: not for the caller.
            return Err(Error::Gone(
                "the cursor is behind the change feed's retention; start again without a cursor"
                    .into(),
            ));
        }
        if position > store.log_head().await? {
            return Err(Error::invalid("cursor is not one this feed returned"));
        }
    }
    let mut page = FeedPage {
        changes: Vec::new(),
        cursor,
    };
    if page.cursor == Cursor::Start {
        page.cursor = Cursor::Snapshot {
            head: store.log_head().await?,
            after: None,
        };
    }
    while page.changes.len() < limit {
        let more = match page.cursor {
            Cursor::Start => false,
            Cursor::Snapshot { head, after } => {
                let room = limit - page.changes.len();
                let records = store.scan_live_in(scope, head, after, room).await?;
                let complete = records.len() < room;
                if let Some(last) = records.last() {
                    page.cursor = Cursor::Snapshot {
                        head,
                        after: Some(last.id),
                    };
                }
                page.changes
                    .extend(records.into_iter().map(|r| FeedChange::Upsert(Box::new(r))));
                if complete {
                    page.cursor = Cursor::Log { after: head };
                }
                true
            }
            Cursor::Closing { position, after } => {
                let entry = store.log_after_in(scope, position - 1, 1).await?;
                match entry.changes.first() {
                    Some(close @ Change::Closed { .. }) if close.position() == position => {
                        expand_close(store, close, Some(after), &mut page, limit).await?;
                        true
                    }
                    // The close left the log (purged) since the check above.
                    _ => {
                        return Err(Error::Gone(
                            "the cursor is behind the change feed's retention; start again \
                             without a cursor"
                                .into(),
                        ));
                    }
                }
            }
            Cursor::Log { after } => read_log(store, scope, after, &mut page, limit).await?,
        };
        if !more {
            break;
        }
    }
    Ok(page)
}

/// Reads log entries after `after` into `page` until it holds `limit` changes; `true` when the
/// log may hold more than was read.
async fn read_log(
    store: &dyn RecordStore,
    scope: &LogScope,
    after: Position,
    page: &mut FeedPage,
    limit: usize,
) -> Result<bool> {
    let asked = limit - page.changes.len();
    let log = store.log_after_in(scope, after, asked).await?;
    for change in &log.changes {
        if page.changes.len() >= limit {
            return Ok(true);
        }
        match change {
            Change::Record { record, .. } => page.changes.push(if record.removed {
                FeedChange::Remove(Removed {
                    id: record.id,
                    source_id: record.source_id,
                    object_type_id: record.object_type.id,
                    external_id: record.external_id.clone(),
                    sync_number: record.sync_number,
                    access: record.access.clone(),
                })
            } else {
                FeedChange::Upsert(record.clone())
            }),
            Change::Closed { .. } => {
                if !expand_close(store, change, None, page, limit).await? {
                    return Ok(true);
                }
            }
            Change::SourceDeleted { source_id, .. } => {
                page.changes.push(FeedChange::SourceDeleted {
                    source_id: *source_id,
                });
            }
        }
        page.cursor = Cursor::Log {
            after: change.position(),
        };
    }
    if log.upto > after {
        page.cursor = Cursor::Log { after: log.upto };
    }
    Ok(log.changes.len() >= asked)
}

/// Gives the records a close removed, after `after`, until `page` holds `limit` changes;
/// `true` when the close was given whole.
async fn expand_close(
    store: &dyn RecordStore,
    close: &Change,
    mut after: Option<Uuid>,
    page: &mut FeedPage,
    limit: usize,
) -> Result<bool> {
    let Change::Closed {
        position,
        object_type_id,
        from_sync,
        to_sync,
    } = *close
    else {
        return Ok(true);
    };
    while page.changes.len() < limit {
        let room = limit - page.changes.len();
        let removed = store
            .closed_records(object_type_id, from_sync, to_sync, after, room)
            .await?;
        let complete = removed.len() < room;
        if let Some(last) = removed.last() {
            after = Some(last.id);
            page.cursor = Cursor::Closing {
                position,
                after: last.id,
            };
        }
        page.changes
            .extend(removed.into_iter().map(FeedChange::Remove));
        if complete {
            page.cursor = Cursor::Log { after: position };
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_strangers() {
        let id = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
        for c in [
            Cursor::Start,
            Cursor::Snapshot {
                head: 7,
                after: None,
            },
            Cursor::Snapshot {
                head: 0,
                after: Some(id),
            },
            Cursor::Log { after: 0 },
            Cursor::Log { after: u64::MAX },
            Cursor::Closing {
                position: 3,
                after: id,
            },
        ] {
            assert_eq!(Cursor::parse(&c.encode()).ok(), Some(c), "{}", c.encode());
        }
        for bad in [
            "",
            "c",
            "c-1",
            "c1.",
            "x0.12345678",
            "x3",
            "c3.12345678123456781234567812345678",
            "q1",
            "s1.zz",
            "c+1",
            "c99999999999999999999999",
        ] {
            assert!(
                matches!(Cursor::parse(bad), Err(Error::Invalid(_))),
                "{bad}"
            );
        }
    }
}
