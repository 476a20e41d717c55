//! The saturation search against a server whose capacity is known in closed
//! form, and the search's reports.

#[path = "../../aisim-replay/tests/common/mod.rs"]
mod common;

use aisim_core::timing::TimingSpec;
use aisim_lab::saturate::{
    saturate, Axis, Range, SaturateError, SaturateReport, Saturation, SearchSettings, Status,
};
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, TopologySpec, WorkloadSpec};
use aisim_replay::ReplaySpec;

/// Prefill pass, ms.
const P: f64 = 20.0;
/// Decode pass, ms.
const D: f64 = 5.0;
/// Output tokens of every request.
const O: u32 = 9;
/// Requests offered.
const N: u64 = 400;

/// One worker that runs one request at a time (`max_num_seqs` 1) under the
/// `fixed` timing model, fed evenly spaced requests of fixed lengths.
///
/// A request's prefill pass (P ms) emits its first token and each of the
/// `O − 1` decode passes that follow (D ms each) one more, so the server is a
/// D/D/1 queue with service time S = P + (O − 1)·D = 20 + 8·5 = 60 ms and
/// capacity 1/S = 16.667 req/s. Below it nobody waits: TTFT = P, E2E = S.
/// Above it, at rate λ, request k (0-based) waits k·(S − 1/λ).
fn server(rate: f64) -> ReplaySpec {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(common::small_synthetic(
            N,
            ArrivalSpec::Constant { rate },
        )),
        topology: TopologySpec::Aggregated { workers: 1 },
        timing: TimingSpec::Fixed {
            prefill_ms: P,
            decode_ms: D,
        },
        ..ReplaySpec::default()
    };
    if let WorkloadSpec::Synthetic(s) = &mut spec.workload {
        s.input = LengthSpec::Fixed { tokens: 100 };
        s.output = LengthSpec::Fixed { tokens: O };
    }
    spec.engine.max_num_seqs = 1;
    spec
}

const S_MS: f64 = P + (O - 1) as f64 * D;

#[test]
fn a_lone_request_takes_the_closed_form_service_time() {
    let out = common::run(server(1.0));
    let l = &out.report.latency;
    assert_eq!(l.ttft_ms.max, Some(P));
    assert_eq!(l.e2e_ms.max, Some(S_MS));
    assert_eq!(l.tpot_ms.p50, Some(D));
}

/// The TTFT limit: twice the prefill pass, so a request may wait up to P.
const SLA_TTFT_MS: f64 = 2.0 * P;

/// Capacity, req/s.
fn capacity() -> f64 {
    1e3 / S_MS
}

/// The exact edge of the condition. Above capacity, request k meets the TTFT
/// limit while k·(S − 1/λ) ≤ SLA − P; at least 90 % of the N requests must,
/// so request k = 0.9·N − 1 must: λ* = 1 / (S − (SLA − P) / (0.9·N − 1)).
/// With N = 400 that is 16.682 req/s, 0.09 % above capacity.
fn edge() -> f64 {
    let last = 0.9 * N as f64 - 1.0;
    1e3 / (S_MS - (SLA_TTFT_MS - P) / last)
}

fn with_sla(mut spec: ReplaySpec) -> ReplaySpec {
    spec.sla.ttft_ms = Some(SLA_TTFT_MS);
    spec
}

fn search(axis: Axis, lo: f64, hi: f64, spec: &ReplaySpec, threads: usize) -> SaturateReport {
    try_search(axis, lo, hi, spec, threads).unwrap()
}

fn try_search(
    axis: Axis,
    lo: f64,
    hi: f64,
    spec: &ReplaySpec,
    threads: usize,
) -> Result<SaturateReport, SaturateError> {
    let s = Saturation {
        axis,
        range: Range { lo, hi },
        search: SearchSettings {
            points: 5,
            tolerance: 0.01,
            max_probes: 20,
        },
        attainment: 0.9,
    };
    saturate(spec, &s, threads, &SpecComposition)
}

/// The bisection invariants: the answer holds, the bracket's other end fails
/// and lies within the tolerance of it, no probe lies between them, and the
/// exact edge does.
fn assert_brackets_the_edge(r: &SaturateReport) {
    assert_eq!(r.status, Status::Found);
    let found = r.found.unwrap();
    let (holds, fails) = (found, r.bracket.fails.unwrap());
    assert!(
        r.by_rate()
            .iter()
            .all(|p| p.setting.rate_rps <= holds.rate_rps || p.setting.rate_rps >= fails.rate_rps),
        "a probe inside the bracket {holds:?} .. {fails:?}"
    );
    let at = |rate: f64| {
        r.by_rate()
            .into_iter()
            .find(|p| p.setting.rate_rps == rate)
            .unwrap_or_else(|| panic!("no probe at {rate}"))
    };
    assert!(at(holds.rate_rps).holds);
    assert!(!at(fails.rate_rps).holds);
    assert!(fails.rate_rps <= holds.rate_rps * (1.0 + r.search.tolerance));
    let e = edge();
    assert!(
        holds.rate_rps <= e * (1.0 + 1e-9) && e * (1.0 - 1e-9) <= fails.rate_rps,
        "{holds:?} .. {fails:?} misses the edge {e}"
    );
}

