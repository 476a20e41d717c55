//! Replay behaviour with exact expectations: fixed timing, batching, admission
//! modes, sessions, and the discipline's outcomes.

mod common;

use aisim_core::Backend;
use aisim_replay::collector::Outcome;
use aisim_replay::spec::{ArrivalSpec, DispatchMode, LengthSpec, SyntheticSpec, WorkloadSpec};
use aisim_replay::workload::{SyntheticWorkload, Workload};
use common::*;

fn rows(rows: &[(f64, u32, u32)]) -> String {
    rows.iter()
        .map(|(t, i, o)| {
            format!("{{\"timestamp\": {t}, \"input_length\": {i}, \"output_length\": {o}}}\n")
        })
        .collect()
}

#[test]
fn lone_request_timing_is_exact() {
    let p = temp_file("lone.jsonl", &rows(&[(5000.0, 100, 3)]));
    let out = run(trace_spec(p, 1, 10.0, 5.0));
    let r = record(&out, 0);
    assert_eq!(r.planned_ns, 0, "timestamps are normalized to start at 0");
    assert_eq!(r.first_token_ns, 10 * MS);
    assert_eq!(r.last_token_ns, 20 * MS);
    assert_eq!(r.terminal_ns, 20 * MS);
    assert_eq!(out.report.latency.ttft_ms.mean, Some(10.0));
    assert_eq!(out.report.latency.e2e_ms.p99, Some(20.0));
    assert_eq!(out.report.latency.tpot_ms.mean, Some(5.0));
    assert_eq!(out.report.latency.itl_ms.count, 2);
}

#[test]
fn two_requests_on_one_worker_batch_as_the_scheduler_says() {
    // A at 0 (100 in, 3 out); B at 12 ms (200 in, 2 out).
    let trace = rows(&[(0.0, 100, 3), (12.0, 200, 2)]);
    // vLLM: A prefills [0,10], decodes [10,15]; B joins the next pass, a mixed
    // prefill + decode pass [15,30]; B decodes [30,35].
    let out = run(trace_spec(temp_file("two.jsonl", &trace), 1, 10.0, 5.0));
    let (a, b) = (record(&out, 0), record(&out, 1));
    assert_eq!((a.first_token_ns, a.terminal_ns), (10 * MS, 30 * MS));
    assert_eq!(
        (b.first_admit_ns, b.first_token_ns, b.terminal_ns),
        (15 * MS, 30 * MS, 35 * MS)
    );
    assert_eq!(out.report.latency.ttft_ms.max, Some(18.0));

    // SGLang: B's prefill pass excludes A's decode: [15,25]; then both decode [25,30].
    let mut spec = trace_spec(temp_file("two.jsonl", &trace), 1, 10.0, 5.0);
    spec.engine.backend = Backend::Sglang;
    let out = run(spec);
    let (a, b) = (record(&out, 0), record(&out, 1));
    assert_eq!((a.first_token_ns, a.terminal_ns), (10 * MS, 30 * MS));
    assert_eq!((b.first_token_ns, b.terminal_ns), (25 * MS, 30 * MS));
}

#[test]
fn trace_mode_normalizes_and_scales_timestamps() {
    let mut spec = trace_spec(fixture("traces/mooncake_small.jsonl"), 2, 10.0, 5.0);
    spec.admission.speedup = 2.0;
    let out = run(spec);
    let planned: Vec<u64> = (0..4).map(|i| record(&out, i).planned_ns).collect();
    assert_eq!(planned, vec![0, 125 * MS, 1000 * MS, 1500 * MS]);
    assert!(out.records.iter().all(|r| r.dispatch_ns == r.planned_ns));
}

