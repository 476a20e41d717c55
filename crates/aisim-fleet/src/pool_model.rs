//! What sizing needs to know about a pool, by model: the reference's slot
//! model (every KV slot at the pool's maximum context is a server) or the
//! batch model (every GPU runs continuous batching, [`crate::batch`]).

use aisim_core::profile::GpuProfile;
use aisim_core::EngineConfig;
use serde::{Deserialize, Serialize};

use crate::batch::BatchModel;
use crate::calibrate::{calibrate, Calibration, CalibrationMethod};
use crate::cdf::Cdf;
use crate::erlang::{p99_wait, p99_wait_plus};

/// Below this rate (req/s) a pool gets no GPUs in the slot model (the reference's rule).
pub const MIN_RATE: f64 = 0.01;

/// Which model sizes pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SizingModel {
    /// Every GPU a server running continuous batching, as the replay's
    /// engines do (the default: it agrees with the replay).
    #[default]
    Batch,
    /// Every KV slot at the pool's maximum context a server (the reference
    /// fleet simulator's model, kept to reproduce its results).
    Slots,
}

impl SizingModel {
    /// Its name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            SizingModel::Batch => "batch",
            SizingModel::Slots => "slots",
        }
    }

    /// The running sequences an engine check gives a worker on `profile`
    /// serving up to `max_ctx` tokens: its slots at that context, or the
    /// engine's default `max_num_seqs`.
    pub fn max_num_seqs(self, profile: &dyn GpuProfile, max_ctx: u32) -> u64 {
        match self {
            SizingModel::Slots => profile.n_slots(max_ctx),
            SizingModel::Batch => EngineConfig::default().max_num_seqs as u64,
        }
    }

    /// Below this rate (req/s) a pool gets no GPUs: the reference's
    /// [`MIN_RATE`] in the slot model; in the batch model any traffic gets
    /// a GPU (none would leave it unserved, unseen).
    pub fn min_rate(self) -> f64 {
        match self {
            SizingModel::Slots => MIN_RATE,
            SizingModel::Batch => 0.0,
        }
    }

    /// What its P99 TTFT figures are.
    pub fn ttft_figure(self) -> TtftFigure {
        match self {
            SizingModel::Batch => TtftFigure::P99OfWaitPlusPrefill,
            SizingModel::Slots => TtftFigure::P99WaitPlusMeanPrefill,
        }
    }
}

/// What an analytic "P99 TTFT" figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TtftFigure {
    /// The 99th percentile of each request's wait plus its own prefill.
    P99OfWaitPlusPrefill,
    /// The 99th percentile of the wait plus the mean prefill (the reference
    /// fleet simulator's figure; below the true P99 when prefills vary).
    P99WaitPlusMeanPrefill,
}

impl TtftFigure {
    /// Its meaning, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            TtftFigure::P99OfWaitPlusPrefill => "P99 of wait + prefill",
            TtftFigure::P99WaitPlusMeanPrefill => {
                "P99 wait + mean prefill (the reference's figure, not a P99 of TTFT)"
            }
        }
    }
}

/// A pool's workload on its profile, in one model.
#[derive(Debug, Clone)]
pub enum PoolModel {
    /// The slot model's calibration.
    Slots(Calibration),
    /// The batch model.
    Batch(BatchModel),
}

impl PoolModel {
    /// The model of the slice of `cdf` between `lo` and `pool_max` on `profile`.
    pub fn new(
        model: SizingModel,
        cdf: &Cdf,
        lo: u64,
        pool_max: u32,
        profile: &dyn GpuProfile,
        method: CalibrationMethod,
        seed: u64,
    ) -> PoolModel {
        match model {
            SizingModel::Slots => {
                PoolModel::Slots(calibrate(cdf, lo, pool_max, profile, method, seed))
            }
            SizingModel::Batch => {
                PoolModel::Batch(BatchModel::new(cdf, lo, pool_max, profile, method, seed))
            }
        }
    }

