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

/// The next accepting worker on every request, and within a worker its DP
/// ranks in turn (a rank counter per worker), as the reference simulator and
/// SGLang's data-parallel controller do: request `k` goes to worker `k mod W`,
/// rank `floor(k / W) mod dp` when every worker accepts. A worker that does not
/// accept is skipped and its rank counter does not move.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    next_worker: u64,
    /// Per worker: how many requests it has been given (its next rank, mod dp).
    next_rank: Vec<u64>,
}

impl PlacementPolicy for RoundRobin {
    fn name(&self) -> &str {
        "round_robin"
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let workers = view.workers() as u64;
        for _ in 0..workers {
            let worker = (self.next_worker % workers) as usize;
            self.next_worker += 1;
            if !view.accepting(worker as u32) {
                continue;
            }
            if self.next_rank.len() <= worker {
                self.next_rank.resize(worker + 1, 0);
            }
            let rank = self.next_rank[worker] % view.dp_size().max(1) as u64;
            self.next_rank[worker] += 1;
            return Placement {
                worker: worker as u32,
                rank: rank as u32,
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `workers` workers of `dp` ranks; `closed` does not accept.
    struct Fixed {
        workers: u32,
        dp: u32,
        closed: Option<u32>,
    }

    impl WorkerView for Fixed {
        fn workers(&self) -> u32 {
            self.workers
        }
        fn dp_size(&self) -> u32 {
            self.dp
        }
        fn accepting(&self, worker: u32) -> bool {
            self.closed != Some(worker)
        }
        fn load(&self, _: u32, _: u32) -> RankLoad {
            RankLoad::default()
        }
        fn cached_prefix_tokens(&self, _: u32, _: u32, _: &Request) -> u32 {
            0
        }
    }

    fn placements(view: &Fixed, n: u64) -> Vec<(u32, u32)> {
        let mut rr = RoundRobin::default();
        let req = Request::new(0, aisim_core::SimTime::ZERO, 1, 1);
        (0..n)
            .map(|_| {
                let p = rr.place(&req, view);
                (p.worker, p.rank)
            })
            .collect()
    }

    #[test]
    fn round_robin_moves_to_the_next_worker_on_every_request_and_turns_its_ranks() {
        let view = Fixed {
            workers: 4,
            dp: 2,
            closed: None,
        };
        let got = placements(&view, 24);
        let want: Vec<(u32, u32)> = (0..24u32).map(|k| (k % 4, (k / 4) % 2)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn round_robin_skips_a_closed_worker_without_turning_its_ranks() {
        let view = Fixed {
            workers: 3,
            dp: 2,
            closed: Some(1),
        };
        let got = placements(&view, 6);
        assert_eq!(got, vec![(0, 0), (2, 0), (0, 1), (2, 1), (0, 0), (2, 0)]);
    }
}
