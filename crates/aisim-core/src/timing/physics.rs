//! The physics timing model: a pass's time from first principles, each basis
//! term scaled by a coefficient that calibration can fit (docs/fidelity.md).
//!
//! ```text
//! t = ‖c_compute · T_gemm, c_weights · T_weights‖
//!     + ‖c_compute · T_attention, c_kv · T_kv‖
//!     + c_weights · T_activations + c_allreduce · T_allreduce
//!     + pass_ms + request_ms · requests          (‖a, b‖ = √(a² + b²))
//! ```
//! `T_gemm`: the FLOPs of the pass's tokens through the weights (and of the
//! LM head for each request's sampled position); `T_weights`: the weight
//! bytes the pass touches, read once (for MoE, the experts the batch's tokens
//! are expected to hit); `T_attention`: the attention FLOPs (prompt chunks
//! over their cached context and their own causal half, each decoding token
//! over its context); `T_kv`: the KV bytes attention reads (each decoding
//! request's context, each prompt chunk's cached context), the decoders'
//! share slowed by the hardware's `mixed_pass_kv_factor` when the pass
//! also holds prompt chunks; `T_activations`: the activation bytes of the elementwise
//! kernels between the GEMMs; `T_allreduce`: two ring all-reduces of the pass's activations per layer
//! over the tensor-parallel group's link, each after [`allreduce_latency_s`].
//! FLOPs run at [`ATTAINABLE_COMPUTE_FRACTION`] of the dense peak and bytes
//! at [`ATTAINABLE_BANDWIDTH_FRACTION`] of the bandwidth. Compute overlaps
//! memory traffic within a kernel, not across kernels: the projections and
//! FFN and attention run one after the other, each combining its compute and
//! its memory time. They combine as a 2-norm, not a max: a kernel overlaps
//! its loads and its math imperfectly, so measured GEMMs near the ridge point
//! take well over the larger of the two; the 2-norm (√2 times either at the
//! ridge) follows that curve and meets the max far from it.

use serde::{Deserialize, Serialize};

use super::pass::{PassShape, PassTime, TimingModel};
use crate::error::CoreError;
use crate::profile::{ComputedProfile, GpuProfile, ModelSpec, ATTAINABLE_BANDWIDTH_FRACTION};

/// The share of the dense FLOP peak that tuned GEMM and attention kernels
/// sustain on large shapes (bf16 GEMMs reach 68–100 % of the sheets' dense
/// figures in the shared per-layer profiles; docs/fidelity.md).
pub const ATTAINABLE_COMPUTE_FRACTION: f64 = 0.8;

/// The fixed time of one all-reduce within a node at two GPUs, whatever its
/// size (the custom one-shot and NCCL low-latency all-reduces take
/// single-digit to about 10 µs on small messages).
pub const ALLREDUCE_LATENCY_S: f64 = 8e-6;

/// What each GPU beyond two adds to an all-reduce's fixed time: a ring's
/// small-message all-reduce crosses `2 (tp − 1)` steps, each a link's
/// latency and a synchronization, about 1.5 µs on NVLink; so 8 µs at TP 2,
/// 14 µs at TP 4, 26 µs at TP 8 (NCCL's published small-message all-reduce
/// times grow about so with the GPU count; docs/fidelity.md).
pub const ALLREDUCE_HOP_S: f64 = 1.5e-6;

/// The fixed time of one all-reduce over `tp` GPUs.
pub fn allreduce_latency_s(tp: f64) -> f64 {
    ALLREDUCE_LATENCY_S + 2.0 * (tp - 2.0).max(0.0) * ALLREDUCE_HOP_S
}

/// Scales of the basis terms and the per-pass and per-request overheads.
/// The defaults are the zero-shot model: every term at the attainable
/// fraction of the hardware's published peaks, no overhead.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhysicsCoefficients {
    /// Scale of the compute time (attainable / achieved FLOP rate).
    pub compute: f64,
    /// Scale of the weight- and activation-read time (attainable / achieved
    /// bandwidth).
    pub weights: f64,
    /// Scale of the KV-read time.
    pub kv: f64,
    /// Scale of the tensor-parallel all-reduce time.
    pub allreduce: f64,
    /// Constant per pass, ms (launch, scheduling, sampling).
    pub pass_ms: f64,
    /// Constant per request in the pass, ms (input preparation, detokenizing).
    pub request_ms: f64,
}

