//! The `GpuProfile` trait and the slot count its default methods share with
//! `ProfileOverride`. Manual and computed profiles implement it and `mod.rs`
//! resolves keys to them, so it lives below all of them.

use std::fmt::Debug;

use super::power::PowerModel;

/// A serving unit's constants and the formulas derived from them (engine.md).
pub trait GpuProfile: Debug + Send + Sync {
    /// The key it is named by (`a100`, `h200/llama-3.1-70b/tp8`).
    fn key(&self) -> &str;
    /// Human-readable name.
    fn display_name(&self) -> String;
    /// Fixed cost of one iteration, seconds.
    fn w_s(&self) -> f64;
    /// Per-sequence cost of one iteration at `calibration_ctx`, seconds.
    fn h_s(&self) -> f64;
    /// Context length at which `h_s` was measured.
    fn calibration_ctx(&self) -> u32;
    /// Prompt tokens per prefill iteration.
    fn chunk(&self) -> u32;
    /// Tokens per KV block.
    fn blk_size(&self) -> u32;
    /// KV blocks of the unit.
    fn total_kv_blks(&self) -> u64;
    /// Most sequences at `calibration_ctx` (0: no cap).
    fn max_slots(&self) -> u32;
    /// Dollars per hour of the unit.
    fn cost_per_hr(&self) -> f64;
    /// GPUs in the unit.
    fn gpus(&self) -> u32;
    /// Power draw against batch size.
    fn power(&self) -> PowerModel;
    /// KV bytes per token of the whole unit, when the model is known.
    fn kv_bytes_per_token(&self) -> Option<f64> {
        None
    }
    /// The model it serves (a catalog name, `llama-3.1-70b`), when the
    /// profile knows one: two profiles serve one model when these match.
    fn model_name(&self) -> Option<&str> {
        None
    }
    /// The longest context (prompt + output) the model serves, tokens, when
    /// the profile knows the model (its `max_position_embeddings`).
    fn max_context(&self) -> Option<u32> {
        None
    }
    /// Compute-bound time of a prefill chunk of `c` tokens with `q` already in
    /// context, when the profile knows the architecture.
    fn prefill_roofline_s(&self, _c: u32, _q: u32) -> Option<f64> {
        None
    }
    /// Whether `prefill_roofline_s` answers.
    fn has_roofline(&self) -> bool {
        false
    }

    /// `iter(n, L) = W + H · (L / calibration_ctx) · n`, seconds.
    fn iter_s(&self, n: f64, mean_len: f64) -> f64 {
        self.w_s() + self.h_s() * (mean_len / self.calibration_ctx() as f64) * n
    }

    /// `iter(n) = W + H · n` (sequences at the calibration context).
    fn iter_n_s(&self, n: f64) -> f64 {
        self.w_s() + self.h_s() * n
    }

    /// Concurrent sequences one unit holds at context `max_ctx` (integer division).
    fn n_slots(&self, max_ctx: u32) -> u64 {
        slots_at(self, max_ctx)
    }

    /// `(ceil(l_in / chunk) + l_out) × iter(n_slots(max_ctx), l_in + l_out)`, seconds.
    fn service_time_s(&self, l_in: u32, l_out: u32, max_ctx: u32) -> f64 {
        let iters = (l_in as u64).div_ceil(self.chunk().max(1) as u64) + l_out as u64;
        iters as f64 * self.iter_s(self.n_slots(max_ctx) as f64, l_in as f64 + l_out as f64)
    }

    /// `n_slots / service_time`, requests per second.
    fn throughput_rps(&self, max_ctx: u32, mean_in: u32, mean_out: u32) -> f64 {
        self.n_slots(max_ctx) as f64 / self.service_time_s(mean_in, mean_out, max_ctx)
    }
}

/// `min(max_slots × calibration_ctx / max_ctx, total_kv_blks / ceil(max_ctx / blk_size))`
/// with integer division (no slot cap when `max_slots` is 0).
pub(crate) fn slots_at<P: GpuProfile + ?Sized>(p: &P, max_ctx: u32) -> u64 {
    let max_ctx = max_ctx.max(1) as u64;
    let by_kv = p.total_kv_blks() / max_ctx.div_ceil(p.blk_size().max(1) as u64);
    match p.max_slots() {
        0 => by_kv,
        s => by_kv.min(s as u64 * p.calibration_ctx() as u64 / max_ctx),
    }
}