#[test]
fn concurrency_mode_caps_in_flight_and_stamps_arrivals_at_admission() {
    let trace = rows(
        &(0..30)
            .map(|i| (i as f64 * 1000.0, 100 + 10 * i, 5 + i % 7))
            .collect::<Vec<_>>(),
    );
    for k in [1u32, 3] {
        let mut spec = trace_spec(temp_file("conc.jsonl", &trace), 2, 10.0, 5.0);
        spec.admission.concurrency = Some(k);
        let out = run(spec);
        assert_eq!(out.report.outcomes.completed, 30);
        assert_eq!(out.report.concurrency.peak, k as u64);
        for r in &out.records {
            assert_eq!(r.planned_ns, r.dispatch_ns, "arrival stamped at admission");
            let in_flight = out
                .records
                .iter()
                .filter(|o| o.dispatch_ns <= r.dispatch_ns && o.terminal_ns > r.dispatch_ns)
                .count();
            assert!(in_flight <= k as usize);
        }
        // Trace spacing (1 s apart) is ignored: the run is far shorter than 29 s.
        assert!(out.report.duration_s < 5.0);
    }
}

fn gaps_cv(burstiness: Option<f64>) -> f64 {
    let arrival = match burstiness {
        Some(b) => ArrivalSpec::Gamma {
            rate: 10.0,
            burstiness: b,
        },
        None => ArrivalSpec::Poisson { rate: 10.0 },
    };
    let spec = small_synthetic(40_000, arrival);
    let mut w = SyntheticWorkload::new(spec, 42, 1.0);
    let mut times = Vec::new();
    while let Some(o) = w.next_root() {
        times.push(o.request.arrival.as_secs_f64());
    }
    let gaps: Vec<f64> = times.windows(2).map(|p| p[1] - p[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    assert!((mean - 0.1).abs() < 0.003, "mean gap {mean}");
    var.sqrt() / mean
}

#[test]
fn gamma_arrivals_with_burstiness_one_have_the_poisson_cv() {
    // With 40,000 gaps the CV's standard error is about 0.005.
    let poisson = gaps_cv(None);
    let gamma1 = gaps_cv(Some(1.0));
    assert!((poisson - 1.0).abs() < 0.025, "{poisson}");
    assert!((gamma1 - 1.0).abs() < 0.025, "{gamma1}");
    let bursty = gaps_cv(Some(0.25));
    assert!(
        (bursty - 2.0).abs() < 0.1,
        "CV 1/sqrt(0.25) = 2, got {bursty}"
    );
}

#[test]
fn synthetic_workloads_are_lazy_and_reproducible() {
    let spec = SyntheticSpec {
        requests: 5,
        input: LengthSpec::Uniform { min: 100, max: 900 },
        output: LengthSpec::Normal {
            mean: 50.0,
            std: 20.0,
        },
        arrival: ArrivalSpec::Constant { rate: 4.0 },
        prefix_groups: 2,
        prefix_tokens: 512,
        turns: 3,
        think_ms: 1000.0,
        trace_block_size: 256,
        total_cdf: None,
    };
    let collect = || {
        let mut w = SyntheticWorkload::new(spec.clone(), 9, 1.0);
        let mut v = Vec::new();
        while let Some(o) = w.next_root() {
            let mut prev = o;
            v.push(prev.request.clone());
            while let Some(n) = w.next_turn(prev) {
                v.push(n.request.clone());
                prev = n;
            }
        }
        assert_eq!(w.remaining(), 0);
        v
    };
    let a = collect();
    assert_eq!(a, collect());
    assert_eq!(a.len(), 15);
    // Constant arrivals 250 ms apart; later turns extend the conversation.
    assert_eq!(a[3].arrival.0, 250 * MS);
    assert!(a[1].input_length > a[0].input_length + a[0].output_length);
    assert_eq!(a[1].hash_ids[..a[0].hash_ids.len()], a[0].hash_ids[..]);
}

#[test]
fn sessions_follow_the_dispatch_mode() {
    let path = fixture("traces/bailian_small.jsonl");
    let run_mode = |mode| {
        let mut spec = trace_spec(path.clone(), 1, 10.0, 5.0);
        spec.dispatch = mode;
        run(spec)
    };
    // Rows are in file order: 0 = chat 10 (t 100 s), 1 = chat 11 (its child, think
    // 10 s, t 112.5 s), 2 = chat 12, 3 = chat 13 (child of 11, no think time, t 130 s).
    let out = run_mode(DispatchMode::Thinktime);
    let (c10, c11, c13) = (record(&out, 0), record(&out, 1), record(&out, 3));
    assert_eq!(c11.dispatch_ns, c10.terminal_ns + 10_000 * MS);
    assert_eq!(c11.planned_ns, c11.dispatch_ns);
    assert_eq!(
        c13.dispatch_ns,
        c11.terminal_ns + 17_500 * MS,
        "falls back to the trace gap"
    );
    let s = out.report.sessions.as_ref().unwrap();
    assert_eq!(
        (s.sessions, s.later_turns, s.think_time_fallbacks),
        (1, 2, 1)
    );
    assert_eq!(out.report.outcomes.completed, 4);

    let out = run_mode(DispatchMode::Tracets);
    let c11 = record(&out, 1);
    assert_eq!(c11.planned_ns, 12_500 * MS);
    assert_eq!(
        c11.dispatch_ns,
        12_500 * MS,
        "the parent finished long before"
    );

    let out = run_mode(DispatchMode::Fixed(500.0));
    let (c10, c11) = (record(&out, 0), record(&out, 1));
    assert_eq!(c11.dispatch_ns, c10.terminal_ns + 500 * MS);
}

#[test]
fn tracets_bursts_turns_when_the_previous_one_is_late() {
    // Turn 2 is due 10 ms after turn 1 on the trace clock, but turn 1 takes 100 ms.
    let trace = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 19, \"session_id\": \"s\"}\n\
                 {\"timestamp\": 10, \"input_length\": 10, \"output_length\": 1, \"session_id\": \"s\"}\n";
    let mut spec = trace_spec(temp_file("burst.jsonl", trace), 1, 10.0, 5.0);
    spec.dispatch = DispatchMode::Tracets;
    let out = run(spec);
    let t2 = record(&out, 1);
    assert_eq!(t2.planned_ns, 10 * MS);
    assert_eq!(t2.dispatch_ns, record(&out, 0).terminal_ns);
    assert_eq!(out.report.latency.dispatch_delay_ms.max, Some(90.0));
    assert_eq!(out.report.sessions.unwrap().realized_gap_ms.max, Some(0.0));
}

#[test]
fn outcomes_always_add_up_to_offered() {
    // Long requests, a short timeout, a tight drain and a too-long request.
    let trace = rows(&[
        (0.0, 100, 50),
        (0.0, 100, 2),
        (0.0, 5000, 2),
        (1.0, 100, 400),
    ]);
    let mut spec = trace_spec(temp_file("outcomes.jsonl", &trace), 1, 10.0, 5.0);
    spec.engine.max_model_len = Some(1000);
    spec.discipline.timeout_s = Some(0.1);
    let out = run(spec);
    let o = out.report.outcomes;
    assert_eq!(
        (
            o.offered,
            o.completed,
            o.timed_out,
            o.rejected,
            o.incomplete
        ),
        (4, 1, 2, 1, 0)
    );
    assert_eq!(record(&out, 0).outcome, Outcome::TimedOut);
    assert_eq!(record(&out, 0).terminal_ns, 100 * MS);
    assert_eq!(record(&out, 2).outcome, Outcome::Rejected);
    assert!(out
        .report
        .rejections
        .keys()
        .next()
        .unwrap()
        .contains("max_model_len"));
    // The offered view reads `null` (inf) where unfinished requests land.
    assert_eq!(out.report.latency_offered.e2e_ms.p50, None);

    let mut spec = trace_spec(temp_file("outcomes.jsonl", &trace), 1, 10.0, 5.0);
    spec.discipline.drain_s = Some(0.05);
    let o = run(spec).report.outcomes;
    assert_outcomes_add_up(&o, "drained");
    assert!(o.incomplete >= 2, "{o:?}");

    let mut spec = trace_spec(temp_file("outcomes.jsonl", &trace), 1, 10.0, 5.0);
    spec.discipline.max_sim_time_s = Some(0.02);
    let out = run(spec);
    let o = out.report.outcomes;
    assert_eq!((o.offered, o.incomplete, o.not_offered), (4, 4, 0));
    assert!((out.report.duration_s - 0.02).abs() < 1e-9);
}

/// Offered = completed + timed out + rejected + incomplete, over every way a
/// run can end early; what the workload still held is `not_offered`, outside.
#[test]
fn requests_planned_after_the_end_are_not_offered() {
    let add_up = |o: &aisim_replay::report::Outcomes| assert_outcomes_add_up(o, "cut off");
    // Planned at 0, 0, 10 ms, 500 ms and 1 s; stopped at 100 ms.
    let trace = rows(&[
        (0.0, 100, 50),
        (0.0, 100, 2),
        (10.0, 100, 400),
        (500.0, 100, 2),
        (1000.0, 100, 2),
    ]);
    let mut spec = trace_spec(temp_file("cutoff.jsonl", &trace), 1, 10.0, 5.0);
    spec.discipline.max_sim_time_s = Some(0.1);
    let out = run(spec);
    let o = out.report.outcomes;
    add_up(&o);
    assert_eq!(
        (o.offered, o.completed, o.incomplete, o.not_offered),
        (3, 1, 2, 2)
    );
    assert_eq!(out.report.discipline.cohort_requests, 3);
    assert_eq!(
        out.report.latency_offered.e2e_ms.count, 3,
        "the never offered have no latency"
    );
    assert_eq!(out.records.len(), 3, "only offered requests have records");

    // Sessions cut off by a stop or a drain: their unsent turns were never offered.
    let synthetic = |turns: u32| SyntheticSpec {
        turns,
        think_ms: 50.0,
        ..SyntheticSpec::fixed(20, 300, 40, ArrivalSpec::Constant { rate: 100.0 })
    };
    for (stop, drain) in [(Some(0.15), None), (None, Some(0.05))] {
        let mut spec = aisim_replay::ReplaySpec {
            workload: WorkloadSpec::Synthetic(synthetic(4)),
            ..Default::default()
        };
        spec.timing = aisim_core::timing::TimingSpec::Fixed {
            prefill_ms: 10.0,
            decode_ms: 5.0,
        };
        spec.discipline.max_sim_time_s = stop;
        spec.discipline.drain_s = drain;
        let o = run(spec).report.outcomes;
        add_up(&o);
        assert!(o.not_offered > 0 && o.incomplete > 0, "{o:?}");
        assert_eq!(
            o.offered + o.not_offered,
            80,
            "{o:?}: every turn is counted once"
        );
    }

    // A stop that cuts nothing leaves nothing unoffered.
    let mut spec = trace_spec(temp_file("cutoff.jsonl", &trace), 1, 10.0, 5.0);
    spec.discipline.max_sim_time_s = Some(1e6);
    let o = run(spec).report.outcomes;
    assert_eq!((o.offered, o.completed, o.not_offered), (5, 5, 0));
}

#[test]
fn warm_up_requests_are_simulated_but_not_measured() {
    let mut spec = trace_spec(fixture("traces/mooncake_small.jsonl"), 1, 10.0, 5.0);
    spec.discipline.warmup_requests = 2;
    let out = run(spec);
    assert_eq!(out.report.outcomes.offered, 2);
    assert_eq!(out.report.discipline.warmup_requests, 2);
    assert_eq!(
        out.records
            .iter()
            .filter(|r| r.outcome == Outcome::Completed)
            .count(),
        4
    );
    let mut spec = trace_spec(fixture("traces/mooncake_small.jsonl"), 1, 10.0, 5.0);
    spec.discipline.warmup_s = 2.0;
    assert_eq!(run(spec).report.outcomes.offered, 2);
}

#[test]
fn synthetic_replay_conserves_tokens_and_respects_kv_capacity() {
    let spec = aisim_replay::ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 400,
            input: LengthSpec::Uniform {
                min: 200,
                max: 6000,
            },
            output: LengthSpec::Uniform { min: 1, max: 300 },
            arrival: ArrivalSpec::Poisson { rate: 40.0 },
            prefix_groups: 5,
            prefix_tokens: 2048,
            turns: 2,
            think_ms: 300.0,
            trace_block_size: 512,
            total_cdf: None,
        }),
        topology: aisim_replay::spec::TopologySpec::Aggregated { workers: 3 },
        engine: aisim_core::EngineConfig {
            num_gpu_blocks: Some(600),
            ..Default::default()
        },
        ..Default::default()
    };
    let out = run(spec);
    assert_eq!(out.report.outcomes.offered, 800);
    assert_eq!(out.report.outcomes.completed, 800);
    assert!(out.records.iter().all(|r| r.tokens == r.output_length));
    assert!(
        out.report.cache.preemptions > 0,
        "the small pool forces preemption"
    );
    assert!(out.report.pools[0].kv_peak_blocks <= 600);
    assert!(out.report.cache.prefix_reuse_ratio > 0.1);
    // Little's law on the whole run: mean concurrency = throughput × mean E2E-from-dispatch.
    let l = out.report.concurrency.mean;
    let little = out.report.throughput.request_rps
        * out.report.latency.e2e_from_dispatch_ms.mean.unwrap()
        / 1e3;
    assert!((l / little - 1.0).abs() < 0.02, "{l} vs {little}");
}