impl Default for PhysicsCoefficients {
    fn default() -> Self {
        PhysicsCoefficients {
            compute: 1.0,
            weights: 1.0,
            kv: 1.0,
            allreduce: 1.0,
            pass_ms: 0.0,
            request_ms: 0.0,
        }
    }
}

/// Names of the coefficients, in the order of [`PhysicsCoefficients::to_array`].
pub const COEFFICIENT_NAMES: [&str; 6] = [
    "compute",
    "weights",
    "kv",
    "allreduce",
    "pass_ms",
    "request_ms",
];

impl PhysicsCoefficients {
    /// The coefficients in the order of [`COEFFICIENT_NAMES`].
    pub fn to_array(self) -> [f64; 6] {
        [
            self.compute,
            self.weights,
            self.kv,
            self.allreduce,
            self.pass_ms,
            self.request_ms,
        ]
    }

    /// The inverse of [`PhysicsCoefficients::to_array`].
    pub fn from_array(a: [f64; 6]) -> PhysicsCoefficients {
        let [compute, weights, kv, allreduce, pass_ms, request_ms] = a;
        PhysicsCoefficients {
            compute,
            weights,
            kv,
            allreduce,
            pass_ms,
            request_ms,
        }
    }

    /// Every coefficient finite and at least 0 (a negative one would give
    /// negative pass times); `field` prefixes the name in the error.
    pub fn validate(&self, field: &'static str) -> Result<(), CoreError> {
        for (name, v) in COEFFICIENT_NAMES.iter().zip(self.to_array()) {
            if !(v.is_finite() && v >= 0.0) {
                return Err(CoreError::config(
                    field,
                    format!("{name} = {v}"),
                    "every coefficient must be a finite number, 0 or more",
                ));
            }
        }
        Ok(())
    }
}

/// The basis terms of one pass, seconds (before the coefficients), at the
/// attainable rates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PhysicsTerms {
    /// FLOPs of the tokens through the weights and of the LM head.
    pub compute_s: f64,
    /// Attention FLOPs.
    pub attention_s: f64,
    /// Weight bytes touched.
    pub weights_s: f64,
    /// KV bytes read by attention (decoders' slowed in a mixed pass).
    pub kv_s: f64,
    /// Activation bytes of the elementwise kernels.
    pub activations_s: f64,
    /// Tensor-parallel all-reduces: a fixed latency each, plus their bytes
    /// at the link bandwidth.
    pub allreduce_s: f64,
    /// Requests in the pass.
    pub requests: u64,
}

impl PhysicsTerms {
    /// The pass time these terms give under `c`, seconds.
    pub fn time_s(&self, c: &PhysicsCoefficients) -> f64 {
        let gemm = (c.compute * self.compute_s).hypot(c.weights * self.weights_s);
        let attention = (c.compute * self.attention_s).hypot(c.kv * self.kv_s);
        gemm + attention
            + c.weights * self.activations_s
            + c.allreduce * self.allreduce_s
            + 1e-3 * (c.pass_ms + c.request_ms * self.requests as f64)
    }
}

/// Hardware and model facts the terms need, derived once.
#[derive(Debug, Clone)]
struct Facts {
    /// Attainable FLOP/s and memory bytes/s per GPU.
    flop_rate: f64,
    /// The hardware's slowdown of decoders' KV reads in a mixed pass.
    mixed_pass_kv_factor: f64,
    byte_rate: f64,
    link_bytes_per_s: f64,
    tp: f64,
    dtype_bytes: f64,
    hidden: f64,
    layers: f64,
    kv_bytes_per_token_per_gpu: f64,
    /// Weights every token touches (attention, embeddings, dense FFN, shared experts), bytes per GPU.
    fixed_weight_bytes: f64,
    /// Routed experts: (per MoE layer count, top_k, bytes of one expert over all MoE layers per GPU).
    experts: Option<(f64, f64, f64)>,
    /// FLOPs per GPU of one token's weights, and per earlier token it attends to.
    token_flops: f64,
    context_flops_per_token: f64,
    /// FLOPs per GPU of the LM head for one sampled position.
    lm_head_flops: f64,
    /// Bytes per GPU the elementwise kernels read and write per token.
    activation_bytes_per_token: f64,
}

