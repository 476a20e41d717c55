//! The W/H iteration model of a GPU profile.

use std::sync::Arc;

use super::pass::{PassShape, PassTime, TimingModel};
use crate::profile::GpuProfile;

/// One iteration costs `iter(n, L) = W + H · (L / calibration_ctx) · n` seconds for
/// `n` requests of mean sequence length `L`. A pass computing `P` prompt tokens
/// runs `max(1, ceil(P / chunk))` iterations; with a computed profile each prefill
/// iteration takes at least its roofline compute time. A pass with prompt work is
/// booked as prefill time, a pure decode pass as decode time.
#[derive(Debug, Clone)]
pub struct IterationTiming {
    profile: Arc<dyn GpuProfile>,
    name: String,
}

impl IterationTiming {
    /// The iteration model of `profile`.
    pub fn from_profile(profile: Arc<dyn GpuProfile>) -> IterationTiming {
        let name = format!("iteration:{}", profile.key());
        IterationTiming { profile, name }
    }

    /// Sum over the pass's prefill iterations of `max(iter, roofline)`: the prompt
    /// tokens are cut into consecutive chunks of `chunk` tokens, each chunk possibly
    /// spanning several requests.
    fn roofline_prefill_s(&self, shape: &PassShape<'_>, iter_s: f64) -> f64 {
        let chunk = self.profile.chunk().max(1);
        let mut total = 0.0;
        let mut chunk_left = chunk;
        let mut chunk_flops_s = 0.0;
        for c in shape.prefill {
            let mut done = 0;
            while done < c.tokens {
                let take = (c.tokens - done).min(chunk_left);
                let q = c.context_before + done;
                chunk_flops_s += self.profile.prefill_roofline_s(take, q).unwrap_or(0.0);
                done += take;
                chunk_left -= take;
                if chunk_left == 0 {
                    total += iter_s.max(chunk_flops_s);
                    chunk_left = chunk;
                    chunk_flops_s = 0.0;
                }
            }
        }
        if chunk_left < chunk {
            total += iter_s.max(chunk_flops_s);
        }
        total
    }
}

impl TimingModel for IterationTiming {
    fn name(&self) -> &str {
        &self.name
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        let n = shape.prefill.len() as u64 + shape.decode_requests as u64;
        if n == 0 {
            return PassTime::default();
        }
        let seq_tokens: u64 = shape
            .prefill
            .iter()
            .map(|c| c.context_before as u64 + c.tokens as u64)
            .sum::<u64>()
            + shape.decode_context_tokens;
        let mean_len = seq_tokens as f64 / n as f64;
        let iter_s = self.profile.iter_s(n as f64, mean_len);
        let p = shape.prefill_tokens();
        if p == 0 {
            return PassTime {
                prefill_s: 0.0,
                decode_s: iter_s,
            };
        }
        let prefill_s = if self.profile.has_roofline() {
            self.roofline_prefill_s(shape, iter_s)
        } else {
            p.div_ceil(self.profile.chunk().max(1) as u64) as f64 * iter_s
        };
        PassTime {
            prefill_s,
            decode_s: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::resolve_profile;
    use crate::timing::PrefillChunk;

    #[test]
    fn manual_profile_iterations() {
        let a100 = resolve_profile("a100").unwrap();
        let m = IterationTiming::from_profile(a100);
        // One request, 1024 prompt tokens from scratch: 2 iterations of chunk 512,
        // each iter(1, 1024) = 0.008 + 0.00065 × 1024/8192.
        let chunks = [PrefillChunk {
            context_before: 0,
            tokens: 1024,
        }];
        let shape = PassShape {
            prefill: &chunks,
            decode_requests: 0,
            decode_context_tokens: 0,
            kv_capacity_tokens: 1,
        };
        let t = m.pass_time(&shape);
        assert!((t.prefill_s - 2.0 * (0.008 + 0.00065 / 8.0)).abs() < 1e-12);
        // 4 decoders at context 8192: W + H × 4.
        let shape = PassShape {
            prefill: &[],
            decode_requests: 4,
            decode_context_tokens: 4 * 8192,
            kv_capacity_tokens: 1,
        };
        assert!((m.pass_time(&shape).decode_s - (0.008 + 0.00065 * 4.0)).abs() < 1e-12);
    }

    #[test]
    fn computed_profile_prefill_is_at_least_its_roofline() {
        let p = resolve_profile("h100/llama-3.1-70b/tp8").unwrap();
        let m = IterationTiming::from_profile(p.clone());
        let chunks = [PrefillChunk {
            context_before: 0,
            tokens: 4096,
        }];
        let shape = PassShape {
            prefill: &chunks,
            decode_requests: 0,
            decode_context_tokens: 0,
            kv_capacity_tokens: 1,
        };
        let t = m.pass_time(&shape).prefill_s;
        let iters = 4096 / p.chunk() as u64;
        let memory_bound = iters as f64 * p.iter_s(1.0, 4096.0);
        let compute: f64 = (0..iters as u32)
            .map(|i| p.prefill_roofline_s(p.chunk(), i * p.chunk()).unwrap())
            .sum();
        assert!(t >= memory_bound - 1e-12 && t >= compute - 1e-12);
        assert!(t <= memory_bound + compute);
    }
}
