//! A crafted `WorkerView` for the policies' unit tests: chosen loads and
//! cached prefixes on the used ranks, every other worker idle and empty.

use std::cell::Cell;
use std::collections::BTreeMap;

use aisim_core::{RankLoad, Request};

use super::worker_view::WorkerView;

/// `n` workers of `dp` ranks.
pub(crate) struct CraftedView {
    n: u32,
    dp: u32,
    /// Per used (worker, rank): its load and the prompt tokens it has cached
    /// of any request.
    used: BTreeMap<(u32, u32), (RankLoad, u32)>,
    /// Whether it tells policies which workers are used (`visit_used`,
    /// `first_unused`), as the runtime's view does, or visits them all.
    lazy: bool,
    /// A worker that does not accept.
    closed: Option<u32>,
    /// `load` calls so far.
    pub looks: Cell<u64>,
}

/// A rank's load.
pub(crate) fn load(running: u32, waiting: u32, active_kv_blocks: u32, pending: u64) -> RankLoad {
    RankLoad {
        running,
        waiting,
        active_kv_blocks,
        pending_prefill_tokens: pending,
    }
}

impl CraftedView {
    /// Nothing used yet; lazy, every worker accepting.
    pub fn new(n: u32, dp: u32) -> CraftedView {
        CraftedView {
            n,
            dp,
            used: BTreeMap::new(),
            lazy: true,
            closed: None,
            looks: Cell::new(0),
        }
    }

    /// Rank `rank` of `worker` used with this load and cached prefix (its
    /// worker's other ranks used and idle).
    pub fn with(mut self, worker: u32, rank: u32, load: RankLoad, cached: u32) -> CraftedView {
        for r in 0..self.dp {
            self.used.entry((worker, r)).or_default();
        }
        self.used.insert((worker, rank), (load, cached));
        self
    }

    /// Visits every worker instead of saying which are used.
    pub fn eager(mut self) -> CraftedView {
        self.lazy = false;
        self
    }

    /// `worker` does not accept.
    pub fn closed(mut self, worker: u32) -> CraftedView {
        self.closed = Some(worker);
        self
    }

    /// Used workers, each once, by index.
    fn used_workers(&self) -> Vec<u32> {
        let mut w: Vec<u32> = self.used.keys().map(|k| k.0).collect();
        w.dedup();
        w
    }
}

impl WorkerView for CraftedView {
    fn workers(&self) -> u32 {
        self.n
    }
    fn dp_size(&self) -> u32 {
        self.dp
    }
    fn accepting(&self, worker: u32) -> bool {
        self.closed != Some(worker)
    }
    fn load(&self, worker: u32, rank: u32) -> RankLoad {
        self.looks.set(self.looks.get() + 1);
        self.used
            .get(&(worker, rank))
            .map_or_else(RankLoad::default, |u| u.0)
    }
    fn cached_prefix_tokens(&self, worker: u32, rank: u32, _req: &Request) -> u32 {
        self.used.get(&(worker, rank)).map_or(0, |u| u.1)
    }
    fn visit_used(&self, visit: &mut dyn FnMut(u32)) {
        let all: Vec<u32> = if self.lazy {
            // Highest first: a policy must not depend on the visit order.
            self.used_workers().into_iter().rev().collect()
        } else {
            (0..self.n).collect()
        };
        for w in all.into_iter().filter(|&w| self.accepting(w)) {
            visit(w);
        }
    }
    fn first_unused(&self) -> Option<u32> {
        if !self.lazy {
            return None;
        }
        let used = self.used_workers();
        (0..self.n).find(|w| self.accepting(*w) && used.binary_search(w).is_err())
    }
}
