//! Power draw against batch size.

use serde::{Deserialize, Serialize};

/// `P(b)` in watts for a batch of `b` sequences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PowerModel {
    /// `idle + (nominal - idle) / (1 + exp(-k (log2(max(1, b)) - x0)))`; with
    /// `k = 0`, linear `idle + (nominal - idle) × min(1, b / max_slots)`.
    Measured {
        /// Watts at an empty batch.
        idle_w: f64,
        /// Watts at full load.
        nominal_w: f64,
        /// Logistic steepness (0 = linear).
        logistic_k: f64,
        /// Logistic midpoint in log2(batch).
        logistic_x0: f64,
        /// Batch at full load for the linear form.
        max_slots: u32,
    },
    /// A computed profile without measurements:
    /// `TDP × gpus × (0.43 + 0.43 × min(1, kv_frac + compute_frac))`, with
    /// `kv_frac = b × ceil(mean_ctx / blk) / total_kv_blks` and
    /// `compute_frac = b·H / (W + b·H)`.
    Tdp {
        /// Thermal design power of one GPU.
        tdp_w: f64,
        /// GPUs in the unit.
        gpus: u32,
        /// KV blocks one sequence of the profile's mean context takes.
        blocks_per_seq: f64,
        /// KV blocks of the unit.
        total_kv_blks: f64,
        /// Iteration constant W.
        w_s: f64,
        /// Iteration constant H.
        h_s: f64,
    },
}

impl PowerModel {
    /// Watts with nothing running.
    pub fn idle_w(&self) -> f64 {
        match *self {
            PowerModel::Measured { idle_w, .. } => idle_w,
            PowerModel::Tdp { tdp_w, gpus, .. } => tdp_w * gpus as f64 * 0.43,
        }
    }

    /// Watts at full load.
    pub fn nominal_w(&self) -> f64 {
        match *self {
            PowerModel::Measured { nominal_w, .. } => nominal_w,
            PowerModel::Tdp { tdp_w, gpus, .. } => tdp_w * gpus as f64 * 0.86,
        }
    }

    /// Watts drawn at batch `b`.
    pub fn watts(&self, b: f64) -> f64 {
        match *self {
            PowerModel::Measured {
                idle_w,
                nominal_w,
                logistic_k,
                logistic_x0,
                max_slots,
            } => {
                if logistic_k == 0.0 {
                    idle_w + (nominal_w - idle_w) * (b / max_slots.max(1) as f64).min(1.0)
                } else {
                    let x = b.max(1.0).log2();
                    idle_w + (nominal_w - idle_w) / (1.0 + (-logistic_k * (x - logistic_x0)).exp())
                }
            }
            PowerModel::Tdp {
                tdp_w,
                gpus,
                blocks_per_seq,
                total_kv_blks,
                w_s,
                h_s,
            } => {
                let kv_frac = if total_kv_blks > 0.0 {
                    b * blocks_per_seq / total_kv_blks
                } else {
                    1.0
                };
                let compute_frac = b * h_s / (w_s + b * h_s);
                tdp_w * gpus as f64 * (0.43 + 0.43 * (kv_frac + compute_frac).min(1.0))
            }
        }
    }
}
