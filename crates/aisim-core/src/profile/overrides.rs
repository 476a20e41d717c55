//! A profile with some of its constants replaced: a demand-response batch cap,
//! a what-if KV size, or more logical slots than the KV holds at full length.

use std::sync::Arc;

use super::gpu_profile::{slots_at, GpuProfile};
use super::power::PowerModel;

/// `inner` with the given constants replaced; everything else is delegated.
#[derive(Debug, Clone)]
pub struct ProfileOverride {
    inner: Arc<dyn GpuProfile>,
    max_slots: Option<u32>,
    total_kv_blks: Option<u64>,
    n_slots: Option<u64>,
}

impl ProfileOverride {
    /// `inner`, unchanged so far.
    pub fn new(inner: Arc<dyn GpuProfile>) -> ProfileOverride {
        ProfileOverride {
            inner,
            max_slots: None,
            total_kv_blks: None,
            n_slots: None,
        }
    }

    /// `inner` capped at `cap` sequences of `max_ctx` tokens, through both the
    /// KV blocks and the compute cap (vLLM's `max_num_seqs` curtailment).
    pub fn batch_cap(inner: Arc<dyn GpuProfile>, cap: u64, max_ctx: u32) -> ProfileOverride {
        let blocks_per_seq = (max_ctx as u64).div_ceil(inner.blk_size().max(1) as u64);
        let max_slots = (cap * max_ctx as u64).div_ceil(inner.calibration_ctx().max(1) as u64);
        ProfileOverride::new(inner)
            .with_max_slots(max_slots.min(u32::MAX as u64) as u32)
            .with_total_kv_blks(cap * blocks_per_seq)
    }

    /// Replaces the slot cap at the calibration context.
    pub fn with_max_slots(mut self, v: u32) -> Self {
        self.max_slots = Some(v);
        self
    }

    /// Replaces the KV blocks.
    pub fn with_total_kv_blks(mut self, v: u64) -> Self {
        self.total_kv_blks = Some(v);
        self
    }

    /// Fixes the concurrent sequences at every context (logical slots that may
    /// oversubscribe the KV, so that KV admission can bind).
    pub fn with_n_slots(mut self, v: u64) -> Self {
        self.n_slots = Some(v);
        self
    }
}

impl GpuProfile for ProfileOverride {
    fn key(&self) -> &str {
        self.inner.key()
    }
    fn display_name(&self) -> String {
        self.inner.display_name()
    }
    fn w_s(&self) -> f64 {
        self.inner.w_s()
    }
    fn h_s(&self) -> f64 {
        self.inner.h_s()
    }
    fn calibration_ctx(&self) -> u32 {
        self.inner.calibration_ctx()
    }
    fn chunk(&self) -> u32 {
        self.inner.chunk()
    }
    fn blk_size(&self) -> u32 {
        self.inner.blk_size()
    }
    fn total_kv_blks(&self) -> u64 {
        self.total_kv_blks
            .unwrap_or_else(|| self.inner.total_kv_blks())
    }
    fn max_slots(&self) -> u32 {
        self.max_slots.unwrap_or_else(|| self.inner.max_slots())
    }
    fn cost_per_hr(&self) -> f64 {
        self.inner.cost_per_hr()
    }
    fn gpus(&self) -> u32 {
        self.inner.gpus()
    }
    fn power(&self) -> PowerModel {
        self.inner.power()
    }
    fn kv_bytes_per_token(&self) -> Option<f64> {
        self.inner.kv_bytes_per_token()
    }
    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }
    fn max_context(&self) -> Option<u32> {
        self.inner.max_context()
    }
    fn prefill_roofline_s(&self, c: u32, q: u32) -> Option<f64> {
        self.inner.prefill_roofline_s(c, q)
    }
    fn has_roofline(&self) -> bool {
        self.inner.has_roofline()
    }
    fn n_slots(&self, max_ctx: u32) -> u64 {
        self.n_slots.unwrap_or_else(|| slots_at(self, max_ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::resolve_profile;

    #[test]
    fn a_batch_cap_sets_the_slots_and_keeps_the_rest() {
        let h100 = resolve_profile("h100").unwrap();
        let capped = ProfileOverride::batch_cap(Arc::clone(&h100), 12, 8192);
        assert_eq!(capped.n_slots(8192), 12);
        assert_eq!((capped.w_s(), capped.h_s()), (h100.w_s(), h100.h_s()));
        assert_eq!(ProfileOverride::new(h100).with_n_slots(3).n_slots(65536), 3);
    }
}
