//! One timing model per disaggregated pool: exact timing with two different
//! `fixed` models, each pool's KV capacity and tp from its own profile, the
//! KV bytes of a token from the pools' model (two models refused), and a
//! composition's own per-pool models.

#[path = "../../aisim-replay/tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use aisim_core::timing::{FixedTiming, TimingModel, TimingSpec};
use aisim_replay::policy::{DisaggPool, PlacementPolicy, ReplayComposition, RoundRobin};
use aisim_replay::spec::{KvTransferSpec, PoolSpec, TopologySpec};
use aisim_replay::{ReplayError, ReplaySpec, Replayer};
use common::*;

fn fixed(prefill_ms: f64, decode_ms: f64) -> TimingSpec {
    TimingSpec::Fixed {
        prefill_ms,
        decode_ms,
    }
}

/// One request of 1,000 prompt and 3 output tokens on 1 + 1 workers with
/// the pools' own timings; 1,000 bytes a token over 1 GB/s + 2 ms.
fn one_request(prefill: Option<TimingSpec>, decode: Option<TimingSpec>) -> ReplaySpec {
    let row = r#"{"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [1, 2]}"#;
    let mut spec = trace_spec(
        temp_file("pool_timing.jsonl", &format!("{row}\n")),
        1,
        7.0,
        1.0,
    );
    spec.topology = TopologySpec::Disaggregated {
        prefill: PoolSpec {
            timing: prefill.map(Box::new),
            ..PoolSpec::new(1)
        },
        decode: PoolSpec {
            timing: decode.map(Box::new),
            ..PoolSpec::new(1)
        },
        kv_transfer: KvTransferSpec {
            gb_s: 1.0,
            latency_ms: 2.0,
            bytes_per_token: Some(1000),
            ..KvTransferSpec::default()
        },
    };
    spec
}

#[test]
fn ttft_is_the_prefill_pools_pass_plus_transfer_plus_the_decode_pools_first_pass() {
    // The prefill pool's model: 10 ms a pass; the decode pool's: 4 ms a
    // decode pass (the spec's own 7 / 1 runs on neither).
    let out = run(one_request(Some(fixed(10.0, 99.0)), Some(fixed(99.0, 4.0))));
    let r = record(&out, 0);
    let transfer = 3 * MS; // 1,000 tokens × 1,000 B / 1 GB/s + 2 ms
    let ttft = 10 * MS + transfer + 4 * MS;
    assert_eq!(r.first_token_ns, ttft);
    assert_eq!(r.terminal_ns, ttft + 2 * 4 * MS, "two more decode passes");
    assert_eq!(out.report.policies.timing, "fixed");
    assert_eq!(out.report.policies.decode_timing.as_deref(), Some("fixed"));
    // One pool with its own, the other the spec's: 10 + 3 + 1 ms.
    let out = run(one_request(Some(fixed(10.0, 99.0)), None));
    assert_eq!(record(&out, 0).first_token_ns, 14 * MS);
    let out = run(one_request(None, None));
    assert_eq!(record(&out, 0).first_token_ns, (7 + 3 + 1) * MS);
    assert_eq!(
        out.report.policies.decode_timing, None,
        "one model for both"
    );
}

#[test]
fn a_bad_pool_timing_is_named_by_its_pools_field() {
    let e = Replayer::new(
        one_request(None, Some(fixed(-1.0, 4.0))),
        aisim_replay::policy::SpecComposition,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("`topology.decode.timing.prefill_ms`: -1"), "{e}");
}

#[test]
fn each_pool_takes_its_kv_capacity_and_tp_from_its_own_profile_and_kv_bytes_from_the_model() {
    let iteration = |profile: &str| TimingSpec::Iteration {
        profile: profile.into(),
    };
    let mut spec = one_request(
        Some(iteration("h100/llama-3.1-8b")),
        Some(iteration("a100/llama-3.1-8b/tp2")),
    );
    if let TopologySpec::Disaggregated { kv_transfer, .. } = &mut spec.topology {
        kv_transfer.bytes_per_token = None;
    }
    spec.apply_profile().unwrap();
    let h100 = aisim_core::profile::resolve_profile("h100/llama-3.1-8b").unwrap();
    let a100 = aisim_core::profile::resolve_profile("a100/llama-3.1-8b/tp2").unwrap();
    let tokens = |p: &dyn aisim_core::profile::GpuProfile| p.total_kv_blks() * p.blk_size() as u64;
    let pools = spec.pools();
    assert_eq!(pools[0].engine.kv_budget_tokens, Some(tokens(&*h100)));
    assert_eq!(pools[1].engine.kv_budget_tokens, Some(tokens(&*a100)));
    assert_ne!(tokens(&*h100), tokens(&*a100));
    assert_eq!((pools[0].engine.tp_size, pools[1].engine.tp_size), (1, 2));
    let TopologySpec::Disaggregated { kv_transfer, .. } = &spec.topology else {
        unreachable!()
    };
    let bytes = h100.kv_bytes_per_token().unwrap().round() as u64;
    assert_eq!(kv_transfer.bytes_per_token, Some(bytes));
    // The spec's own engine keeps what it was given.
    assert_eq!(spec.engine.kv_budget_tokens, None);
    // Idempotent, and it runs.
    let again = {
        let mut s = spec.clone();
        s.apply_profile().unwrap();
        s
    };
    assert_eq!(again, spec);
    let out = run(spec);
    assert_eq!(out.report.outcomes.completed, 1);
    let gpus: Vec<u32> = out.report.pools.iter().map(|p| p.gpus_per_worker).collect();
    assert_eq!(gpus, [1, 2]);
}

