//! The report's books: every offered request accounted for under overload,
//! a stop and rejections; the offered view under timeouts; Little's law; and
//! per-request records that join back to their trace rows.

mod common;

use aisim_core::summary::Summary;
use aisim_core::timing::TimingSpec;
use aisim_replay::collector::Outcome;
use aisim_replay::per_request::{RequestRow, RowFormat, RowWriter};
use aisim_replay::report::Outcomes;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, WorkloadSpec};
use aisim_replay::{ReplayOutput, ReplaySpec};
use common::*;

/// 600 requests at 40/s on one worker running at most 4 at a time, with
/// passes of 10 ms (prefill) and 5 ms (decode): it serves about 5 a second,
/// so requests queue.
fn overloaded() -> ReplaySpec {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            input: LengthSpec::Uniform {
                min: 200,
                max: 3000,
            },
            output: LengthSpec::Uniform { min: 20, max: 300 },
            ..SyntheticSpec::fixed(600, 0, 0, ArrivalSpec::Poisson { rate: 40.0 })
        }),
        timing: TimingSpec::Fixed {
            prefill_ms: 10.0,
            decode_ms: 5.0,
        },
        ..ReplaySpec::default()
    };
    spec.engine.max_num_seqs = 4;
    spec
}

/// The outcomes add up, and the per-request records say the same.
fn assert_books_balance(out: &ReplayOutput) -> Outcomes {
    let o = out.report.outcomes;
    assert_outcomes_add_up(&o, "books");
    let cohort: Vec<_> = out.records.iter().filter(|r| r.in_cohort).collect();
    assert_eq!(
        cohort.len() as u64,
        o.offered,
        "one record per offered request"
    );
    let count = |what: Outcome| cohort.iter().filter(|r| r.outcome == what).count() as u64;
    assert_eq!(
        [o.completed, o.timed_out, o.rejected, o.incomplete],
        [
            count(Outcome::Completed),
            count(Outcome::TimedOut),
            count(Outcome::Rejected),
            count(Outcome::Incomplete)
        ]
    );
    let rejected: u64 = out.report.rejections.values().sum();
    assert_eq!(rejected, o.rejected, "every rejection has a reason");
    o
}

#[test]
fn outcomes_add_up_on_an_overloaded_run_with_a_timeout() {
    let mut spec = overloaded();
    spec.discipline.timeout_s = Some(5.0);
    let o = assert_books_balance(&run(spec));
    assert!(o.timed_out > 0 && o.completed > 0, "{o:?}");
}

#[test]
fn outcomes_add_up_on_a_run_cut_by_max_sim_time() {
    let mut spec = overloaded();
    spec.discipline.max_sim_time_s = Some(8.0);
    let out = run(spec);
    let o = assert_books_balance(&out);
    assert!(o.incomplete > 0 && o.not_offered > 0, "{o:?}");
    assert_eq!(o.offered + o.not_offered, 600, "every request counted once");
}

#[test]
fn outcomes_add_up_on_a_run_with_rejections() {
    let mut spec = overloaded();
    spec.engine.max_model_len = Some(2000);
    let out = run(spec);
    let o = assert_books_balance(&out);
    assert!(o.rejected > 0 && o.completed > 0, "{o:?}");
    // Grouped by reason, not by prompt length.
    assert_eq!(
        out.report.rejections.keys().collect::<Vec<_>>(),
        ["longer_than_max_model_len"]
    );
    assert!(out
        .report
        .rejections
        .keys()
        .all(|k| aisim_replay::tally::REJECT_KINDS.contains(&k.as_str())));
}

#[test]
fn offered_p99_is_null_when_over_one_percent_time_out_while_the_completed_p99_is_finite() {
    let mut spec = overloaded();
    spec.discipline.timeout_s = Some(5.0);
    let out = run(spec);
    let o = out.report.outcomes;
    assert!(o.timed_out * 100 > o.offered, "{o:?}: over 1 % time out");
    assert_eq!(out.report.latency_offered.ttft_ms.p99, None);
    assert_eq!(out.report.latency_offered.e2e_ms.p99, None);
    assert!(out.report.latency.ttft_ms.p99.is_some_and(f64::is_finite));
    let json: serde_json::Value = serde_json::to_value(&out.report).unwrap();
    assert!(json["latency_offered"]["ttft_ms"]["p99"].is_null());
    assert!(json["latency"]["ttft_ms"]["p99"].is_f64());
}

