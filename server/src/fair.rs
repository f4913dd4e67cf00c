//! Shared work handed out fairly between workspaces (DESIGN 10): a pool of slots (extractions
//! at once, OCR processes at once) whose next free slot goes to the waiting workspace holding
//! the fewest, so one workspace's queue delays another's first file by at most one job.
//!
//! [`ExtractionTurns`] is what an extraction is given ([`inlet_core::extract::Turns`]): its
//! workspace's extraction slot, lent back while the extraction waits for and runs OCR, and the
//! OCR pool's turns.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, mpsc},
    time::Instant,
};

use inlet_core::{WorkspaceId, extract::Turns};
use parking_lot::Mutex;

/// One waiter: how to hand it a slot (`false` when it stopped waiting).
struct Waiter {
    id: u64,
    wake: Box<dyn FnOnce() -> bool + Send>,
}

#[derive(Default)]
struct Inner {
    size: usize,
    /// Slots held, per workspace (and in all).
    held: HashMap<WorkspaceId, usize>,
    in_use: usize,
    /// Waiters per workspace, in arrival order.
    queues: HashMap<WorkspaceId, VecDeque<Waiter>>,
    /// Workspaces with waiters, in the order they began waiting.
    waiting: VecDeque<WorkspaceId>,
    /// When each workspace holding or waiting was last handed a slot (a tick of `next_id`).
    served: HashMap<WorkspaceId, u64>,
    next_id: u64,
}

impl Inner {
    fn take(&mut self, workspace: WorkspaceId) {
        self.in_use += 1;
        *self.held.entry(workspace).or_default() += 1;
        self.next_id += 1;
        self.served.insert(workspace, self.next_id);
    }

    fn give_back(&mut self, workspace: WorkspaceId) {
        self.in_use = self.in_use.saturating_sub(1);
        if let Some(n) = self.held.get_mut(&workspace) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&workspace);
                if !self.queues.contains_key(&workspace) {
                    self.served.remove(&workspace);
                }
            }
        }
    }

    /// The waiting workspace holding the fewest slots; among equals, the one served least
    /// recently (a workspace that just gave a slot back does not win it again over one that
    /// waits for its first).
    fn next_workspace(&self) -> Option<(usize, WorkspaceId)> {
        self.waiting
            .iter()
            .enumerate()
            .min_by_key(|(_, w)| {
                (
                    self.held.get(w).copied().unwrap_or(0),
                    self.served.get(w).copied().unwrap_or(0),
                )
            })
            .map(|(i, w)| (i, *w))
    }

    /// Hands free slots to waiters, fairest first.
    fn hand_out(&mut self) {
        while self.in_use < self.size {
            let Some((at, workspace)) = self.next_workspace() else {
                return;
            };
            let queue = self.queues.entry(workspace).or_default();
            let waiter = queue.pop_front();
            if queue.is_empty() {
                self.queues.remove(&workspace);
                self.waiting.remove(at);
            }
            let Some(waiter) = waiter else {
                continue;
            };
            self.take(workspace);
            if !(waiter.wake)() {
                self.give_back(workspace);
            }
        }
    }

    /// Removes waiter `id` of `workspace`; `false` when it is no longer queued (it was handed
    /// a slot).
    fn forget(&mut self, workspace: WorkspaceId, id: u64) -> bool {
        let Some(queue) = self.queues.get_mut(&workspace) else {
            return false;
        };
        let Some(at) = queue.iter().position(|w| w.id == id) else {
            return false;
        };
        queue.remove(at);
        if queue.is_empty() {
            self.queues.remove(&workspace);
            self.waiting.retain(|w| *w != workspace);
            if !self.held.contains_key(&workspace) {
                self.served.remove(&workspace);
            }
        }
        true
    }
}

/// A pool of `size` slots shared fairly between workspaces.
pub struct FairPool {
    inner: Mutex<Inner>,
}

/// A slot of a [`FairPool`], given back when dropped.
pub struct FairPermit {
    pool: Arc<FairPool>,
    workspace: WorkspaceId,
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        let mut inner = self.pool.inner.lock();
        inner.give_back(self.workspace);
        inner.hand_out();
    }
}