#[test]
fn pools_of_two_models_are_refused_naming_the_decode_pools_profile() {
    let iteration = |profile: &str| TimingSpec::Iteration {
        profile: profile.into(),
    };
    let spec = one_request(
        Some(iteration("h100/llama-3.1-8b")),
        Some(iteration("h100/llama-3.1-70b/tp4")),
    );
    let e = Replayer::new(spec, aisim_replay::policy::SpecComposition)
        .err()
        .unwrap();
    assert!(matches!(e, ReplayError::Spec { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("`topology.decode.timing.profile`: h100/llama-3.1-70b/tp4 serves llama-3.1-70b, but the prefill pool's profile h100/llama-3.1-8b (`topology.prefill.timing.profile`) serves llama-3.1-8b"),
        "{e}"
    );
}

/// A composition that gives the decode pool a model of its own.
struct SlowDecode;

impl ReplayComposition for SlowDecode {
    fn placement(&self, _spec: &ReplaySpec) -> Box<dyn PlacementPolicy> {
        Box::new(RoundRobin::default())
    }
    fn pool_timing(
        &self,
        _spec: &ReplaySpec,
        pool: DisaggPool,
    ) -> Result<Option<Arc<dyn TimingModel>>, ReplayError> {
        Ok(match pool {
            DisaggPool::Prefill => None,
            DisaggPool::Decode => Some(Arc::new(FixedTiming::new(1.0, 6.0)?)),
        })
    }
}

#[test]
fn a_composition_gives_a_pool_its_own_model_and_timing_alone_applies_to_both() {
    let out = Replayer::new(one_request(None, None), SlowDecode)
        .unwrap()
        .with_records(true)
        .run()
        .unwrap();
    // The spec's 7 ms prefill, the composition's 6 ms decode.
    assert_eq!(record(&out, 0).first_token_ns, (7 + 3 + 6) * MS);
    assert!(out.report.policies.decode_timing.is_some());
}

/// A sweep result of `spec` (one run of a one-run plan).
fn sweep_result(spec: ReplaySpec) -> aisim_lab::sweep::RunResult {
    let out = run(spec.clone());
    let line = aisim_lab::sweep::PlanLine {
        id: "0".into(),
        index: 0,
        runs: 1,
        plan: "p".into(),
        axes: aisim_lab::sweep::Ordered(Vec::new()),
        inputs: Vec::new(),
        spec,
    };
    aisim_lab::sweep::RunResult::of(&line, &out.report, false)
}

#[test]
fn a_sweeps_cost_prices_each_pool_at_its_own_profile() {
    let iteration = |profile: &str| TimingSpec::Iteration {
        profile: profile.into(),
    };
    let (h100, a100) = ("h100/llama-3.1-8b", "a100/llama-3.1-8b/tp2");
    let price = |key: &str| {
        let p = aisim_core::profile::resolve_profile(key).unwrap();
        p.cost_per_hr() / f64::from(p.gpus().max(1))
    };
    assert_ne!(price(h100), price(a100));
    let mut spec = one_request(Some(iteration(h100)), Some(iteration(a100)));
    if let TopologySpec::Disaggregated { kv_transfer, .. } = &mut spec.topology {
        kv_transfer.bytes_per_token = None;
    }
    // The top-level timing has no price: each pool's own is used.
    let r = sweep_result(spec.clone());
    let out = run(spec.clone());
    let hours: Vec<f64> = out.report.pools.iter().map(|p| p.gpu_hours).collect();
    let want = hours[0] * price(h100) + hours[1] * price(a100);
    let cost = r.cost_usd.expect("both pools have a price");
    assert!((cost - want).abs() <= 1e-12 * want, "{cost} vs {want}");
    assert_eq!(r.gpu_hours, hours[0] + hours[1]);
    // A pool without a price (a fixed model): no cost, not a partial one.
    let mut unpriced = spec;
    if let TopologySpec::Disaggregated { decode, .. } = &mut unpriced.topology {
        decode.timing = Some(Box::new(fixed(2.0, 1.0)));
    }
    unpriced.timing = iteration(h100);
    assert_eq!(sweep_result(unpriced).cost_usd, None);
}
