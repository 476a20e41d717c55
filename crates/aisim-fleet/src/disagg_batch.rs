//! The batch model of a disaggregated split (`disagg`'s default), as the
//! replay's disaggregated runtime runs one: a prefill GPU computes each
//! prompt as a one-token job, then the request moves to a decode GPU that
//! decodes all its output in continuous batching.
//!
//! - Prefill pool: the batch model ([`BatchModel`]) of one-token requests
//!   of the mean prompt, so a GPU's compute is shared by the prompts it
//!   packs (the slot model lets every slot prefill at once). Its TTFT
//!   share is the P99 of the wait for a prefill GPU (M/G/c over the pool)
//!   plus the prompt's own chunks.
//! - Decode pool: a GPU running `n` sequences passes every `iter(n) = W +
//!   H·(L̄/ctx)·n`, each sequence gaining a token a pass; Little's law with
//!   `λ_d` requests a second per GPU and `l_out` tokens each gives `n =
//!   λ_d·l_out·W / (1 − λ_d·l_out·H·L̄/ctx)`, so TPOT is `iter(n)` and the
//!   first token comes one pass after the request arrives. A GPU holds at
//!   most `max_num_seqs` sequences and its KV tokens over `L̄`.
//!
//! The KV transfer between the pools is not in the analytic TTFT (the
//! engine check sends it). Nothing is fitted: every quantity is the
//! profile's or the workload's.

use aisim_core::profile::GpuProfile;

use crate::batch::BatchModel;
use crate::calibrate::CalibrationMethod;
use crate::cdf::Cdf;
use crate::FleetError;

/// A decode GPU of the batch model.
#[derive(Debug, Clone)]
pub struct DecodeGpu {
    w_s: f64,
    slope_s: f64,
    mean_out: f64,
    /// Most sequences it runs.
    pub n_cap: f64,
}

impl DecodeGpu {
    /// A decode GPU on `profile` serving requests of `isl` prompt and
    /// `osl` output tokens, running at most `max_num_seqs`.
    pub fn new(profile: &dyn GpuProfile, isl: f64, osl: f64, max_num_seqs: u64) -> DecodeGpu {
        let mean_ctx = (isl + osl / 2.0).max(1.0);
        let kv_tokens = (profile.total_kv_blks() * profile.blk_size() as u64) as f64;
        DecodeGpu {
            w_s: profile.w_s(),
            slope_s: profile.h_s() * mean_ctx / profile.calibration_ctx().max(1) as f64,
            mean_out: osl.max(1.0),
            n_cap: (max_num_seqs as f64).min(kv_tokens / mean_ctx).max(1.0),
        }
    }

    /// Seconds of one pass at `lam_g` requests per second, `None` past
    /// the GPU's capacity.
    pub fn pass_s(&self, lam_g: f64) -> Option<f64> {
        let a = lam_g * self.mean_out;
        let room = 1.0 - a * self.slope_s;
        if room <= 0.0 {
            return None;
        }
        let n = a * self.w_s / room;
        (n <= self.n_cap).then_some(self.w_s + self.slope_s * n)
    }

    /// Requests per second it sustains: Little's law at `n_cap` sequences.
    pub fn capacity(&self) -> f64 {
        self.n_cap / (self.mean_out * (self.w_s + self.slope_s * self.n_cap))
    }
}

/// Both pools of a split in the batch model.
#[derive(Debug, Clone)]
pub struct SplitModel {
    prefill: BatchModel,
    decode: DecodeGpu,
}

/// What the model says of a split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitFigures {
    /// Requests per second the split sustains (the lesser pool's).
    pub capacity_rps: f64,
    /// P99 TTFT, ms (infinite past either pool's capacity).
    pub ttft_ms: f64,
    /// TPOT, ms (infinite past the decode pool's capacity).
    pub tpot_ms: f64,
}