/// Mean concurrency = completed per second × mean time in flight (dispatch
/// to end), on a steady open-loop run where everything completes.
#[test]
fn littles_law_holds_on_a_steady_run() {
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec::fixed(
            2000,
            512,
            64,
            ArrivalSpec::Poisson { rate: 20.0 },
        )),
        ..ReplaySpec::default()
    };
    let r = run(spec).report;
    assert_eq!(r.outcomes.completed, 2000);
    let w_s = r.latency.e2e_from_dispatch_ms.mean.unwrap() / 1e3;
    let little = r.throughput.request_rps * w_s;
    let l = r.concurrency.mean;
    assert!(l > 1.0, "the run keeps requests in flight: {l}");
    assert!(
        (l - little).abs() <= 0.05 * little,
        "L = {l}, λW = {little}"
    );
}

/// Every record of the Bailian fixture carries its row's `chat_id` and line,
/// its TTFT is the report's, and JSON lines and CSV say the same.
#[test]
fn bailian_records_join_back_to_their_rows() {
    let path = fixture("traces/bailian_small.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = run(trace_spec(path, 1, 10.0, 5.0));
    let mut jsonl = RowWriter::new(RowFormat::Jsonl, Vec::new());
    jsonl.write(&out.records).unwrap();
    let bytes = jsonl.into_inner().unwrap();
    let lines = String::from_utf8(bytes).unwrap();
    let rows: Vec<RequestRow> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), text.lines().count());
    let mut ttfts = Vec::new();
    for (row, line) in rows.iter().zip(lines.lines()) {
        let n = row.line.expect("a trace row has a line");
        let source: serde_json::Value =
            serde_json::from_str(text.lines().nth(n as usize - 1).unwrap()).unwrap();
        assert_eq!(row.chat_id, source["chat_id"].as_i64(), "line {n}");
        assert_eq!(
            row.input_length as u64,
            source["input_length"].as_u64().unwrap()
        );
        // Absent ids are null, never omitted keys.
        let keys = serde_json::from_str::<serde_json::Value>(line).unwrap();
        for key in ["session_id", "request_id", "reject_reason", "e2e_ms"] {
            assert!(keys.get(key).is_some(), "{key} missing from {line}");
        }
        assert_eq!(row.outcome, Outcome::Completed);
        ttfts.push(row.ttft_ms.unwrap());
    }
    let ttft = &out.report.latency.ttft_ms;
    assert_eq!(
        &Summary::of(&mut ttfts),
        ttft,
        "the report's TTFT, request by request"
    );

    let mut csv = RowWriter::new(RowFormat::Csv, Vec::new());
    csv.write(&out.records).unwrap();
    let bytes = csv.into_inner().unwrap();
    let from_csv: Vec<RequestRow> = csv::Reader::from_reader(bytes.as_slice())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(from_csv, rows);
}

/// A generated workload has no trace row: `line` and the ids are null.
#[test]
fn generated_requests_have_null_trace_ids() {
    let mut spec = overloaded();
    spec.discipline.max_sim_time_s = Some(1.0);
    let out = run(spec);
    let row = RequestRow::of(&out.records[0]);
    assert_eq!((row.line, row.chat_id, row.session_id), (None, None, None));
}