#[test]
fn dp_round_robin_sends_request_k_to_worker_k_mod_w_and_turns_each_workers_ranks() {
    // 4 workers × DP 2, 24 requests far apart: the reference's order, not
    // (worker, rank) slots in turn (which would put k on worker floor(k/2) mod 4).
    let trace = rows(
        &(0..24)
            .map(|i| (i as f64 * 1000.0, 100, 2))
            .collect::<Vec<_>>(),
    );
    let mut spec = trace_spec(temp_file("dp_rr.jsonl", &trace), 4, 10.0, 5.0);
    spec.engine.dp_size = 2;
    let out = run(spec);
    for k in 0..24u64 {
        let r = record(&out, k);
        assert_eq!(
            (r.worker, r.rank),
            ((k % 4) as u32, ((k / 4) % 2) as u32),
            "request {k}"
        );
    }
}

#[test]
fn sglang_rejects_and_counts_requests_that_would_fill_the_pool_and_serves_the_rest() {
    // 1,000 one-token pages: 600 + 400 fills the pool (SGLang's max_req_len is
    // the pool - 1), 600 + 399 does not; 2,000 tokens cannot fit at all. The
    // reference stops the whole replay at such a request; aisim goes on.
    let trace = rows(&[
        (0.0, 600, 400),
        (1.0, 600, 399),
        (2.0, 1_500, 500),
        (3.0, 10, 5),
    ]);
    let mut spec = trace_spec(temp_file("sglang_fill.jsonl", &trace), 1, 10.0, 5.0);
    spec.engine.backend = Backend::Sglang;
    spec.engine.block_size = Some(1);
    spec.engine.num_gpu_blocks = Some(1_000);
    let out = run(spec);
    let o = out.report.outcomes;
    assert_eq!((o.offered, o.completed, o.rejected), (4, 2, 2));
    assert_eq!(record(&out, 0).outcome, Outcome::Rejected);
    assert_eq!(record(&out, 2).outcome, Outcome::Rejected);
    // Counted by kind: one fills the pool, one is larger than it.
    let reasons: Vec<(&str, u64)> = out
        .report
        .rejections
        .iter()
        .map(|(r, &n)| (r.as_str(), n))
        .collect();
    assert_eq!(
        reasons,
        [("fills_sglang_pool", 1), ("larger_than_kv_cache", 1)],
        "{reasons:?}"
    );
}
