//! A profile with fewer slots: the batch-size cap of demand response
//! (`max_num_seqs` curtailment), as a profile the calibration understands.

use aisim_core::profile::{GpuProfile, PowerModel};

/// `inner` with its slot count at `max_ctx` forced to `cap`, both through the KV
/// blocks and through the compute cap.
#[derive(Debug)]
pub struct Throttled<'a> {
    inner: &'a dyn GpuProfile,
    max_slots: u32,
    total_kv_blks: u64,
}

impl<'a> Throttled<'a> {
    /// Caps `inner` at `cap` sequences of `max_ctx` tokens.
    pub fn new(inner: &'a dyn GpuProfile, cap: u64, max_ctx: u32) -> Throttled<'a> {
        let blocks_per_seq = (max_ctx as u64).div_ceil(inner.blk_size().max(1) as u64);
        let max_slots = (cap * max_ctx as u64).div_ceil(inner.calibration_ctx().max(1) as u64);
        Throttled {
            inner,
            max_slots: max_slots.min(u32::MAX as u64) as u32,
            total_kv_blks: cap * blocks_per_seq,
        }
    }
}

impl GpuProfile for Throttled<'_> {
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
    }
    fn max_slots(&self) -> u32 {
        self.max_slots
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
}
