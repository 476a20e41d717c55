//! `PlacementPolicy`: where a request goes.

use aisim_core::kv::KvEvent;
use aisim_core::Request;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use super::worker_view::WorkerView;

/// A worker and attention-DP rank, and what the policy expected to find
/// there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Worker index.
    pub worker: u32,
    /// DP rank within the worker.
    pub rank: u32,
    /// Prompt tokens the policy expected that rank to serve from its prefix
    /// cache (`None`: it made no such guess). The report sets it beside the
    /// reuse the engine achieved.
    pub expected_cached_tokens: Option<u32>,
}

impl Placement {
    /// Rank `rank` of worker `worker`, with no expectation about its cache.
    pub fn at(worker: u32, rank: u32) -> Placement {
        Placement {
            worker,
            rank,
            expected_cached_tokens: None,
        }
    }
}

/// Chooses a worker and rank for each request at arrival.
pub trait PlacementPolicy {
    /// Name for reports.
    fn name(&self) -> &str;
    /// The placement of `req`. Must return an accepting worker and a rank
    /// below `dp_size`; anything else stops the replay with
    /// `ReplayError::Placement`.
    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement;
    /// Whether the policy reads the engines' KV events (`on_kv_events`).
    /// Asked once, before the run; engines record events only when it says
    /// yes, so a policy that does not read them pays nothing.
    fn wants_kv_events(&self) -> bool {
        false
    }
    /// The KV events of rank `rank` of `worker`, in order, at the end of the
    /// pass that caused them (only when `wants_kv_events`). Each names a run
    /// of pages as the pool files them (`aisim_core::kv::PageRun`: a block of
    /// the block pool, or a run of one trace block's pages of the radix
    /// cache), so indexing them by run costs O(blocks or spans), not
    /// O(pages); `KvEvent::per_page` tells one page by page.
    fn on_kv_events(&mut self, _worker: u32, _rank: u32, _events: &[KvEvent]) {}
    /// A copy in its present state, when its choices depend only on the
    /// requests placed before and on which workers accept, never on their
    /// load or cache. A run may then be split between threads, each with a
    /// copy (see `runtime/split.rs`); `None` (the default) keeps it on one.
    fn copy_if_oblivious(&self) -> Option<Box<dyn PlacementPolicy + Send>> {
        None
    }
}

/// The next accepting worker on every request, and within a worker its DP
/// ranks in turn (a rank counter per worker), as the reference simulator and
/// SGLang's data-parallel controller do: request `k` goes to worker `k mod W`,
/// rank `floor(k / W) mod dp` when every worker accepts. A worker that does not
/// accept is skipped and its rank counter does not move.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    next_worker: u64,
    /// Per worker: its next rank (kept mod dp, at most 1,024); empty while dp is 1.
    next_rank: Vec<u16>,
}

impl PlacementPolicy for RoundRobin {
    fn name(&self) -> &str {
        "round_robin"
    }

    fn copy_if_oblivious(&self) -> Option<Box<dyn PlacementPolicy + Send>> {
        Some(Box::new(self.clone()))
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let workers = view.workers() as u64;
        for _ in 0..workers {
            let worker = (self.next_worker % workers) as usize;
            self.next_worker += 1;
            if !view.accepting(worker as u32) {
                continue;
            }
            let dp = view.dp_size().max(1);
            if dp == 1 {
                // No rank counters to keep: memory stays O(1) at any worker count.
                return Placement::at(worker as u32, 0);
            }
            if self.next_rank.len() <= worker {
                self.next_rank.resize(worker + 1, 0);
            }
            // The counter is kept modulo dp (at most 1,024), so 2 bytes a worker.
            let rank = u32::from(self.next_rank[worker]) % dp;
            self.next_rank[worker] = ((rank + 1) % dp) as u16;
            return Placement::at(worker as u32, rank);
        }
        Placement::at(0, 0)
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

    fn copy_if_oblivious(&self) -> Option<Box<dyn PlacementPolicy + Send>> {
        Some(Box::new(self.clone()))
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        let dp = view.dp_size() as u64;
        let pick = self.rng.next_u64() % (view.accepting_count().max(1) as u64 * dp);
        Placement::at(
            view.nth_accepting((pick / dp) as u32).unwrap_or(0),
            (pick % dp) as u32,
        )
    }
}

/// Fewest running + waiting requests; ties to the lowest (worker, rank). Looks
/// at the workers in use and the lowest unused one (which has none), so a
/// placement costs O(workers in use), not O(workers).
#[derive(Debug, Clone, Copy, Default)]
pub struct LeastLoaded;

impl PlacementPolicy for LeastLoaded {
    fn name(&self) -> &str {
        "least_loaded"
    }

