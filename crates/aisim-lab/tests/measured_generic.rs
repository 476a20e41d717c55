//! The generic per-request shape's optional fields: requests that did not
//! complete (`error`), every token's gap (`itl_s`) and conversations
//! (`session_id`, `turn_index`): what the summary, the trace and the
//! per-request file make of them.

use std::path::{Path, PathBuf};

use aisim_lab::fidelity::import::{read_generic, summarize, trace_text};
use aisim_lab::fidelity::timed_request::requests_text;

fn dir(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-generic-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &Path, name: &str, text: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Four requests: two turns of one conversation, one with every token's
/// gap, one that failed.
const ROWS: &str = r#"{"request_id": "a", "send_s": 10.0, "first_token_s": 10.1, "end_s": 10.4, "input_tokens": 100, "output_tokens": 4, "itl_s": [0.1, 0.1, 0.1], "session_id": "c1", "turn_index": 0}
{"request_id": "b", "send_s": 10.5, "first_token_s": 10.7, "end_s": 10.9, "input_tokens": 150, "output_tokens": 3, "itl_s": [0.05, 0.15], "session_id": "c1", "turn_index": 1}
{"request_id": "c", "send_s": 10.2, "first_token_s": 10.2, "end_s": 10.2, "input_tokens": 80, "output_tokens": 1, "error": "HTTP 503"}
{"request_id": "d", "send_s": 10.3, "first_token_s": 10.5, "end_s": 10.6, "input_tokens": 60, "output_tokens": 2, "itl_s": [0.1]}
"#;

#[test]
fn failed_requests_are_offered_not_measured_and_every_gap_makes_the_itl() {
    let d = dir("fields");
    let r = read_generic(&write(&d, "r.jsonl", ROWS)).unwrap();
    assert_eq!(r.len(), 4);
    assert_eq!(r[2].failed.as_deref(), Some("HTTP 503"));
    let m = summarize(&r);
    assert_eq!(m.offered, Some(4));
    assert_eq!(m.completed, Some(3));
    // TTFT of a, b, d: 100, 200, 200 ms (the failed c is in no latency).
    let ttft = m.ttft_ms.unwrap();
    assert!((ttft.mean.unwrap() - 500.0 / 3.0).abs() < 1e-9);
    // Every gap of the completed requests: 100, 100, 100, 50, 150, 100 ms.
    let itl = m.itl_ms.unwrap();
    assert!((itl.mean.unwrap() - 100.0).abs() < 1e-9);
    assert!((itl.p50.unwrap() - 100.0).abs() < 1e-9);
    // Output tokens 4 + 3 + 2 over 10.0 ..= 10.9 s.
    assert!((m.output_tok_s.unwrap() - 9.0 / 0.9).abs() < 1e-9);
}

#[test]
fn conversations_share_a_session_and_later_turns_wait_the_measured_think_time() {
    let d = dir("sessions");
    let r = read_generic(&write(&d, "r.jsonl", ROWS)).unwrap();
    let trace = trace_text(&r);
    let rows: Vec<serde_json::Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Send order: a (0 ms), c (200), d (300), b (500); the failed c is offered.
    let at: Vec<f64> = rows
        .iter()
        .map(|v| v["timestamp"].as_f64().unwrap())
        .collect();
    assert_eq!(at, [0.0, 200.0, 300.0, 500.0]);
    assert_eq!(rows[0]["session_id"], 0);
    assert!(rows[0].get("delay_ms").is_none());
    assert_eq!(rows[3]["session_id"], 0);
    // b was sent 100 ms after a ended.
    assert!((rows[3]["delay_ms"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    assert!(rows[1].get("session_id").is_none());
}

#[test]
fn the_fields_survive_a_round_trip_through_jsonl_and_csv() {
    let d = dir("round-trip");
    let r = read_generic(&write(&d, "r.jsonl", ROWS)).unwrap();
    let again = read_generic(&write(&d, "again.jsonl", &requests_text(&r))).unwrap();
    let strip = |v: &[aisim_lab::fidelity::timed_request::TimedRequest]| {
        let mut v: Vec<_> = v
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.line = 0;
                r
            })
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    };
    assert_eq!(strip(&r), strip(&again));
    assert_eq!(summarize(&r), summarize(&again));
    assert_eq!(trace_text(&r), trace_text(&again));
    let csv = "request_id,send_s,first_token_s,end_s,input_tokens,output_tokens,hash_ids,error,itl_s,session_id,turn_index\n\
               a,10.0,10.1,10.4,100,4,,,0.1 0.1 0.1,c1,0\n\
               b,10.5,10.7,10.9,150,3,,,0.05 0.15,c1,1\n\
               c,10.2,10.2,10.2,80,1,,HTTP 503,,,\n\
               d,10.3,10.5,10.6,60,2,,,0.1,,\n";
    let from_csv = read_generic(&write(&d, "r.csv", csv)).unwrap();
    assert_eq!(strip(&r), strip(&from_csv));
}

fn fails(rows: &str, wants: &[&str]) {
    let d = dir("bad");
    let p = write(&d, "bad.jsonl", rows);
    let e = read_generic(&p).unwrap_err().to_string();
    for w in wants {
        assert!(e.contains(w), "{e:?} lacks {w:?}");
    }
}

#[test]
fn bad_optional_fields_name_the_line_and_field() {
    let row = |extra: &str| {
        format!(
            r#"{{"request_id": "a", "send_s": 1, "first_token_s": 1.1, "end_s": 1.3, "input_tokens": 10, "output_tokens": 3{extra}}}"#
        )
    };
    fails(
        &row(r#", "itl_s": [0.1]"#),
        &[":1:", "itl_s", "1 gaps", "2 of them"],
    );
    fails(&row(r#", "itl_s": [0.2, 0.2]"#), &["itl_s", "at most"]);
    fails(
        &row(r#", "itl_s": [-0.1, 0.1]"#),
        &["itl_s", "0 seconds or more"],
    );
    fails(&row(r#", "itl_s": 0.1"#), &["itl_s", "array"]);
    fails(&row(r#", "error": 5"#), &["error", "text"]);
    fails(&row(r#", "session_id": "c""#), &["turn_index", "missing"]);
    fails(&row(r#", "turn_index": 0"#), &["session_id", "missing"]);
    fails(
        &format!(
            "{}\n{}\n",
            row(r#", "session_id": "c", "turn_index": 0"#),
            row(r#", "session_id": "c", "turn_index": 0"#).replace("\"a\"", "\"b\"")
        ),
        &[":2:", "turn_index", "conversation c has this turn twice"],
    );
}