/// Activation bytes per token per GPU of the elementwise kernels between the
/// GEMMs: the gated activation reads the gate and up halves and writes their
/// product (`3 × FFN width`, sharded by tensor parallelism), and the two
/// residual RMSNorms of a layer each read and write the hidden state (`4 ×
/// hidden`, replicated). An MoE layer's FFN width is its `top_k` routed and
/// its shared experts'; its leading dense layers have the dense width.
fn activation_bytes_per_token(m: &ModelSpec, dtype_bytes: f64, tp: f64) -> f64 {
    let layers = m.layers as f64;
    let ffn_widths = match &m.moe {
        None => layers * m.intermediate as f64,
        Some(e) => {
            let dense = e.dense_layers.min(m.layers) as f64;
            let routed = (e.top_k as f64 + e.shared_experts as f64) * e.expert_intermediate as f64;
            dense * m.intermediate as f64 + (layers - dense) * routed
        }
    };
    dtype_bytes * (3.0 * ffn_widths / tp + 4.0 * layers * m.hidden as f64)
}

/// The physics model of a computed profile under some coefficients.
#[derive(Debug, Clone)]
pub struct PhysicsTiming {
    facts: Facts,
    coefficients: PhysicsCoefficients,
    name: String,
}

/// Routed-expert weights of `m`: (experts, top_k, parameters of one expert
/// summed over the MoE layers).
fn routed_experts(m: &ModelSpec) -> Option<(f64, f64, f64)> {
    let moe = m.moe.as_ref()?;
    let moe_layers = m.layers.saturating_sub(moe.dense_layers.min(m.layers)) as f64;
    let per_expert = 3.0 * m.hidden as f64 * moe.expert_intermediate as f64 * moe_layers;
    Some((moe.experts as f64, moe.top_k as f64, per_expert))
}