/// Every reader that knows a session id hands it on as the trace wrote it:
/// JSONL `session_id` (a string or a number) and BurstGPT's `Session ID`.
#[test]
fn session_ids_are_carried_as_the_trace_wrote_them() {
    let jsonl = "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 2, \"session_id\": \"alice\"}\n\
                 {\"timestamp\": 5, \"input_length\": 100, \"output_length\": 2, \"session_id\": 42}\n\
                 {\"timestamp\": 9, \"input_length\": 100, \"output_length\": 2}\n\
                 {\"timestamp\": 900, \"input_length\": 100, \"output_length\": 2, \"session_id\": \"alice\"}\n";
    let csv = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type,Session ID\n\
               1,ChatGPT,100,2,102,Conversation log,s-7\n\
               2,ChatGPT,100,0,100,Conversation log,s-8\n\
               3,ChatGPT,100,2,102,Conversation log,\n";
    for (name, text, want) in [
        (
            "ids.jsonl",
            jsonl,
            vec![
                (1, Some("alice")),
                (2, Some("42")),
                (3, None),
                (4, Some("alice")),
            ],
        ),
        ("ids.csv", csv, vec![(2, Some("s-7")), (4, None)]),
    ] {
        let out = run(trace_spec(temp_file(name, text), 1, 10.0, 5.0));
        let mut got: Vec<(u64, Option<String>)> = out
            .records
            .iter()
            .map(|r| {
                let row = RequestRow::of(r);
                (row.line.unwrap(), row.session_id)
            })
            .collect();
        got.sort();
        let want: Vec<(u64, Option<String>)> = want
            .into_iter()
            .map(|(l, s)| (l, s.map(String::from)))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

/// A Mooncake trace of one 100-token prompt with 50 output tokens at each
/// of `times_ms`.
fn arrivals_at(times_ms: &[u64]) -> std::path::PathBuf {
    let text: String = times_ms
        .iter()
        .map(|t| format!("{{\"timestamp\": {t}, \"input_length\": 100, \"output_length\": 50}}\n"))
        .collect();
    temp_file("arrivals.jsonl", &text)
}

/// The offered rate is the cohort's arrivals over their span, whatever the
/// drain after them; completed work is over the run.
#[test]
fn the_offered_rate_is_arrivals_over_their_span_and_throughput_is_over_the_run() {
    let trace = arrivals_at(&[0, 1000, 2000, 3000, 4000]);
    let r = run(trace_spec(trace.clone(), 1, 10.0, 5.0)).report;
    let t = &r.throughput;
    assert_eq!(r.outcomes.completed, 5);
    assert_eq!(t.arrival_span_s, 4.0);
    assert_eq!(t.offered_rps, Some(1.0));
    // The run goes on past the last arrival, so completions per second of
    // the run are fewer than arrivals per second of their span.
    assert!(r.duration_s > 4.0, "{}", r.duration_s);
    assert_eq!(t.request_rps, 5.0 / r.duration_s);
    assert!(t.request_rps < 1.0 + 1.0 / 4.0, "{}", t.request_rps);
    assert_eq!(t.output_tok_s, 250.0 / r.duration_s);
    // Twice as fast a replay offers twice the rate.
    let mut fast = trace_spec(trace.clone(), 1, 10.0, 5.0);
    fast.admission.speedup = 2.0;
    let f = run(fast).report.throughput;
    assert_eq!((f.offered_rps, f.arrival_span_s), (Some(2.0), 2.0));
    // Warm-up requests are no part of the cohort's arrivals.
    let mut warm = trace_spec(trace, 1, 10.0, 5.0);
    warm.discipline.warmup_requests = 2;
    let w = run(warm).report.throughput;
    assert_eq!((w.offered_rps, w.arrival_span_s), (Some(1.0), 2.0));
}

/// One arrival, or arrivals all at one instant, have no span: no offered
/// rate (`null`), never one arrival over a nanosecond.
#[test]
fn a_run_without_an_arrival_span_has_no_offered_rate() {
    for times in [&[0][..], &[500, 500, 500]] {
        let r = run(trace_spec(arrivals_at(times), 2, 10.0, 5.0)).report;
        assert_eq!(r.outcomes.offered, times.len() as u64);
        assert_eq!(r.throughput.offered_rps, None, "{times:?}");
        assert_eq!(r.throughput.arrival_span_s, 0.0);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["throughput"]["offered_rps"].is_null());
        // The completed rate stays what it is: requests over the run.
        assert_eq!(r.throughput.request_rps, times.len() as f64 / r.duration_s);
        assert!(r.throughput.request_rps < 100.0);
    }
    // One request rejected at once: the run lasts no time; nothing divides by it.
    let mut spec = trace_spec(arrivals_at(&[0]), 1, 10.0, 5.0);
    spec.engine.max_model_len = Some(10);
    let r = run(spec).report;
    assert_eq!(r.outcomes.rejected, 1);
    assert_eq!(r.throughput.offered_rps, None);
    assert_eq!(r.throughput.request_rps, 0.0);
}

/// With no SLO threshold there is no goodput: `null`, not every completed
/// request; with one, the requests within it over the offered cohort.
#[test]
fn goodput_is_null_without_a_threshold_and_counted_with_one() {
    let trace = arrivals_at(&[0, 1000, 2000, 3000, 4000]);
    let r = run(trace_spec(trace.clone(), 1, 10.0, 5.0)).report;
    assert_eq!(r.throughput.goodput_rps, None);
    assert_eq!(r.throughput.goodput_requests, None);
    assert_eq!(r.sla.attainment.all, None);
    let json = serde_json::to_value(&r).unwrap();
    for v in [
        &json["throughput"]["goodput_rps"],
        &json["throughput"]["goodput_requests"],
        &json["sla"]["attainment"]["all"],
    ] {
        assert!(v.is_null(), "{v}");
    }
    // Each request's E2E is 10 + 49 × 5 = 255 ms: a limit of 300 ms holds
    // them all, one of 200 ms none.
    for (limit, met) in [(300.0, 5), (200.0, 0)] {
        let mut spec = trace_spec(trace.clone(), 1, 10.0, 5.0);
        spec.sla.e2e_ms = Some(limit);
        let r = run(spec).report;
        assert_eq!(r.throughput.goodput_requests, Some(met), "{limit}");
        assert_eq!(r.throughput.goodput_rps, Some(met as f64 / r.duration_s));
        assert_eq!(r.sla.attainment.all, Some(met as f64 / 5.0));
        assert_eq!(r.sla.attainment.e2e, Some(met as f64 / 5.0));
    }
}
