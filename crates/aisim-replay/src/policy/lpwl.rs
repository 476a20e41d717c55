//! `lpwl`, least prefill work left: a request goes to the rank with the
//! lowest
//!
//! `score = pending prefill tokens on the rank + max(0, input length − its cached prefix of this prompt)`,
//!
//! ties to fewer requests (running + waiting), then round robin: the first
//! tied rank at or after a cursor that moves past every pick, over (worker,
//! rank) order. The unused workers, idle and empty, are indistinguishable;
//! the lowest of them stands for all (so a tie among them goes to it).

use aisim_core::Request;

use super::candidates::{candidates, Candidate};
use super::{Placement, PlacementPolicy, WorkerView};

/// The least-prefill-work-left policy.
#[derive(Debug, Clone, Default)]
pub struct LeastPrefillWorkLeft {
    /// Round-robin cursor: the (worker, rank) position ties start from.
    cursor: u64,
    candidates: Vec<Candidate>,
}

/// `worker × dp + rank`: a rank's place in (worker, rank) order.
fn position(c: &Candidate, dp: u32) -> u64 {
    u64::from(c.worker) * u64::from(dp) + u64::from(c.rank)
}

impl PlacementPolicy for LeastPrefillWorkLeft {
    fn name(&self) -> &str {
        "lpwl"
    }

    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement {
        let dp = view.dp_size().max(1);
        let slots = u64::from(view.workers()) * u64::from(dp);
        let mut cands = std::mem::take(&mut self.candidates);
        candidates(view, &mut cands);
        // (score, requests, distance from the cursor): the smallest wins.
        let mut best: Option<((u64, u32, u64), Candidate)> = None;
        for c in &cands {
            let (pending, requests, cached) = if c.unused {
                (0, 0, 0)
            } else {
                let load = view.load(c.worker, c.rank);
                (
                    load.pending_prefill_tokens,
                    load.running + load.waiting,
                    view.cached_prefix_tokens(c.worker, c.rank, req),
                )
            };
            let score = pending + u64::from(req.input_length.saturating_sub(cached));
            let distance = (position(c, dp) + slots - self.cursor % slots.max(1)) % slots.max(1);
            let key = (score, requests, distance);
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, *c));
            }
        }
        self.candidates = cands;
        let Some((_, c)) = best else {
            return Placement::at(0, 0);
        };
        self.cursor = (position(&c, dp) + 1) % slots.max(1);
        Placement::at(c.worker, c.rank)
    }
}