impl PhysicsTiming {
    /// The model of `profile` (a computed one: the model needs the
    /// architecture and the hardware) under `coefficients`.
    pub fn new(
        profile: &ComputedProfile,
        coefficients: PhysicsCoefficients,
    ) -> Result<PhysicsTiming, CoreError> {
        coefficients.validate("timing.coefficients")?;
        let hw = profile.hardware();
        let m = profile.model();
        let s = profile.serving();
        let tp = s.tp as f64;
        let peak_tflops = if s.dtype_bytes <= 1.0 && hw.fp8_tflops > 0.0 {
            hw.fp8_tflops
        } else {
            hw.fp16_tflops
        };
        let experts = routed_experts(m);
        let routed_active = experts.map_or(0.0, |(_, k, per)| k * per);
        let fixed_params = (m.active_params() as f64 - routed_active).max(0.0);
        // prefill_flops(1, q) = 2·weights + a·(q + 1/2): split into its
        // weight part and its per-context-token part `a`.
        let context_flops_per_token = (m.prefill_flops(1, 1) - m.prefill_flops(1, 0)) / tp;
        let token_flops = m.prefill_flops(1, 0) / tp - context_flops_per_token / 2.0;
        let facts = Facts {
            flop_rate: ATTAINABLE_COMPUTE_FRACTION * peak_tflops * 1e12,
            mixed_pass_kv_factor: hw.mixed_pass_kv_factor,
            byte_rate: ATTAINABLE_BANDWIDTH_FRACTION * hw.mem_bw_bytes_per_s,
            link_bytes_per_s: hw.nvlink_gb_per_s * 1e9,
            tp,
            dtype_bytes: s.dtype_bytes,
            hidden: m.hidden as f64,
            layers: m.layers as f64,
            kv_bytes_per_token_per_gpu: m.kv_bytes_per_token_per_gpu(s.dtype_bytes, s.tp),
            fixed_weight_bytes: fixed_params * s.dtype_bytes / tp,
            experts: experts.map(|(e, k, per)| (e, k, per * s.dtype_bytes / tp)),
            token_flops,
            context_flops_per_token,
            // The LM head projects only the positions sampled: one per
            // request in the pass (vocabulary sharded across the group).
            lm_head_flops: 2.0 * m.vocab as f64 * m.hidden as f64 / tp,
            activation_bytes_per_token: activation_bytes_per_token(m, s.dtype_bytes, tp),
        };
        for (what, v) in [
            ("peak FLOP/s", facts.flop_rate),
            ("memory bandwidth", facts.byte_rate),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(CoreError::config(
                    "timing.profile",
                    profile.key(),
                    format!("the physics model needs the hardware's {what} above 0"),
                ));
            }
        }
        let name = format!("physics:{}", profile.key());
        Ok(PhysicsTiming {
            facts,
            coefficients,
            name,
        })
    }

    /// The coefficients in use.
    pub fn coefficients(&self) -> PhysicsCoefficients {
        self.coefficients
    }

    /// Routed-expert weight bytes (per GPU) a pass of `tokens` tokens is
    /// expected to read: each token picks `top_k` of `experts` experts, so
    /// an expert is untouched with probability `(1 − top_k/experts)^tokens`.
    pub fn expert_bytes(&self, tokens: u64) -> f64 {
        match self.facts.experts {
            None => 0.0,
            Some((e, k, per)) if e > 0.0 => {
                let untouched = (1.0 - (k / e).min(1.0)).powf(tokens as f64);
                e * (1.0 - untouched) * per
            }
            Some(_) => 0.0,
        }
    }

    /// The basis terms of a pass.
    pub fn terms(&self, shape: &PassShape<'_>) -> PhysicsTerms {
        let f = &self.facts;
        let decode = shape.decode_requests as u64;
        let requests = shape.prefill.len() as u64 + decode;
        if requests == 0 {
            return PhysicsTerms::default();
        }
        let prefill_tokens = shape.prefill_tokens();
        let tokens = prefill_tokens + decode;
        // Token i of a chunk attends to context_before + i earlier tokens
        // (the causal half of the chunk), as `ModelSpec::prefill_flops` counts.
        let prefill_context: f64 = shape
            .prefill
            .iter()
            .map(|c| c.tokens as f64 * (c.context_before as f64 + c.tokens as f64 / 2.0))
            .sum();
        let decode_context = shape.decode_context_tokens as f64 + decode as f64 / 2.0;
        let gemm_flops = tokens as f64 * f.token_flops + requests as f64 * f.lm_head_flops;
        let attention_flops = (prefill_context + decode_context) * f.context_flops_per_token;
        let weight_bytes = f.fixed_weight_bytes + self.expert_bytes(tokens);
        // Attention reads each decoder's context and each chunk's cached one.
        let cached: u64 = shape.prefill.iter().map(|c| c.context_before as u64).sum();
        let decode_kv_factor = if prefill_tokens > 0 {
            f.mixed_pass_kv_factor
        } else {
            1.0
        };
        let kv_tokens = decode_kv_factor * shape.decode_context_tokens as f64 + cached as f64;
        let kv_bytes = kv_tokens * f.kv_bytes_per_token_per_gpu;
        // Two all-reduces per layer: each a fixed latency, plus its ring
        // traffic where the hardware names a link bandwidth.
        let allreduce_s = if f.tp > 1.0 {
            let bytes = tokens as f64 * f.hidden * f.dtype_bytes;
            let ring = if f.link_bytes_per_s > 0.0 {
                2.0 * (f.tp - 1.0) / f.tp * bytes / f.link_bytes_per_s
            } else {
                0.0
            };
            2.0 * f.layers * (allreduce_latency_s(f.tp) + ring)
        } else {
            0.0
        };
        PhysicsTerms {
            compute_s: gemm_flops / f.flop_rate,
            attention_s: attention_flops / f.flop_rate,
            weights_s: weight_bytes / f.byte_rate,
            kv_s: kv_bytes / f.byte_rate,
            activations_s: tokens as f64 * f.activation_bytes_per_token / f.byte_rate,
            allreduce_s,
            requests,
        }
    }
}

impl TimingModel for PhysicsTiming {
    fn name(&self) -> &str {
        &self.name
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        PassTime::whole_pass(shape, self.terms(shape).time_s(&self.coefficients))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::PrefillChunk;

    fn physics(key: &str) -> PhysicsTiming {
        let p = ComputedProfile::from_key(key).unwrap();
        PhysicsTiming::new(&p, PhysicsCoefficients::default()).unwrap()
    }

    fn decode(n: u32, ctx: u64) -> PassShape<'static> {
        chunk_pass(&[], n, ctx)
    }