impl SplitModel {
    /// The model of requests of `(isl, osl)` prompt and output tokens (the
    /// means in whole tokens, as the engine check replays), which `max_ctx`
    /// holds (`DisaggParams::validate`).
    pub fn new(
        prefill: &dyn GpuProfile,
        decode: &dyn GpuProfile,
        (isl, osl): (u32, u32),
        max_ctx: u32,
        max_num_seqs: u64,
    ) -> Result<SplitModel, FleetError> {
        let one_token = Cdf::from_pairs("disagg prompts".into(), vec![(isl, 1)])?;
        Ok(SplitModel {
            prefill: BatchModel::new(&one_token, 1, max_ctx, prefill, CalibrationMethod::Exact, 0),
            decode: DecodeGpu::new(decode, f64::from(isl), f64::from(osl), max_num_seqs),
        })
    }

    /// The prefill pool's P99 TTFT share (s) with `n_prefill` GPUs at `lam`.
    pub fn prefill_p99_s(&self, n_prefill: u64, lam: f64) -> f64 {
        self.prefill.p99_ttft_s(n_prefill, lam)
    }

    /// A decode pass (s) with `n_decode` GPUs at `lam`, infinite past capacity.
    pub fn decode_pass_s(&self, n_decode: u64, lam: f64) -> f64 {
        if n_decode == 0 {
            return f64::INFINITY;
        }
        self.decode
            .pass_s(lam / n_decode as f64)
            .unwrap_or(f64::INFINITY)
    }

    /// The figures of `n_prefill` + `n_decode` GPUs at `lam`, from each
    /// pool's share (`prefill_p99_s`, `decode_pass_s`).
    pub fn figures(
        &self,
        n_prefill: u64,
        n_decode: u64,
        prefill_s: f64,
        pass_s: f64,
    ) -> SplitFigures {
        SplitFigures {
            capacity_rps: (n_prefill as f64 * self.prefill.mu_gpu)
                .min(n_decode as f64 * self.decode.capacity()),
            ttft_ms: (prefill_s + pass_s) * 1e3,
            tpot_ms: pass_s * 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::profile::resolve_profile;

    #[test]
    fn a_decode_gpu_obeys_littles_law_up_to_its_cap() {
        let p = resolve_profile("h100/llama-3.1-8b").unwrap();
        let d = DecodeGpu::new(p.as_ref(), 2000.0, 200.0, 256);
        let idle = d.pass_s(0.0).unwrap();
        assert!((idle - p.w_s()).abs() < 1e-15);
        let mu = d.capacity();
        for share in [0.2, 0.6, 0.99] {
            let lam_g = share * mu;
            let pass = d.pass_s(lam_g).unwrap();
            // n = λ·l_out·iter(n), and iter(n) = W + slope·n.
            let n = lam_g * 200.0 * pass;
            assert!((pass - (d.w_s + d.slope_s * n)).abs() < 1e-12);
            assert!(n <= d.n_cap + 1e-9);
        }
        assert!(d.pass_s(1.01 * mu).is_none());
        // More load, longer passes.
        assert!(d.pass_s(0.9 * mu).unwrap() > d.pass_s(0.1 * mu).unwrap());
    }

    #[test]
    fn a_prefill_gpu_shares_its_compute_among_prompts() {
        // A 10,000-token prompt takes about 0.4 s of an H100's compute for
        // Llama-3.1-8B, so one prefill GPU sustains a few such prompts a
        // second, not one per KV slot.
        let p = resolve_profile("h100/llama-3.1-8b").unwrap();
        let m = SplitModel::new(p.as_ref(), p.as_ref(), (10_000, 150), 131_072, 256).unwrap();
        let mu = m.prefill.mu_gpu;
        assert!(mu > 1.0 && mu < 10.0, "{mu}");
        // Below capacity the TTFT is finite and falls as GPUs are added.
        let lam = 2.0 * mu;
        assert_eq!(m.prefill_p99_s(2, lam), f64::INFINITY);
        let (a, b) = (m.prefill_p99_s(3, lam), m.prefill_p99_s(6, lam));
        assert!(a.is_finite() && b < a, "{a} {b}");
        let f = m.figures(3, 1, a, m.decode_pass_s(1, lam));
        assert!((f.capacity_rps - (3.0 * mu).min(m.decode.capacity())).abs() < 1e-9);
    }
}