    fn place(&mut self, _req: &Request, view: &dyn WorkerView) -> Placement {
        // (load, worker, rank): the smallest tuple wins, whatever the visit order.
        let mut best: Option<(u32, u32, u32)> = view.first_unused().map(|w| (0, w, 0));
        view.visit_used(&mut |worker| {
            for rank in 0..view.dp_size() {
                let l = view.load(worker, rank);
                let key = (l.running + l.waiting, worker, rank);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        });
        best.map_or(Placement::at(0, 0), |(_, worker, rank)| {
            Placement::at(worker, rank)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_view::{load, CraftedView};
    use proptest::prelude::*;

    fn request() -> Request {
        Request::new(0, aisim_core::SimTime::ZERO, 1, 1)
    }

    /// `n` workers of `dp` ranks, the used ones waiting as `used` says.
    fn fleet(n: u32, dp: u32, used: &[(u32, Vec<u32>)]) -> CraftedView {
        let mut view = CraftedView::new(n, dp);
        for (w, waiting) in used {
            for (r, &q) in waiting.iter().enumerate() {
                view = view.with(*w, r as u32, load(0, q, 0, 0), 0);
            }
        }
        view
    }

    proptest! {
        #[test]
        fn least_loaded_on_the_used_workers_is_least_loaded_on_all(
            n in 1u32..40,
            dp in 1u32..3,
            used in prop::collection::btree_map(0u32..40, prop::collection::vec(0u32..4, 2), 0..12),
        ) {
            let used: Vec<(u32, Vec<u32>)> = used
                .into_iter()
                .filter(|(w, _)| *w < n)
                .map(|(w, l)| (w, l[..dp as usize].to_vec()))
                .collect();
            let (lazy, eager) = (fleet(n, dp, &used), fleet(n, dp, &used).eager());
            let a = LeastLoaded.place(&request(), &lazy);
            let b = LeastLoaded.place(&request(), &eager);
            prop_assert_eq!(a, b);
            prop_assert_eq!(lazy.looks.get(), used.len() as u64 * dp as u64);
        }
    }

    #[test]
    fn placement_looks_at_used_workers_only() {
        let fleet = fleet(1_000_000, 2, &[(0, vec![1, 1]), (1, vec![0, 2])]);
        let p = LeastLoaded.place(&request(), &fleet);
        assert_eq!(p, Placement::at(1, 0), "lowest tie at load 0");
        assert_eq!(fleet.looks.get(), 4, "two used workers of two ranks");
        let mut rr = RoundRobin::default();
        assert_eq!(rr.place(&request(), &fleet).worker, 0);
        let mut random = RandomPlacement::new(1);
        assert!(random.place(&request(), &fleet).worker < 1_000_000);
        assert_eq!(
            fleet.looks.get(),
            4,
            "round robin and random look at no load"
        );
    }

    fn placements(view: &CraftedView, n: u64) -> Vec<(u32, u32)> {
        let mut rr = RoundRobin::default();
        (0..n)
            .map(|_| {
                let p = rr.place(&request(), view);
                (p.worker, p.rank)
            })
            .collect()
    }

    #[test]
    fn round_robin_moves_to_the_next_worker_on_every_request_and_turns_its_ranks() {
        let got = placements(&CraftedView::new(4, 2), 24);
        let want: Vec<(u32, u32)> = (0..24u32).map(|k| (k % 4, (k / 4) % 2)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn round_robin_skips_a_closed_worker_without_turning_its_ranks() {
        let got = placements(&CraftedView::new(3, 2).closed(1), 6);
        assert_eq!(got, vec![(0, 0), (2, 0), (0, 1), (2, 1), (0, 0), (2, 0)]);
    }
}
