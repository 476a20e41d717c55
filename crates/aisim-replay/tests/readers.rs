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

const MOONCAKE_ROW: &str = r#"{"timestamp": 0, "input_length": 10, "output_length": 2}"#;
const BAILIAN_ROW: &str = r#"{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 10, "output_length": 2}"#;
const AZURE: &str = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,10,2\n";
const BURSTGPT: &str = "Timestamp,Model,Request tokens,Response tokens\n0,m,10,2\n";

/// One small valid file of each format.
fn one_of_each() -> [(&'static str, String); 4] {
    [
        ("m.jsonl", format!("{MOONCAKE_ROW}\n")),
        ("b.jsonl", format!("{BAILIAN_ROW}\n")),
        ("a.csv", AZURE.to_string()),
        ("g.csv", BURSTGPT.to_string()),
    ]
}

#[test]
fn a_byte_order_mark_is_accepted_by_every_reader() {
    for (name, text) in one_of_each() {
        let plain = read_trace(&temp_file(&format!("plain-{name}"), &text), None, None).unwrap();
        let p = temp_file(&format!("bom-{name}"), &format!("\u{feff}{text}"));
        let bom = read_trace(&p, None, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bom.format, plain.format, "{name}");
        assert_eq!(bom.records, plain.records, "{name}");
    }
}

#[test]
fn bytes_that_are_not_utf8_name_file_line_and_place_in_every_reader() {
    for (name, text) in one_of_each() {
        // A second data row: the first one with a byte 0xff inside its `10`.
        let row = text.trim_end().lines().last().unwrap();
        let mut bytes = text.clone().into_bytes();
        bytes.extend(
            row.replacen("10", "1#0", 1)
                .bytes()
                .map(|b| if b == b'#' { 0xff } else { b }),
        );
        bytes.push(b'\n');
        let p = temp_file(&format!("utf8-{name}"), "");
        std::fs::write(&p, &bytes).unwrap();
        let line = text.lines().count() + 1;
        let e = read_trace(&p, None, None).unwrap_err().to_string();
        assert!(
            e.contains(&format!("utf8-{name}:{line}:"))
                && e.contains("0xff")
                && e.contains("not UTF-8"),
            "{name}: {e}"
        );
    }
}

#[test]
fn whole_number_forms_read_alike_in_jsonl_and_csv() {
    for form in ["300", "300.0", "3e2", "3.0E+2"] {
        let m = format!(
            r#"{{"timestamp": 0, "input_length": {form}, "output_length": 2, "hash_ids": [{form}]}}"#
        );
        let m = read_trace(&temp_file("form.jsonl", &format!("{m}\n")), None, None).unwrap();
        let g = BURSTGPT.replace(",10,", &format!(",{form},"));
        let g = read_trace(&temp_file("form.csv", &g), None, None).unwrap();
        assert_eq!(m.records[0].input_length, 300, "{form}");
        assert_eq!(m.records[0].hash_ids, vec![300], "{form}");
        assert_eq!(g.records[0].input_length, 300, "{form}");
    }
    for (form, says) in [
        ("300.5", "not a whole number"),
        ("1e300", "out of range (allowed: 0 ..= 4294967295)"),
        (
            "18446744073709551616",
            "out of range (allowed: 0 ..= 4294967295)",
        ),
        ("4294967296", "out of range"),
    ] {
        let m = MOONCAKE_ROW.replace(": 10,", &format!(": {form},"));
        let m = error_of("bad-form.jsonl", &format!("{MOONCAKE_ROW}\n{m}\n"), None);
        let g = BURSTGPT.replace(",10,", &format!(",{form},"));
        let g = error_of("bad-form.csv", &g, None);
        assert!(
            m.contains("bad-form.jsonl:2: field `input_length`") && m.contains(says),
            "{m}"
        );
        assert!(
            g.contains("bad-form.csv:2: field `Request tokens`") && g.contains(says),
            "{g}"
        );
    }
    let e = error_of(
        "big-id.jsonl",
        r#"{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, 18446744073709551616]}"#,
        None,
    );
    assert!(
        e.contains("big-id.jsonl:1: field `hash_ids`: element 1")
            && e.contains("out of range (allowed: 0 ..= 18446744073709551615)"),
        "{e}"
    );
}

#[test]
fn quoted_csv_fields_with_commas_and_line_breaks_keep_their_lines() {
    let text = "Timestamp,Model,Request tokens,Response tokens,Session ID\n\
                0,\"gpt-4, turbo\",10,2,\"s,1\"\n\
                1,\"a\nb\",20,3,\"s,1\"\n\
                2,m,30,4,s2\n\
                3,m,-1,4,s2\n";
    let e = error_of("quoted.csv", text, None);
    assert!(
        e.contains("quoted.csv:6: field `Request tokens`") && e.contains("negative"),
        "{e}"
    );
    let ok = read_trace(
        &temp_file("quoted-ok.csv", &text.replace(",-1,", ",40,")),
        None,
        None,
    )
    .unwrap();
    let got: Vec<_> = ok
        .records
        .iter()
        .map(|r| (r.line, r.input_length, r.session))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, 10, Some(0)),
            (3, 20, Some(0)),
            (5, 30, Some(1)),
            (6, 40, Some(1))
        ]
    );
}

#[test]
fn think_times_and_chat_ids_follow_the_same_rules() {
    let e = error_of(
        "think.jsonl",
        "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"delay\": -5}\n",
        None,
    );
    assert!(
        e.contains("think.jsonl:1: field `delay`: negative think time -5"),
        "{e}"
    );
    let e = error_of(
        "think-b.jsonl",
        &BAILIAN_ROW.replace(
            "\"timestamp\"",
            "\"time_to_parent_chat\": -1.5, \"timestamp\"",
        ),
        None,
    );
    assert!(
        e.contains("think-b.jsonl:1: field `time_to_parent_chat`: negative"),
        "{e}"
    );
    // A chat id in float form is the same id; a fractional one is an error.
    let b = read_trace(
        &temp_file(
            "ids-b.jsonl",
            &format!(
                "{}\n",
                BAILIAN_ROW.replace("\"chat_id\": 1,", "\"chat_id\": 1e0,")
            ),
        ),
        None,
        None,
    )
    .unwrap();
    assert_eq!(b.records[0].chat_id, Some(1));
    let e = error_of(
        "frac-b.jsonl",
        &BAILIAN_ROW.replace("\"parent_chat_id\": -1,", "\"parent_chat_id\": -1.5,"),
        None,
    );
    assert!(
        e.contains("frac-b.jsonl:1: field `parent_chat_id`: `-1.5` is not a whole number"),
        "{e}"
    );
}
