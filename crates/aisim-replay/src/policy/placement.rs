//! `PlacementPolicy`: where a request goes.

use aisim_core::{RankLoad, Request};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// A worker and attention-DP rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Worker index.
    pub worker: u32,
    /// DP rank within the worker.
    pub rank: u32,
}

/// What a policy may look at: the live state of every worker, computed on demand
/// (a policy that does not look pays nothing).
pub trait WorkerView {
    /// Workers.
    fn workers(&self) -> u32;
    /// DP ranks per worker.
    fn dp_size(&self) -> u32;
    /// Whether a worker takes new requests (not starting up, not draining).
    fn accepting(&self, worker: u32) -> bool;
    /// Load of one rank.
    fn load(&self, worker: u32, rank: u32) -> RankLoad;
    /// Prompt tokens of `req` that rank would serve from its prefix cache now.
    fn cached_prefix_tokens(&self, worker: u32, rank: u32, req: &Request) -> u32;
}

/// Chooses a worker and rank for each request at arrival.
pub trait PlacementPolicy {
    /// Name for reports.
    fn name(&self) -> &str;
    /// The placement of `req`. Must return an accepting worker.
    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement;
}

/// Every (worker, rank) in turn, skipping workers that do not accept.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    next: u64,
}

impl PlacementPolicy for RoundRobin {
    fn name(&self) -> &str {
        "round_robin"
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let dp = view.dp_size() as u64;
        let slots = view.workers() as u64 * dp;
        for _ in 0..slots {
            let s = self.next % slots;
            self.next += 1;
            let p = Placement {
                worker: (s / dp) as u32,
                rank: (s % dp) as u32,
            };
            if view.accepting(p.worker) {
                return p;
            }
        }
        Placement { worker: 0, rank: 0 }
    }
}

/// Uniformly random (worker, rank) from the seeded generator.
#[derive(Debug, Clone)]
pub struct RandomPlacement {
    rng: Pcg64,
}

impl RandomPlacement {
    /// Seeded from the run seed.
    pub fn new(seed: u64) -> RandomPlacement {
        RandomPlacement {
            rng: Pcg64::seed_from_u64(seed ^ 0x726f_7574_6572),
        }
    }
}

impl PlacementPolicy for RandomPlacement {
    fn name(&self) -> &str {
        "random"
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let accepting: Vec<u32> = (0..view.workers()).filter(|&w| view.accepting(w)).collect();
        let dp = view.dp_size() as u64;
        let pick = self.rng.next_u64() % (accepting.len().max(1) as u64 * dp);
        Placement {
            worker: accepting.get((pick / dp) as usize).copied().unwrap_or(0),
            rank: (pick % dp) as u32,
        }
    }
}

/// Fewest running + waiting requests; ties to the lowest (worker, rank).
#[derive(Debug, Clone, Copy, Default)]
pub struct LeastLoaded;

impl PlacementPolicy for LeastLoaded {
    fn name(&self) -> &str {
        "least_loaded"
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let mut best: Option<(u32, Placement)> = None;
        for worker in (0..view.workers()).filter(|&w| view.accepting(w)) {
            for rank in 0..view.dp_size() {
                let l = view.load(worker, rank);
                let n = l.running + l.waiting;
                if best.is_none_or(|(b, _)| n < b) {
                    best = Some((n, Placement { worker, rank }));
                }
            }
        }
        best.map_or(Placement { worker: 0, rank: 0 }, |(_, p)| p)
    }
}