impl FairPool {
    /// A pool of `size` slots (at least one).
    pub fn new(size: usize) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner {
                size: size.max(1),
                ..Inner::default()
            }),
        })
    }

    /// Slots in use and requests waiting, for metrics and tests.
    pub fn load(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.in_use, inner.queues.values().map(VecDeque::len).sum())
    }

    /// Takes a slot at once when one is free and nobody waits; otherwise queues `wake` and
    /// answers its id.
    fn take_or_queue(
        &self,
        workspace: WorkspaceId,
        wake: Box<dyn FnOnce() -> bool + Send>,
    ) -> Option<u64> {
        let mut inner = self.inner.lock();
        if inner.in_use < inner.size && inner.waiting.is_empty() {
            inner.take(workspace);
            return None;
        }
        inner.next_id += 1;
        let id = inner.next_id;
        if !inner.queues.contains_key(&workspace) {
            inner.waiting.push_back(workspace);
        }
        inner
            .queues
            .entry(workspace)
            .or_default()
            .push_back(Waiter { id, wake });
        inner.hand_out();
        Some(id)
    }

    fn permit(self: &Arc<Self>, workspace: WorkspaceId) -> FairPermit {
        FairPermit {
            pool: self.clone(),
            workspace,
        }
    }

    /// A slot for `workspace` only when nobody waits and another slot stays free after it (the
    /// one slot of a pool of one when it is free): for work below every waiting request.
    pub fn try_acquire_spare(self: &Arc<Self>, workspace: WorkspaceId) -> Option<FairPermit> {
        let mut inner = self.inner.lock();
        let spare = inner.in_use + 1 < inner.size || (inner.size == 1 && inner.in_use == 0);
        if !spare || !inner.waiting.is_empty() {
            return None;
        }
        inner.take(workspace);
        drop(inner);
        Some(self.permit(workspace))
    }

    /// Waits for a slot for `workspace`. Cancel-safe: a slot handed to a caller that stopped
    /// waiting goes to the next.
    pub async fn acquire(self: &Arc<Self>, workspace: WorkspaceId) -> FairPermit {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let Some(id) = self.take_or_queue(workspace, Box::new(move || tx.send(()).is_ok())) else {
            return self.permit(workspace);
        };
        // Dropped unfinished (the request went away): leave the queue, or give back the slot
        // handed over meanwhile.
        struct Waiting<'a> {
            pool: &'a Arc<FairPool>,
            workspace: WorkspaceId,
            id: u64,
            done: bool,
        }
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                if self.done {
                    return;
                }
                let mut inner = self.pool.inner.lock();
                if !inner.forget(self.workspace, self.id) {
                    inner.give_back(self.workspace);
                    inner.hand_out();
                }
            }
        }
        let mut waiting = Waiting {
            pool: self,
            workspace,
            id,
            done: false,
        };
        // The sender lives in the queue until it is used, so the channel cannot close unsent.
        let _ = rx.await;
        waiting.done = true;
        self.permit(workspace)
    }

    /// Waits on this thread until `deadline` for a slot for `workspace`; `None` when the
    /// deadline passed first.
    pub fn acquire_blocking(
        self: &Arc<Self>,
        workspace: WorkspaceId,
        deadline: Instant,
    ) -> Option<FairPermit> {
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let Some(id) = self.take_or_queue(workspace, Box::new(move || tx.send(()).is_ok())) else {
            return Some(self.permit(workspace));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if rx.recv_timeout(left).is_ok() {
            return Some(self.permit(workspace));
        }
        let mut inner = self.inner.lock();
        if inner.forget(workspace, id) {
            return None;
        }
        // Handed a slot just as the deadline passed: it is ours.
        drop(inner);
        Some(self.permit(workspace))
    }
}

/// What one extraction of `workspace` shares: its extraction slot (held from the start, lent
/// back while OCR is waited for and runs) and the OCR pool.
pub struct ExtractionTurns(Arc<Shared>);

