//! `kv`: cache-aware placement in the manner of Dynamo's KV router. The
//! router keeps its own index of the blocks every rank holds (fed by the
//! engines' KV events at pass end, so it knows what a real router could
//! know, not the pools themselves) and sends a request where
//!
//! `cost = prefill_load_scale × (request blocks − overlap blocks) + active blocks`
//!
//! is lowest. *Active blocks* are the KV blocks the rank holds plus those
//! its queued prompt tokens are about to take (pending prefill tokens over
//! the block size, rounded up): requests routed in the same instant see one
//! another, as Dynamo's active-sequence tracking makes them. With
//! `temperature` 0 the lowest cost wins, ties to the lowest (worker, rank);
//! above 0 a rank is drawn with probability ∝ `exp(−(c − c_min) / ((c_max −
//! c_min) × T))` from a generator seeded by the run seed.

use aisim_core::kv::KvEvent;
use aisim_core::Request;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use super::candidates::{candidates, unused_slots, Candidate};
use super::kv_index::{PromptPages, RouterIndex};
use super::{Placement, PlacementPolicy, WorkerView};

/// Parameters of the `kv` policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvRouterConfig {
    /// Tokens per engine KV block (the engines' block size).
    pub block_size: u32,
    /// Weight of the blocks still to prefill against the active blocks.
    pub prefill_load_scale: f64,
    /// 0: lowest cost; above 0: softmax sampling at this temperature.
    pub temperature: f64,
    /// Seed of the sampling.
    pub seed: u64,
}

/// The cache-aware placement policy.
#[derive(Debug)]
pub struct KvRouter {
    config: KvRouterConfig,
    index: RouterIndex,
    rng: Pcg64,
    /// Scratch: the candidates of one placement and their costs.
    candidates: Vec<Candidate>,
    costs: Vec<f64>,
    overlaps: Vec<u32>,
    /// Scratch: the prompt's pages the router can match.
    prompt: PromptPages,
}

impl KvRouter {
    /// A router with an empty index.
    pub fn new(config: KvRouterConfig) -> KvRouter {
        KvRouter {
            config,
            index: RouterIndex::default(),
            rng: Pcg64::seed_from_u64(config.seed ^ 0x6b76_726f_7574_6572),
            candidates: Vec::new(),
            costs: Vec::new(),
            overlaps: Vec::new(),
            prompt: PromptPages::default(),
        }
    }

    /// The router's index (what it believes each rank holds).
    pub fn index(&self) -> &RouterIndex {
        &self.index
    }

    /// The candidate to take: the lowest cost, or a softmax draw in which
    /// the unused stand-in weighs as the `unused_slots` it speaks for.
    fn choose(&mut self, unused_slots: f64) -> usize {
        let costs = &mut self.costs;
        let lowest = (0..costs.len())
            .min_by(|&a, &b| costs[a].total_cmp(&costs[b]))
            .expect("at least one candidate");
        let t = self.config.temperature;
        if t == 0.0 {
            return lowest;
        }
        let c_min = costs[lowest];
        let c_max = costs.iter().copied().fold(c_min, f64::max);
        // Equal costs (scale 0) are equally likely; a scale past f64 gives
        // the uniform limit, exp(−0).
        let scale = (c_max - c_min) * t;
        for (cost, c) in costs.iter_mut().zip(&self.candidates) {
            let w = if scale == 0.0 {
                1.0
            } else {
                (-(*cost - c_min) / scale).exp()
            };
            *cost = if c.unused { w * unused_slots } else { w };
        }
        let total: f64 = costs.iter().sum();
        let u = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * total;
        let mut below = 0.0;
        for (i, w) in costs.iter().enumerate() {
            below += w;
            if u < below {
                return i;
            }
        }
        lowest
    }
}

impl PlacementPolicy for KvRouter {
    fn name(&self) -> &str {
        "kv"
    }

    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement {
        let bs = self.config.block_size.max(1);
        // The engine recomputes a prompt's last token whatever it has
        // cached, so a match never covers it.
        let matchable = req.input_length.saturating_sub(1) / bs;
        self.prompt.fill(req, bs, matchable, &self.index);
        let request_blocks = req.input_length.div_ceil(bs);
        let mut cands = std::mem::take(&mut self.candidates);
        candidates(view, &mut cands);
        self.costs.clear();
        self.overlaps.clear();
        for c in &cands {
            let (overlap, active) = if c.unused {
                (0, 0)
            } else {
                let load = view.load(c.worker, c.rank);
                let queued = load.pending_prefill_tokens.div_ceil(u64::from(bs));
                (
                    self.index.overlap(c.worker, c.rank, &self.prompt),
                    u64::from(load.active_kv_blocks) + queued,
                )
            };
            self.overlaps.push(overlap);
            let to_prefill = request_blocks.saturating_sub(overlap);
            self.costs
                .push(self.config.prefill_load_scale * f64::from(to_prefill) + active as f64);
        }
        let unused = unused_slots(view, &cands) as f64;
        self.candidates = cands;
        if self.candidates.is_empty() {
            return Placement::at(0, 0);
        }
        let i = self.choose(unused);
        let c = self.candidates[i];
        Placement {
            worker: c.worker,
            rank: c.rank,
            expected_cached_tokens: Some(self.overlaps[i] * bs),
        }
    }

    fn wants_kv_events(&self) -> bool {
        true
    }

    fn on_kv_events(&mut self, worker: u32, rank: u32, events: &[KvEvent]) {
        self.index.apply(worker, rank, events);
    }
}
