//! Trace readers: real shapes parse; bad rows fail with file, line and field.

mod common;

use aisim_replay::trace::{read_trace, TraceFormat};
use aisim_replay::ReplayError;
use common::*;

#[test]
fn each_format_parses_its_real_shape_and_is_detected() {
    let m = read_trace(&fixture("traces/mooncake_small.jsonl"), None, None).unwrap();
    assert_eq!(m.format, TraceFormat::Mooncake);
    assert_eq!(m.trace_block_size, 512);
    assert_eq!(m.records.len(), 4);
    assert_eq!(
        (m.records[2].input_length, m.records[2].output_length),
        (300, 8)
    ); // aliases
    assert_eq!(m.records[3].timestamp_ms, 4000.0); // created_time alias
    assert_eq!(m.records[0].hash_ids, vec![1, 2, 3]);

    let b = read_trace(&fixture("traces/bailian_small.jsonl"), None, None).unwrap();
    assert_eq!(b.format, TraceFormat::Bailian);
    assert_eq!(b.trace_block_size, 16);
    assert_eq!(b.records[1].parent_chat_id, Some(10));
    assert_eq!(b.records[1].think_ms, Some(10_000.0));
    assert_eq!(b.records[1].timestamp_ms, 112_500.0);

    let a = read_trace(&fixture("traces/azure_small.csv"), None, None).unwrap();
    assert_eq!(a.format, TraceFormat::Azure);
    assert_eq!(a.records.len(), 3);
    // Seven fractional digits: 0.6805900 s.
    let gap = a.records[1].timestamp_ms - a.records[0].timestamp_ms;
    assert!((gap - 419.41).abs() < 1e-3, "{gap}");
    assert!(a.records[0].hash_ids.is_empty());

    let g = read_trace(&fixture("traces/burstgpt_small.csv"), None, None).unwrap();
    assert_eq!(g.format, TraceFormat::Burstgpt);
    assert_eq!(g.records.len(), 3);
    assert_eq!(
        g.skipped_failed, 2,
        "rows with zero response tokens are skipped and counted"
    );
    assert_eq!(g.records[1].timestamp_ms, 46_500.0);

    // The block size flag overrides the format's default.
    let b = read_trace(&fixture("traces/bailian_small.jsonl"), None, Some(512)).unwrap();
    assert_eq!(b.trace_block_size, 512);
}

fn error_of(name: &str, text: &str, format: Option<TraceFormat>) -> String {
    let p = temp_file(name, text);
    let e = read_trace(&p, format, None).unwrap_err();
    assert!(matches!(e, ReplayError::Trace { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn bad_rows_name_file_line_and_field() {
    let ok = r#"{"timestamp": 0, "input_length": 10, "output_length": 2}"#;
    let e = error_of(
        "neg.jsonl",
        &format!("{ok}\n{{\"timestamp\": 5, \"input_length\": -4, \"output_length\": 2}}\n"),
        None,
    );
    assert!(
        e.contains("neg.jsonl:2") && e.contains("input_length") && e.contains("negative"),
        "{e}"
    );

    let e = error_of(
        "missing.jsonl",
        &format!("{ok}\n{ok}\n{{\"timestamp\": 5, \"input_length\": 4}}\n"),
        None,
    );
    assert!(
        e.contains("missing.jsonl:3") && e.contains("output_length") && e.contains("missing"),
        "{e}"
    );

    let e = error_of(
        "broken.jsonl",
        &format!("{ok}\n{{\"timestamp\": 5, \"input_le\n"),
        None,
    );
    assert!(
        e.contains("broken.jsonl:2") && e.contains("broken JSON"),
        "{e}"
    );

    let e = error_of(
        "ts.jsonl",
        "{\"timestamp\": \"soon\", \"input_length\": 1, \"output_length\": 1}\n",
        None,
    );
    assert!(e.contains("ts.jsonl:1") && e.contains("timestamp"), "{e}");

    let e = error_of("ts.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,10,2\n2023-11-16 25:99:00,10,2\n", None);
    assert!(e.contains("ts.csv:3") && e.contains("TIMESTAMP"), "{e}");

    let e = error_of(
        "neg.csv",
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,m,-5,3,0,x\n",
        None,
    );
    assert!(
        e.contains("neg.csv:2") && e.contains("Request tokens") && e.contains("negative"),
        "{e}"
    );

    let e = error_of(
        "cols.csv",
        "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,10\n",
        Some(TraceFormat::Azure),
    );
    assert!(
        e.contains("cols.csv:1") && e.contains("GeneratedTokens"),
        "{e}"
    );

    let e = error_of(
        "ids.jsonl",
        "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1, -2]}\n",
        None,
    );
    assert!(e.contains("ids.jsonl:1") && e.contains("hash_ids"), "{e}");
}

#[test]
fn undetectable_and_empty_files_are_errors() {
    let p = temp_file("mystery.txt", "a;b;c\n");
    assert!(read_trace(&p, None, None)
        .unwrap_err()
        .to_string()
        .contains("--trace-format"));
    let p = temp_file("empty.jsonl", "\n\n");
    assert!(read_trace(&p, None, None)
        .unwrap_err()
        .to_string()
        .contains("no requests"));
    let e = read_trace(std::path::Path::new("/nonexistent/trace.jsonl"), None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/trace.jsonl"), "{e}");
}
