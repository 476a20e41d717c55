//! The disaggregated runtime: exact timing with the fixed model, the
//! transfer modes, the prefill worker's held blocks, determinism and
//! outcome conservation.

mod common;

use std::path::{Path, PathBuf};

use aisim_core::timing::TimingSpec;
use aisim_replay::spec::{
    ArrivalSpec, KvTransferMode, KvTransferSpec, LengthSpec, PoolSpec, SyntheticSpec, TopologySpec,
    WorkloadSpec,
};
use aisim_replay::ReplaySpec;
use common::{assert_outcomes_add_up, json_without_host, record, run, temp_file, trace_spec, MS};

const PREFILL_MS: f64 = 10.0;
const DECODE_MS: f64 = 5.0;
/// 1,000 bytes a token over 1 GB/s: 1 µs a token.
const BYTES_PER_TOKEN: u64 = 1000;
const NS_PER_TOKEN: u64 = 1000;
const LATENCY_MS: f64 = 2.0;

fn disagg(trace: &Path, prefill: u32, decode: u32, mode: KvTransferMode) -> ReplaySpec {
    let mut spec = trace_spec(trace.to_path_buf(), 1, PREFILL_MS, DECODE_MS);
    spec.topology = TopologySpec::Disaggregated {
        prefill: PoolSpec::new(prefill),
        decode: PoolSpec::new(decode),
        kv_transfer: KvTransferSpec {
            gb_s: 1.0,
            latency_ms: LATENCY_MS,
            bytes_per_token: Some(BYTES_PER_TOKEN),
            mode,
        },
    };
    spec
}

fn write_trace(name: &str, rows: &[&str]) -> PathBuf {
    temp_file(name, &(rows.join("\n") + "\n"))
}

/// A one-request trace (`row`) on 1 + 1 workers, full-prompt transfers.
fn one_request(name: &str, row: &str) -> aisim_replay::ReplayOutput {
    let trace = write_trace(name, &[row]);
    run(disagg(&trace, 1, 1, KvTransferMode::FullPrompt))
}

/// 1,000 prompt tokens, 3 output tokens.
const ONE_ROW: &str =
    r#"{"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [1, 2]}"#;

#[test]
fn ttft_is_prefill_pass_plus_transfer_plus_first_decode_pass() {
    let out = one_request("disagg_one.jsonl", ONE_ROW);
    let r = record(&out, 0);
    let transfer = 1000 * NS_PER_TOKEN + (LATENCY_MS * 1e6) as u64;
    assert_eq!(transfer, 3 * MS, "1,000 tokens × 1,000 B / 1 GB/s + 2 ms");
    let ttft = 10 * MS + transfer + 5 * MS;
    assert_eq!(r.first_token_ns, ttft);
    assert_eq!(
        r.first_admit_ns, 0,
        "admitted at once on the prefill worker"
    );
    // Two more decode passes, one token each.
    assert_eq!(r.last_token_ns, ttft + 2 * 5 * MS);
    assert_eq!(r.terminal_ns, ttft + 2 * 5 * MS);
    assert_eq!(
        r.tokens, 3,
        "every output token comes from the decode worker"
    );
    assert_eq!((r.worker, r.decode_worker), (0, Some(0)));
    assert_eq!(r.kv_transfer_tokens, Some(1000));
    let rep = &out.report;
    assert_eq!(rep.latency.ttft_ms.max, Some(18.0));
    let t = rep.kv_transfer.as_ref().unwrap();
    assert_eq!((t.transfers, t.transferred_tokens), (1, 1000));
    assert_eq!(t.transferred_gb, 1e-3);
    assert_eq!(t.mean_ms, 3.0);
    // One pass on the prefill worker, three on the decode worker.
    let pools: Vec<(&str, u64)> = rep
        .pools
        .iter()
        .map(|p| (p.pool.as_str(), p.passes))
        .collect();
    assert_eq!(pools, [("prefill", 1), ("decode", 3)]);
}

