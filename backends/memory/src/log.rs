//! The write log and the scans an index is rebuilt from.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::WriteLog;
use inlet_core::{
    Result, WorkspaceId,
    index::{LogPage, LogScope, Position, Removed},
    record::Record,
    time::Timestamp,
};
use uuid::Uuid;

#[async_trait]
impl WriteLog for MemoryStore {
    async fn log_head(&self) -> Result<Position> {
        Ok(self.state.lock().log.head)
    }

    async fn read_log(
        &self,
        scope: Option<&LogScope>,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        Ok(self.state.lock().read_log(scope, after, limit))
    }

    async fn closed_records(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>> {
        // Deleted records were logged when deleted; the rest in range went with the close.
        let st = self.state.lock();
        let mut removed: Vec<Removed> = st
            .records
            .get(&object_type_id)
            .map(|m| {
                m.values()
                    .filter(|r| !r.removed && (from_sync..to_sync).contains(&r.sync_number))
                    .filter(|r| after.is_none_or(|a| r.id > a))
                    .map(|r| Removed {
                        id: r.id,
                        source_id: r.source_id,
                        object_type_id,
                        external_id: r.external_id.clone(),
                        sync_number: r.sync_number,
                        access: r.access.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        removed.sort_unstable_by_key(|r| r.id);
        removed.truncate(limit);
        Ok(removed)
    }

    async fn scan_records(
        &self,
        scope: Option<&LogScope>,
        upto: Option<Position>,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        let st = self.state.lock();
        let mut out = Vec::new();
        for source in st
            .sources
            .iter()
            .filter(|s| scope.is_none_or(|scope| scope.holds(s.workspace_id, s.id)))
        {
            for ot in &source.object_types {
                for r in st.records.get(&ot.id).into_iter().flat_map(|m| m.values()) {
                    let written = st.log.at.get(&r.id).copied().unwrap_or(0);
                    if !st.gone(r)
                        && upto.is_none_or(|upto| written <= upto)
                        && after.is_none_or(|a| r.id > a)
                    {
                        out.push((source.workspace_id, st.view(&ot.name, r)));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|(_, r)| r.id);
        out.truncate(limit);
        Ok(out)
    }

    async fn log_floor(&self) -> Result<Position> {
        Ok(self.state.lock().log.floor)
    }

    async fn purge_log(&self, before: Timestamp) -> Result<Position> {
        let mut st = self.state.lock();
        let before = before.timestamp_millis();
        let log = &mut st.log;
        let sources = log.sources.iter().map(|(p, &(_, _, at))| (*p, at));
        let closes = log.closes.iter().map(|(p, c)| (*p, c.at));
        if let Some(newest) = sources
            .chain(closes)
            .filter(|&(_, at)| at < before)
            .map(|(p, _)| p)
            .max()
        {
            log.sources.retain(|p, _| *p > newest);
            log.closes.retain(|p, _| *p > newest);
            log.floor = log.floor.max(newest);
        }
        Ok(log.floor)
    }
}
