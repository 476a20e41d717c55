//! Every built-in model against its published HuggingFace `config.json`: the
//! shape, the KV bytes per token it implies, and the parameter count.

use aisim_core::profile::{model_catalog, ComputedProfile, GpuProfile, ModelSpec};

/// A published shape: `config.json` fields, then the published totals.
struct Published {
    name: &'static str,
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
    vocab: u64,
    /// (routed experts, per token, expert width, shared experts, dense layers)
    moe: Option<(u32, u32, u64, u32, u64)>,
    /// (kv_lora_rank, qk_rope_head_dim)
    mla: Option<(u64, u64)>,
    /// KV bytes per token at 2 bytes per element, worked out by hand.
    kv_bytes_bf16: f64,
    /// Parameters of the published checkpoint (safetensors total).
    params: u64,
    /// Published active parameters, for MoE models.
    active: Option<f64>,
}

#[rustfmt::skip]
const PUBLISHED: &[Published] = &[
    // 2 × 32 layers × 8 KV heads × (K + V) × 128 × 2 B
    Published { name: "llama-3.1-8b", layers: 32, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, intermediate: 14336, vocab: 128256, moe: None, mla: None, kv_bytes_bf16: 131_072.0, params: 8_030_261_248, active: None },
    Published { name: "llama-3.1-70b", layers: 80, hidden: 8192, heads: 64, kv_heads: 8, head_dim: 128, intermediate: 28672, vocab: 128256, moe: None, mla: None, kv_bytes_bf16: 327_680.0, params: 70_553_706_496, active: None },
    Published { name: "llama-3.1-405b", layers: 126, hidden: 16384, heads: 128, kv_heads: 8, head_dim: 128, intermediate: 53248, vocab: 128256, moe: None, mla: None, kv_bytes_bf16: 516_096.0, params: 405_853_388_800, active: None },
    Published { name: "mistral-7b", layers: 32, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, intermediate: 14336, vocab: 32000, moe: None, mla: None, kv_bytes_bf16: 131_072.0, params: 7_241_732_096, active: None },
    Published { name: "mixtral-8x7b", layers: 32, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, intermediate: 14336, vocab: 32000, moe: Some((8, 2, 14336, 0, 0)), mla: None, kv_bytes_bf16: 131_072.0, params: 46_702_792_704, active: Some(12.9e9) },
    // 2 × 36 × 8 × 2 × 128 × 2 = 147,456
    Published { name: "qwen3-8b", layers: 36, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, intermediate: 12288, vocab: 151936, moe: None, mla: None, kv_bytes_bf16: 147_456.0, params: 8_190_735_360, active: None },
    // 64 heads of 128 on a 5120 hidden: head_dim is not hidden / heads.
    Published { name: "qwen3-32b", layers: 64, hidden: 5120, heads: 64, kv_heads: 8, head_dim: 128, intermediate: 25600, vocab: 151936, moe: None, mla: None, kv_bytes_bf16: 262_144.0, params: 32_762_123_264, active: None },
    // 94 × 4 × 2 × 128 × 2 (with hidden / heads = 64 it would be half).
    Published { name: "qwen3-235b-a22b", layers: 94, hidden: 4096, heads: 64, kv_heads: 4, head_dim: 128, intermediate: 0, vocab: 151936, moe: Some((128, 8, 1536, 0, 0)), mla: None, kv_bytes_bf16: 192_512.0, params: 235_093_634_560, active: Some(22e9) },
    Published { name: "qwen3-30b-a3b", layers: 48, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, intermediate: 0, vocab: 151936, moe: Some((128, 8, 768, 0, 0)), mla: None, kv_bytes_bf16: 98_304.0, params: 30_532_122_624, active: Some(3.3e9) },
    // MLA: (512 + 64) × 61 layers × 2 B, one latent for all 128 heads (head_dim,
    // hidden / heads, is then unused).
    Published { name: "deepseek-v3", layers: 61, hidden: 7168, heads: 128, kv_heads: 128, head_dim: 56, intermediate: 18432, vocab: 129280, moe: Some((256, 8, 2048, 1, 3)), mla: Some((512, 64)), kv_bytes_bf16: 70_272.0, params: 671_026_419_712, active: Some(37e9) },
];

fn find(name: &str) -> &'static ModelSpec {
    ModelSpec::find(name).unwrap_or_else(|| panic!("{name} is not in the catalog"))
}