#[test]
fn the_prefill_worker_holds_the_prompt_blocks_until_the_transfer_ends() {
    let out = one_request("disagg_hold.jsonl", ONE_ROW);
    let rep = &out.report;
    let prefill = &rep.pools[0];
    // 1,000 prompt tokens in 64-token blocks.
    assert_eq!(prefill.kv_peak_blocks, 16);
    // Held from the pass start (0) to the transfer's end (10 + 3 ms), not
    // released when the prefill job completed at 10 ms.
    let duration_ns = 28.0 * 1e6;
    let held_block_ns = prefill.kv_mean_occupancy * prefill.kv_capacity_blocks as f64 * duration_ns;
    let want = 16.0 * 13e6;
    assert!(
        (held_block_ns - want).abs() < 1e-3 * want,
        "{held_block_ns} block-ns held, want {want}"
    );
    assert_eq!(rep.duration_s, 0.028);
}

#[test]
fn destination_missing_sends_only_what_the_decode_worker_lacks() {
    // The second prompt shares the first's two 512-token trace blocks and
    // arrives after the first is done, on the same (only) decode worker.
    let rows = [
        r#"{"timestamp": 0, "input_length": 1024, "output_length": 2, "hash_ids": [7, 8]}"#,
        r#"{"timestamp": 1000, "input_length": 1536, "output_length": 2, "hash_ids": [7, 8, 9]}"#,
    ];
    let trace = write_trace("disagg_missing.jsonl", &rows);
    let full = run(disagg(&trace, 1, 1, KvTransferMode::FullPrompt));
    let missing = run(disagg(&trace, 1, 1, KvTransferMode::DestinationMissing));
    assert_eq!(record(&full, 1).kv_transfer_tokens, Some(1536));
    // The decode worker caches the first prompt's 1,024 tokens.
    assert_eq!(record(&missing, 1).kv_transfer_tokens, Some(512));
    // Nothing was cached for the first request: it sends everything.
    assert_eq!(record(&missing, 0).kv_transfer_tokens, Some(1024));
    let ttft = |out: &aisim_replay::ReplayOutput| {
        let r = record(out, 1);
        r.first_token_ns - r.planned_ns
    };
    assert_eq!(ttft(&full), 10 * MS + 1536 * NS_PER_TOKEN + 2 * MS + 5 * MS);
    assert_eq!(ttft(&full) - ttft(&missing), 1024 * NS_PER_TOKEN);
    assert_eq!(
        missing
            .report
            .kv_transfer
            .as_ref()
            .unwrap()
            .transferred_tokens,
        1024 + 512
    );
}

#[test]
fn a_request_without_output_ends_with_its_prefill() {
    let out = one_request(
        "disagg_prefill_only.jsonl",
        r#"{"timestamp": 0, "input_length": 100, "output_length": 0, "hash_ids": []}"#,
    );
    let r = record(&out, 0);
    assert_eq!(
        (r.terminal_ns, r.tokens, r.decode_worker),
        (10 * MS, 0, None)
    );
    assert_eq!(out.report.kv_transfer.as_ref().unwrap().transfers, 0);
    assert_eq!(out.report.outcomes.completed, 1);
}

fn loaded_spec(timeout_s: Option<f64>) -> ReplaySpec {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 300,
            input: LengthSpec::Uniform {
                min: 200,
                max: 3000,
            },
            output: LengthSpec::Uniform { min: 1, max: 60 },
            arrival: ArrivalSpec::Poisson { rate: 40.0 },
            prefix_groups: 4,
            prefix_tokens: 1024,
            turns: 2,
            think_ms: 300.0,
            ..SyntheticSpec::default()
        }),
        topology: TopologySpec::Disaggregated {
            prefill: PoolSpec::new(2),
            decode: PoolSpec::new(2),
            kv_transfer: KvTransferSpec {
                gb_s: 5.0,
                latency_ms: 0.5,
                bytes_per_token: Some(160 * 1024),
                mode: KvTransferMode::DestinationMissing,
            },
        },
        timing: TimingSpec::Polynomial,
        ..ReplaySpec::default()
    };
    spec.discipline.timeout_s = timeout_s;
    spec
}