    /// Requests per second one GPU sustains.
    pub fn mu_gpu(&self) -> f64 {
        match self {
            PoolModel::Slots(c) => c.mu_gpu,
            PoolModel::Batch(b) => b.mu_gpu,
        }
    }

    /// Queue servers per GPU (slots, or 1).
    pub fn servers_per_gpu(&self) -> u64 {
        match self {
            PoolModel::Slots(c) => c.n_slots,
            PoolModel::Batch(_) => 1,
        }
    }

    /// Which model it is.
    pub fn kind(&self) -> SizingModel {
        match self {
            PoolModel::Slots(_) => SizingModel::Slots,
            PoolModel::Batch(_) => SizingModel::Batch,
        }
    }

    /// Whether a GPU can serve a request at all.
    pub fn serves(&self) -> bool {
        self.servers_per_gpu() > 0 && self.mu_gpu() > 0.0
    }

    /// Where the search for a count starts at `lam` req/s, and the most it
    /// tries. The batch model: the fewest GPUs below their capacity
    /// (`floor(λ/μ) + 1`), and 64 times that (at a 1/64th of capacity a
    /// target still missed is the idle prefill's, out of reach: the P99
    /// only creeps toward it). The slot model: the reference's
    /// `ceil(λ/μ) + 1`, and every count whose servers fit a `u64`.
    pub fn search_range(&self, lam: f64) -> (u64, u64) {
        let load = lam / self.mu_gpu();
        match self {
            PoolModel::Slots(_) => (
                (load.ceil() as u64).saturating_add(1).max(1),
                u64::MAX / self.servers_per_gpu().max(1),
            ),
            PoolModel::Batch(_) => {
                let lo = (load.floor() as u64).saturating_add(1);
                (lo, lo.saturating_mul(64))
            }
        }
    }

    /// The TTFT figure (s) of `n` GPUs at `lam` req/s that sizing holds
    /// against the SLO: in the batch model the P99 of wait + prefill; in the
    /// slot model the reference's figure, the P99 wait plus the mean prefill
    /// (kept so the reference's results reproduce; [`TtftFigure`] names it).
    pub fn p99_ttft_s(&self, n: u64, lam: f64) -> f64 {
        match self {
            PoolModel::Slots(c) => self.p99_wait_s(n, lam) + c.mean_prefill_s,
            PoolModel::Batch(b) => b.p99_ttft_s(n, lam),
        }
    }

    /// The P99 of wait + prefill (s), in either model.
    pub fn true_p99_ttft_s(&self, n: u64, lam: f64) -> f64 {
        match self {
            PoolModel::Slots(c) => {
                let mu = c.mu_gpu / c.n_slots as f64;
                p99_wait_plus(n.saturating_mul(c.n_slots), lam, mu, c.cv2, &c.prefill)
            }
            PoolModel::Batch(b) => b.p99_ttft_s(n, lam),
        }
    }

    /// P99 wait (s) of `n` GPUs at `lam` req/s.
    pub fn p99_wait_s(&self, n: u64, lam: f64) -> f64 {
        match self {
            PoolModel::Slots(c) => {
                let mu = c.mu_gpu / c.n_slots as f64;
                p99_wait(n.saturating_mul(c.n_slots), lam, mu, c.cv2)
            }
            PoolModel::Batch(b) => b.p99_wait_s(n, lam),
        }
    }

    /// An idle pool's TTFT figure (s): no GPU count does better.
    pub fn p99_prefill_s(&self) -> f64 {
        match self {
            PoolModel::Slots(c) => c.mean_prefill_s,
            PoolModel::Batch(b) => b.p99_prefill_s(),
        }
    }

    /// The running sequences an engine check gives each worker: the slots,
    /// or the engine's default `max_num_seqs`.
    pub fn max_num_seqs(&self) -> u64 {
        match self {
            PoolModel::Slots(c) => c.n_slots,
            PoolModel::Batch(_) => EngineConfig::default().max_num_seqs as u64,
        }
    }
}