    /// H100's attainable bandwidth and dense bf16 FLOP rate.
    const H100_BW: f64 = ATTAINABLE_BANDWIDTH_FRACTION * 3.35e12;
    const H100_FLOPS: f64 = ATTAINABLE_COMPUTE_FRACTION * 989e12;

    fn chunk_pass<'a>(chunk: &'a [PrefillChunk], decoders: u32, ctx: u64) -> PassShape<'a> {
        PassShape {
            prefill: chunk,
            decode_requests: decoders,
            decode_context_tokens: decoders as u64 * ctx,
            kv_capacity_tokens: 1 << 20,
        }
    }

    #[test]
    fn dense_decode_reads_every_weight_once_and_the_kv() {
        let m = physics("h100/llama-3.1-8b");
        let p = ComputedProfile::from_key("h100/llama-3.1-8b").unwrap();
        let model = p.model();
        let t = m.terms(&decode(8, 1000));
        let weights = model.active_params() as f64 * 2.0 / H100_BW;
        assert!((t.weights_s - weights).abs() < 1e-12 * weights.max(1.0));
        let kv = 8000.0 * model.kv_bytes_per_token(2.0) / H100_BW;
        assert!((t.kv_s - kv).abs() < 1e-15);
        assert_eq!(t.allreduce_s, 0.0);
        // Eight tokens through the weights, eight sampled positions through
        // the LM head, and each token's elementwise traffic.
        let lm_head = 2.0 * (model.vocab * model.hidden) as f64;
        // Two FLOPs per weight a token touches: every parameter but the
        // embedding table (the LM head, counted once, is added per request).
        let token = 2.0 * (model.active_params() - model.vocab * model.hidden) as f64;
        let want = 8.0 * (token + lm_head) / H100_FLOPS;
        assert!(
            (t.compute_s - want).abs() < 1e-12 * want,
            "{} vs {want}",
            t.compute_s
        );
        let act = 8.0 * 32.0 * 2.0 * (3.0 * 14336.0 + 4.0 * 4096.0) / H100_BW;
        assert!(
            (t.activations_s - act).abs() < 1e-12 * act,
            "{} vs {act}",
            t.activations_s
        );
        // Batch 1 and 64 read the same weights on a dense model.
        assert_eq!(m.terms(&decode(64, 1000)).weights_s, t.weights_s);
    }

    #[test]
    fn moe_decode_at_batch_64_reads_more_experts_than_at_batch_1() {
        let m = physics("h100/mixtral-8x7b/tp2");
        let one = m.terms(&decode(1, 1000)).weights_s;
        let many = m.terms(&decode(64, 1000)).weights_s;
        assert!(many > 1.5 * one, "batch 64 {many} vs batch 1 {one}");
        // At batch 1 exactly top_k of the experts are read; at 64 nearly all.
        let p = ComputedProfile::from_key("h100/mixtral-8x7b/tp2").unwrap();
        let active = p.model().active_params() as f64 * 2.0 / 2.0 / H100_BW;
        let all = p.model().params() as f64 * 2.0 / 2.0 / H100_BW;
        assert!((one - active).abs() / active < 1e-9, "{one} vs {active}");
        assert!(many <= all * (1.0 + 1e-9) && many > 0.99 * all);
    }

    #[test]
    fn prefill_flops_match_the_model_and_count_cached_context() {
        let m = physics("h100/llama-3.1-70b/tp8");
        let p = ComputedProfile::from_key("h100/llama-3.1-70b/tp8").unwrap();
        let chunk = [PrefillChunk {
            context_before: 3000,
            tokens: 512,
        }];
        let shape = chunk_pass(&chunk, 0, 0);
        let t = m.terms(&shape);
        // The chunk's FLOPs per GPU, and its one sampled position's LM head.
        let lm_head = 2.0 * (p.model().vocab * p.model().hidden) as f64 / 8.0;
        let want = (p.prefill_flops(512, 3000) + lm_head) / H100_FLOPS;
        let flops_s = t.compute_s + t.attention_s;
        assert!((flops_s - want).abs() / want < 1e-9, "{flops_s} vs {want}");
        // The chunk's attention reads its 3000 cached tokens' KV.
        let kv = 3000.0 * p.model().kv_bytes_per_token_per_gpu(2.0, 8) / H100_BW;
        assert!((t.kv_s - kv).abs() < 1e-15, "{} vs {kv}", t.kv_s);
        // Two all-reduces per layer, each its latency plus its bytes.
        let bytes = 512.0 * 8192.0 * 2.0 * 2.0 * 7.0 / 8.0;
        let link = p.hardware().nvlink_gb_per_s * 1e9;
        let allreduce = 160.0 * (allreduce_latency_s(8.0) + bytes / link);
        assert!((t.allreduce_s - allreduce).abs() < 1e-12 * allreduce);
        let cold = [PrefillChunk {
            context_before: 0,
            tokens: 512,
        }];
        let cold = m.terms(&chunk_pass(&cold, 0, 0));
        assert!(t.attention_s > cold.attention_s);
        assert_eq!(t.compute_s, cold.compute_s);
    }

    #[test]
    fn all_reduce_latency_grows_with_tensor_parallelism() {
        let tp2 = physics("h100/llama-3.1-70b/tp2").terms(&decode(1, 100));
        let tp4 = physics("h100/llama-3.1-70b/tp4").terms(&decode(1, 100));
        let tp8 = physics("h100/llama-3.1-70b/tp8").terms(&decode(1, 100));
        // Weight reads split four ways more; each all-reduce's latency
        // grows by a ring step per GPU (8, 14, 26 µs), and at batch 1 it is
        // nearly all of the all-reduce time.
        assert!((tp2.weights_s / tp8.weights_s - 4.0).abs() < 1e-3);
        for (t, us) in [(tp2, 8.0), (tp4, 14.0), (tp8, 26.0)] {
            let latency = 160.0 * us * 1e-6;
            assert!(
                t.allreduce_s > latency && t.allreduce_s < 1.01 * latency,
                "{t:?}"
            );
        }
        assert_eq!(
            physics("h100/llama-3.1-70b")
                .terms(&decode(1, 100))
                .allreduce_s,
            0.0
        );
    }

    #[test]
    fn moe_activations_use_the_routed_width_and_dense_layers_the_dense_one() {
        let mut model = ComputedProfile::from_key("h100/mixtral-8x7b")
            .unwrap()
            .model()
            .clone();
        let hw = crate::profile::HardwareSpec::find("h100").unwrap().clone();
        let per_token = |m: &ModelSpec| {
            let p = ComputedProfile::new("t".into(), hw.clone(), m.clone(), Default::default())
                .unwrap();
            let t = PhysicsTiming::new(&p, PhysicsCoefficients::default())
                .unwrap()
                .terms(&decode(1, 10));
            t.activations_s * H100_BW
        };
        let e = model.moe.clone().unwrap();
        let (layers, hidden) = (model.layers as f64, model.hidden as f64);
        let routed = (e.top_k + e.shared_experts) as f64 * e.expert_intermediate as f64;
        let all_moe = 2.0 * layers * (3.0 * routed + 4.0 * hidden);
        assert!((per_token(&model) - all_moe).abs() < 1e-6 * all_moe);
        // Two leading dense layers read and write the dense FFN width.
        model.moe.as_mut().unwrap().dense_layers = 2;
        model.intermediate = 3 * e.expert_intermediate;
        let want = all_moe + 2.0 * 2.0 * 3.0 * (model.intermediate as f64 - routed);
        assert!((per_token(&model) - want).abs() < 1e-6 * want);
    }

    #[test]
    fn a_link_without_a_bandwidth_still_costs_each_all_reduce_its_latency() {
        let p = ComputedProfile::from_key("h100/llama-3.1-70b/tp8").unwrap();
        let mut hw = p.hardware().clone();
        hw.nvlink_gb_per_s = 0.0;
        let p =
            ComputedProfile::new("t".into(), hw, p.model().clone(), p.serving().clone()).unwrap();
        let m = PhysicsTiming::new(&p, PhysicsCoefficients::default()).unwrap();
        let t = m.terms(&decode(64, 100));
        assert_eq!(t.allreduce_s, 160.0 * allreduce_latency_s(8.0));
    }

    #[test]
    fn gemms_combine_compute_and_memory_as_a_two_norm() {
        let m = physics("rtx4090/llama-3.1-8b");
        let c = PhysicsCoefficients::default();
        let chunk = [PrefillChunk {
            context_before: 0,
            tokens: 2048,
        }];
        let t = m.terms(&chunk_pass(&chunk, 0, 0));
        assert!(t.compute_s > 5.0 * t.weights_s, "{t:?}");
        let gemm = (t.compute_s.powi(2) + t.weights_s.powi(2)).sqrt();
        let attention = (t.attention_s.powi(2) + t.kv_s.powi(2)).sqrt();
        let want = gemm + attention + t.activations_s;
        assert!((t.time_s(&c) - want).abs() < 1e-15, "{t:?}");
        // Far from the ridge (2,048 tokens, or a decode at batch 1) the
        // 2-norm is within 2 % of the larger term.
        assert!(gemm < 1.02 * t.compute_s);
        let d = m.terms(&decode(1, 100));
        assert!((d.time_s(&c) - d.weights_s - d.kv_s - d.activations_s) < 1e-3 * d.weights_s);
        // At the ridge it is √2 times either: scale compute to meet weights.
        let ridge = PhysicsCoefficients {
            compute: t.weights_s / t.compute_s,
            ..c
        };
        let at_ridge = PhysicsTerms {
            attention_s: 0.0,
            kv_s: 0.0,
            activations_s: 0.0,
            ..t
        };
        let want = std::f64::consts::SQRT_2 * t.weights_s;
        assert!((at_ridge.time_s(&ridge) - want).abs() < 1e-12 * want);
    }

    #[test]
    fn a_mixed_pass_slows_its_decoders_kv_reads() {
        let m = physics("rtx4090/llama-3.1-8b");
        let chunk = [PrefillChunk {
            context_before: 0,
            tokens: 16,
        }];
        let decode_only = m.terms(&decode(64, 2000));
        let mixed = m.terms(&chunk_pass(&chunk, 64, 2000));
        let ratio = mixed.kv_s / decode_only.kv_s;
        assert!((ratio - 1.96).abs() < 1e-12, "{ratio}");
        // A chunk's own cached context is read at the full rate.
        let warm = [PrefillChunk {
            context_before: 1000,
            tokens: 16,
        }];
        let warm = m.terms(&chunk_pass(&warm, 64, 2000));
        let cached = warm.kv_s - mixed.kv_s;
        let want = 1000.0 * decode_only.kv_s / (64.0 * 2000.0);
        assert!((cached - want).abs() < 1e-12 * want, "{cached} vs {want}");
        // The GEMMs are compute-bound and decode attention memory-bound: the
        // pass adds them, longer than one max over all the pass's traffic.
        let c = PhysicsCoefficients::default();
        let big = [PrefillChunk {
            context_before: 0,
            tokens: 2048,
        }];
        let t = m.terms(&chunk_pass(&big, 64, 2000));
        assert!(t.compute_s > t.weights_s && t.kv_s > t.attention_s, "{t:?}");
        let whole_pass_max = (t.compute_s + t.attention_s).max(t.weights_s + t.kv_s);
        assert!(t.time_s(&c) > 1.05 * whole_pass_max, "{t:?}");
    }

    #[test]
    fn coefficients_scale_their_terms_and_add_overheads() {
        let p = ComputedProfile::from_key("h100/llama-3.1-8b").unwrap();
        let c = PhysicsCoefficients {
            compute: 1.5,
            weights: 2.0,
            kv: 3.0,
            pass_ms: 1.5,
            request_ms: 0.25,
            ..PhysicsCoefficients::default()
        };
        let m = PhysicsTiming::new(&p, c).unwrap();
        let shape = decode(4, 500);
        let t = m.terms(&shape);
        let want = (1.5 * t.compute_s).hypot(2.0 * t.weights_s)
            + (1.5 * t.attention_s).hypot(3.0 * t.kv_s)
            + 2.0 * t.activations_s
            + 1.5e-3
            + 4.0 * 0.25e-3;
        assert!((m.pass_time(&shape).decode_s - want).abs() < 1e-15);
        let bad = PhysicsCoefficients {
            kv: -1.0,
            ..PhysicsCoefficients::default()
        };
        let e = PhysicsTiming::new(&p, bad).unwrap_err().to_string();
        assert!(e.contains("kv = -1"), "{e}");
    }
}