#[test]
fn disaggregated_runs_are_deterministic_and_their_outcomes_add_up() {
    for timeout in [None, Some(0.1)] {
        let a = run(loaded_spec(timeout));
        let b = run(loaded_spec(timeout));
        assert_eq!(json_without_host(&a), json_without_host(&b));
        let o = a.report.outcomes;
        assert_outcomes_add_up(&o, "disaggregated");
        assert_eq!(o.offered + o.not_offered, 600, "{o:?}");
        if timeout.is_some() {
            assert!(o.timed_out > 0, "the load times some out: {o:?}");
        } else {
            assert_eq!(o.completed, 600, "{o:?}");
        }
        // Every completed request with output went through one transfer.
        let handed: usize = a
            .records
            .iter()
            .filter(|r| r.decode_worker.is_some())
            .count();
        let t = a.report.kv_transfer.as_ref().unwrap();
        assert_eq!(t.transfers as usize, handed);
        assert!(t.transferred_tokens > 0);
        // The pools: prefill engines compute prompts and count reuse.
        assert_eq!(a.report.pools.len(), 2);
        assert!(a.report.cache.prefix_reuse_ratio > 0.0);
        assert!(a.report.workers.iter().all(|w| w.pool.is_some()));
    }
}

#[test]
fn fast_forward_does_not_change_a_disaggregated_run() {
    let spec = || {
        let mut s = loaded_spec(None);
        if let WorkloadSpec::Synthetic(w) = &mut s.workload {
            w.turns = 1; // fast-forward needs a workload without sessions
        }
        s
    };
    let on = run(spec());
    let off = aisim_replay::Replayer::new(spec(), aisim_replay::policy::SpecComposition)
        .unwrap()
        .with_records(true)
        .with_fast_forward(false)
        .run()
        .unwrap();
    assert_eq!(json_without_host(&on), json_without_host(&off));
}

#[test]
fn dp_ranks_and_sglang_are_refused_in_either_pool() {
    for (pool, what) in [(0, "dp"), (1, "dp"), (0, "sglang"), (1, "sglang")] {
        let mut spec = loaded_spec(None);
        let mut engine = spec.engine.clone();
        match what {
            "dp" => engine.dp_size = 2,
            _ => engine.backend = aisim_core::Backend::Sglang,
        }
        if let TopologySpec::Disaggregated {
            prefill, decode, ..
        } = &mut spec.topology
        {
            [prefill, decode][pool].engine = Some(Box::new(engine));
        }
        let e = aisim_replay::Replayer::new(spec, aisim_replay::policy::SpecComposition)
            .err()
            .expect("refused")
            .to_string();
        let pool_name = ["topology.prefill", "topology.decode"][pool];
        assert!(e.contains(pool_name), "{e}");
        assert!(
            e.contains(if what == "dp" { "dp_size" } else { "sglang" }),
            "{e}"
        );
    }
}

#[test]
fn a_transfer_needs_the_bytes_of_a_token() {
    let mut spec = loaded_spec(None);
    if let TopologySpec::Disaggregated { kv_transfer, .. } = &mut spec.topology {
        kv_transfer.bytes_per_token = None;
    }
    let e = aisim_replay::Replayer::new(spec, aisim_replay::policy::SpecComposition)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("topology.kv_transfer.bytes_per_token"), "{e}");
}

#[test]
fn a_request_the_decode_engine_cannot_hold_is_rejected_when_its_transfer_ends() {
    let trace = write_trace("disagg_too_big.jsonl", &[ONE_ROW]);
    let mut spec = disagg(&trace, 1, 1, KvTransferMode::FullPrompt);
    if let TopologySpec::Disaggregated { decode, .. } = &mut spec.topology {
        // 10 blocks of 64 tokens: the 1,003-token request never fits.
        decode.engine = Some(Box::new(aisim_core::EngineConfig {
            num_gpu_blocks: Some(10),
            ..spec.engine.clone()
        }));
    }
    let out = run(spec);
    let r = record(&out, 0);
    assert_eq!(r.outcome, aisim_replay::collector::Outcome::Rejected);
    assert_eq!(r.terminal_ns, 13 * MS, "prefill 10 ms + transfer 3 ms");
    assert_eq!(out.report.rejections.get("larger_than_kv_cache"), Some(&1));
    // The prefill worker held its 16 blocks until then, not after.
    let p = &out.report.pools[0];
    let held = p.kv_mean_occupancy * p.kv_capacity_blocks as f64 * 13e6;
    assert!((held - 16.0 * 13e6).abs() < 1.0, "{held}");
}