struct Shared {
    workspace: WorkspaceId,
    extraction: Arc<FairPool>,
    ocr: Arc<FairPool>,
    slot: Mutex<Option<FairPermit>>,
}

impl std::fmt::Debug for ExtractionTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractionTurns")
            .field("workspace", &self.0.workspace)
            .finish_non_exhaustive()
    }
}

impl ExtractionTurns {
    /// Turns for an extraction holding `slot` of `extraction`.
    pub fn new(slot: FairPermit, extraction: Arc<FairPool>, ocr: Arc<FairPool>) -> Self {
        Self(Arc::new(Shared {
            workspace: slot.workspace,
            extraction,
            ocr,
            slot: Mutex::new(Some(slot)),
        }))
    }
}

/// Takes the extraction slot again when dropped ([`Turns::lend_slot`]).
struct Lent {
    shared: Arc<Shared>,
    deadline: Instant,
}

impl Drop for Lent {
    fn drop(&mut self) {
        let shared = &self.shared;
        let slot = shared
            .extraction
            .acquire_blocking(shared.workspace, self.deadline);
        *shared.slot.lock() = slot;
    }
}

impl Turns for ExtractionTurns {
    fn lend_slot(&self, deadline: Instant) -> Box<dyn Send> {
        drop(self.0.slot.lock().take());
        Box::new(Lent {
            shared: self.0.clone(),
            deadline,
        })
    }

    fn ocr_turn(&self, deadline: Instant) -> Option<Box<dyn Send>> {
        self.0
            .ocr
            .acquire_blocking(self.0.workspace, deadline)
            .map(|p| Box::new(p) as Box<dyn Send>)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use uuid::Uuid;

    use super::*;

    #[tokio::test]
    async fn the_next_slot_goes_to_the_workspace_holding_fewest() {
        let pool = FairPool::new(2);
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let first = pool.acquire(a).await;
        let second = pool.acquire(a).await;
        // Ten more of a's wait, then one of b's.
        let mut queued = Vec::new();
        for _ in 0..10 {
            let pool = pool.clone();
            queued.push(tokio::spawn(async move { pool.acquire(a).await }));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let pool_b = pool.clone();
        let b_waits = tokio::spawn(async move { pool_b.acquire(b).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(pool.load(), (2, 11));
        drop(first);
        let b_slot = tokio::time::timeout(Duration::from_secs(1), b_waits)
            .await
            .expect("b is served by the first slot freed")
            .expect("task");
        assert_eq!(pool.load(), (2, 10));
        drop((second, b_slot));
        for q in queued {
            drop(q.await.expect("a's turn comes"));
        }
        assert_eq!(pool.load(), (0, 0));
    }

    #[tokio::test]
    async fn a_slot_given_back_goes_to_the_workspace_waiting_for_its_first() {
        // One slot: a's job ends while a and b both wait; b's first file goes next.
        let pool = FairPool::new(1);
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let running = pool.acquire(a).await;
        let next_of_a = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.acquire(a).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let first_of_b = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.acquire(b).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(running);
        let b_slot = tokio::time::timeout(Duration::from_secs(1), first_of_b)
            .await
            .expect("b is served first")
            .expect("task");
        assert!(!next_of_a.is_finished());
        drop(b_slot);
        drop(next_of_a.await.expect("then a"));
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_no_slot_behind() {
        let pool = FairPool::new(1);
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let held = pool.acquire(a).await;
        let gone = tokio::time::timeout(Duration::from_millis(20), pool.acquire(b)).await;
        assert!(gone.is_err());
        let blocking = {
            let pool = pool.clone();
            tokio::task::spawn_blocking(move || {
                pool.acquire_blocking(b, Instant::now() + Duration::from_millis(20))
                    .is_none()
            })
        };
        assert!(blocking.await.expect("task"), "the deadline passed first");
        drop(held);
        assert_eq!(pool.load(), (0, 0));
        let _again = pool.acquire(b).await;
        assert_eq!(pool.load(), (1, 0));
    }
}