#[test]
fn every_catalog_entry_has_its_published_shape() {
    assert_eq!(
        model_catalog().len(),
        PUBLISHED.len(),
        "a catalog entry without a check"
    );
    for p in PUBLISHED {
        let m = find(p.name);
        let shape = (
            m.layers,
            m.hidden,
            m.heads,
            m.head_dim(),
            m.intermediate,
            m.vocab,
        );
        let want = (
            p.layers,
            p.hidden,
            p.heads,
            p.head_dim,
            p.intermediate,
            p.vocab,
        );
        assert_eq!(shape, want, "{}", p.name);
        if m.mla.is_none() {
            assert_eq!(m.kv_heads, p.kv_heads, "{}", p.name);
        }
        let moe = m.moe.as_ref().map(|e| {
            (
                e.experts,
                e.top_k,
                e.expert_intermediate,
                e.shared_experts,
                e.dense_layers,
            )
        });
        assert_eq!(moe, p.moe, "{}", p.name);
        let mla = m.mla.as_ref().map(|a| (a.kv_lora_rank, a.qk_rope_head_dim));
        assert_eq!(mla, p.mla, "{}", p.name);
    }
}

#[test]
fn every_catalog_entry_has_its_published_kv_bytes_per_token() {
    for p in PUBLISHED {
        let m = find(p.name);
        assert_eq!(m.kv_bytes_per_token(2.0), p.kv_bytes_bf16, "{}", p.name);
        assert_eq!(
            m.kv_bytes_per_token(1.0),
            p.kv_bytes_bf16 / 2.0,
            "{}",
            p.name
        );
    }
}

/// The catalog counts embeddings once and leaves out norms and routers
/// (engine.md); with the untied output head added back, every entry is within
/// 0.05 % of its published checkpoint, and MoE models near their active count.
#[test]
fn every_catalog_entry_has_its_published_parameter_count() {
    for p in PUBLISHED {
        let m = find(p.name);
        let with_head = (m.params() + m.vocab * m.hidden) as f64;
        let err = (with_head - p.params as f64).abs() / p.params as f64;
        assert!(
            err < 5e-4,
            "{}: {with_head} vs {} ({err})",
            p.name,
            p.params
        );
        match p.active {
            None => assert_eq!(m.active_params(), m.params(), "{}", p.name),
            Some(a) => {
                let active = (m.active_params() + m.vocab * m.hidden) as f64;
                assert!(
                    (active - a).abs() / a < 0.02,
                    "{}: active {active} vs {a}",
                    p.name
                );
            }
        }
    }
}

#[test]
fn kv_is_split_over_tensor_parallel_gpus_down_to_one_head() {
    // Llama-3.1-70B, 8 KV heads: one each on 8 GPUs.
    assert_eq!(
        find("llama-3.1-70b").kv_bytes_per_token_per_gpu(2.0, 8),
        40_960.0
    );
    // Qwen3-235B-A22B, 4 KV heads: on 8 GPUs each head sits on two.
    let q = find("qwen3-235b-a22b");
    assert_eq!(q.kv_bytes_per_token_per_gpu(2.0, 4), 48_128.0);
    assert_eq!(q.kv_bytes_per_token_per_gpu(2.0, 8), 48_128.0);
    // DeepSeek-V3's latent is on every GPU in full.
    assert_eq!(
        find("deepseek-v3").kv_bytes_per_token_per_gpu(2.0, 8),
        70_272.0
    );
    // The profile's KV capacity and H use the per-GPU bytes.
    let p = ComputedProfile::from_key("h200/deepseek-v3/tp8/fp8").unwrap();
    assert_eq!(p.kv_bytes_per_token(), Some(8.0 * 35_136.0));
    let eff_bw = 0.8 * p.hardware().mem_bw_bytes_per_s;
    assert!((p.h_s() - 2048.0 * 35_136.0 / eff_bw).abs() < 1e-15);
}

#[test]
fn prefill_flops_use_head_dim_and_mla_widths() {
    let (c, q) = (512.0, 1024.0);
    // Qwen3-235B-A22B: Q and O are 64 heads × 128 wide, K and V 4 × 128.
    let m = find("qwen3-235b-a22b");
    let attn_weights: u64 = 2 * 4096 * 64 * 128 + 2 * 4096 * 4 * 128;
    let ffn_active = 8 * 3 * 4096 * 1536;
    let want = 2.0 * c * (94 * (attn_weights + ffn_active)) as f64
        + 2.0 * 64.0 * 256.0 * c * (c / 2.0 + q) * 94.0;
    assert_eq!(m.prefill_flops(512, 1024), want);
    // DeepSeek-V3: scores over 128 + 64, values over 128, per head.
    let d = find("deepseek-v3");
    let mla_weights: u64 =
        7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168;
    let ffn_active: u64 = 3 * 3 * 7168 * 18432 + 58 * 9 * 3 * 7168 * 2048;
    let want = 2.0 * c * (61 * mla_weights + ffn_active) as f64
        + 2.0 * 128.0 * 320.0 * c * (c / 2.0 + q) * 61.0;
    assert_eq!(d.prefill_flops(512, 1024), want);
}