#[test]
fn the_found_rate_is_the_closed_form_capacity_within_2_percent() {
    let r = search(Axis::Rate, 1.0, 40.0, &with_sla(server(10.0)), 2);
    assert_brackets_the_edge(&r);
    let found = r.found.unwrap().rate_rps;
    assert!(
        (found - capacity()).abs() <= 0.02 * capacity(),
        "found {found} req/s, capacity {}",
        capacity()
    );
    // The curve: 1, 10.75, 20.5, 30.25, 40 req/s, below capacity exactly
    // as derived, above it saturated at the capacity.
    let rates: Vec<f64> = r.curve.iter().map(|p| p.setting.rate_rps).collect();
    assert_eq!(rates, vec![1.0, 10.75, 20.5, 30.25, 40.0]);
    for p in &r.curve[..2] {
        assert!(p.holds);
        assert_eq!((p.ttft_ms.p99, p.tpot_ms.p50), (Some(P), Some(D)));
        assert_eq!(
            (p.completed, p.completed_share, p.attainment),
            (N, 1.0, 1.0)
        );
    }
    for p in &r.curve[2..] {
        assert!(!p.holds && p.attainment < 0.9);
        assert!(p.throughput_rps <= capacity() * (1.0 + 1e-9), "{p:?}");
    }
    assert!(r.holds_again.is_empty());
}

#[test]
fn a_speedup_range_on_a_generated_workload_scales_its_rate() {
    // At 4 req/s, speedup s offers 4·s req/s.
    let r = search(Axis::Speedup, 0.25, 10.0, &with_sla(server(4.0)), 1);
    assert_brackets_the_edge(&r);
    let found = r.found.unwrap();
    assert_eq!(found.rate_rps, 4.0 * found.speedup);
    assert_eq!(r.trace_rate_rps, None);
}

/// `N` rows a second apart, the lengths of [`server`].
fn even_trace() -> std::path::PathBuf {
    let rows: String = (0..N)
        .map(|k| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": 100, \"output_length\": {O}, \"hash_ids\": [{k}]}}\n",
                k * 1000
            )
        })
        .collect();
    common::temp_file("even.jsonl", &rows)
}

#[test]
fn a_trace_rate_maps_to_a_speedup_through_its_mean_rate() {
    let mut spec = server(1.0);
    spec.workload = WorkloadSpec::Trace {
        path: even_trace(),
        format: None,
        trace_block_size: None,
    };
    let r = search(Axis::Rate, 1.0, 40.0, &with_sla(spec), 2);
    // (400 − 1) rows over 399 s.
    assert_eq!(r.trace_rate_rps, Some(1.0));
    assert_brackets_the_edge(&r);
    for p in r.by_rate() {
        assert_eq!(p.setting.speedup, p.setting.rate_rps);
    }
}

#[test]
fn the_ends_of_the_range_are_reported_when_they_do_not_bracket() {
    let spec = with_sla(server(10.0));
    let r = search(Axis::Rate, 20.0, 40.0, &spec, 2);
    assert_eq!(
        (r.status, r.found, r.bracket.holds),
        (Status::LoFails, None, None)
    );
    assert_eq!(r.bracket.fails.unwrap().rate_rps, 20.0);
    assert!(r.probes.is_empty());
    let r = search(Axis::Rate, 1.0, 10.0, &spec, 2);
    assert_eq!(
        (r.status, r.found, r.bracket.fails),
        (Status::HiHolds, None, None)
    );
    assert_eq!(r.bracket.holds.unwrap().rate_rps, 10.0);
}

#[test]
fn the_search_is_byte_identical_on_any_threads() {
    let spec = with_sla(server(10.0));
    let one = serde_json::to_string(&search(Axis::Rate, 1.0, 40.0, &spec, 1)).unwrap();
    let two = serde_json::to_string(&search(Axis::Rate, 1.0, 40.0, &spec, 2)).unwrap();
    assert_eq!(one, two);
    let back: SaturateReport = serde_json::from_str(&one).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), one);
}

#[test]
fn a_search_without_a_rate_or_a_limit_is_refused() {
    let refused = |spec: &ReplaySpec, says: &str| {
        let e = try_search(Axis::Rate, 1.0, 2.0, spec, 1).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        assert!(!e.is_internal());
    };
    refused(&server(10.0), "no SLO limit to hold");
    let mut spec = with_sla(server(10.0));
    spec.admission.concurrency = Some(4);
    refused(
        &spec,
        "admission.concurrency 4 (--concurrency) leaves no arrival rate",
    );
    let mut spec = with_sla(server(10.0));
    spec.admission.speedup = 2.0;
    refused(&spec, "admission.speedup 2 would scale the rate");
    let mut spec = with_sla(server(1.0));
    let one_row = "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1}\n";
    spec.workload = WorkloadSpec::Trace {
        path: common::temp_file("one.jsonl", one_row),
        format: None,
        trace_block_size: None,
    };
    refused(&spec, "has 1 request(s) over 0 ms: no mean rate");
}

#[test]
#[ignore = "needs ../shared"]
fn the_real_trace_saturates_inside_its_bracket() {
    let path = common::mooncake();
    let stamps: Vec<f64> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["timestamp"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let span_s = (stamps.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - stamps.iter().copied().fold(f64::INFINITY, f64::min))
        * 1e-3;
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Trace {
            path,
            format: None,
            trace_block_size: None,
        },
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    };
    spec.sla.ttft_ms = Some(2000.0);
    spec.sla.tpot_ms = Some(100.0);
    let r = search(Axis::Speedup, 0.25, 8.0, &spec, 2);
    let rate = r.trace_rate_rps.unwrap();
    assert!((rate - (stamps.len() - 1) as f64 / span_s).abs() <= 1e-9 * rate);
    assert_eq!(r.status, Status::Found, "{:?}", r.bracket);
    let (holds, fails) = (r.bracket.holds.unwrap(), r.bracket.fails.unwrap());
    assert!(fails.speedup <= holds.speedup * 1.01);
    for p in r.by_rate() {
        assert!((p.setting.rate_rps - rate * p.setting.speedup).abs() <= 1e-9 * p.setting.rate_rps);
        assert!(p.holds == (p.setting.speedup <= holds.speedup), "{p:?}");
    }
}
