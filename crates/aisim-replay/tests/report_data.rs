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
