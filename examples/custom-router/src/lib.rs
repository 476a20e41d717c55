//! A placement policy and a timing model of one's own, run by aisim's
//! replay through `ReplayComposition`.
//!
//! - [`LengthSplit`] keeps long prompts off the workers that serve short
//!   ones: a prompt of at least `long_tokens` goes to worker 0, every other
//!   request to the least loaded of the others (the split many deployments
//!   make by hand to keep long prefills from stalling chat traffic).
//! - [`LinearTiming`] prices a pass as `prefill_ms_per_token × prompt
//!   tokens + decode_ms` when anything decodes.

use std::sync::Arc;

use aisim_core::timing::{PassShape, PassTime, TimingModel};
use aisim_core::Request;
use aisim_replay::policy::{Placement, PlacementPolicy, ReplayComposition, WorkerView};
use aisim_replay::{ReplayError, ReplaySpec};

/// Long prompts to worker 0, the rest to the least loaded other worker.
#[derive(Debug, Clone, Copy)]
pub struct LengthSplit {
    /// Prompts of at least this many tokens are long.
    pub long_tokens: u32,
}

impl PlacementPolicy for LengthSplit {
    fn name(&self) -> &str {
        "length_split"
    }

    fn place(&mut self, req: &Request, view: &dyn WorkerView) -> Placement {
        if req.input_length >= self.long_tokens || view.workers() == 1 {
            return Placement::at(0, 0);
        }
        // Fewest running + waiting among workers 1.., ties to the lowest.
        let worker = (1..view.workers())
            .min_by_key(|&w| {
                let l = view.load(w, 0);
                (l.running + l.waiting, w)
            })
            .unwrap_or(1);
        Placement::at(worker, 0)
    }
}

/// A pass costs a fixed time per prompt token plus a fixed decode step.
#[derive(Debug, Clone, Copy)]
pub struct LinearTiming {
    /// Milliseconds per prompt token computed in the pass.
    pub prefill_ms_per_token: f64,
    /// Milliseconds of a pass in which anything decodes.
    pub decode_ms: f64,
}

impl TimingModel for LinearTiming {
    fn name(&self) -> &str {
        "linear"
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        let decode_ms = if shape.decode_requests > 0 {
            self.decode_ms
        } else {
            0.0
        };
        PassTime {
            prefill_s: self.prefill_ms_per_token * shape.prefill_tokens() as f64 * 1e-3,
            decode_s: decode_ms * 1e-3,
        }
    }
}

/// The two plugged into a replay; scaling stays the default (none).
#[derive(Debug, Clone, Copy)]
pub struct Custom {
    /// The placement policy's parameters.
    pub split: LengthSplit,
    /// The timing model.
    pub timing: LinearTiming,
}

impl ReplayComposition for Custom {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(self.split)
    }

    fn timing(&self, _spec: &ReplaySpec) -> Result<Arc<dyn TimingModel>, ReplayError> {
        Ok(Arc::new(self.timing))
    }
}
