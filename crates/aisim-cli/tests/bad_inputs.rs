//! Bad trace files and out-of-range flags through the binary: exit code 2 and
//! one message naming the file, line and field (or the flag's spec field).

mod common;

use std::path::PathBuf;

use common::{aisim, fixture, stderr, stdout, temp_dir};

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = temp_dir("bad-inputs").join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs `aisim replay FILE extra...` and returns its stderr, checking exit code 2.
fn fails(name: &str, bytes: &[u8], extra: &[&str]) -> String {
    let p = temp(name, bytes);
    let mut args = vec!["replay", p.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = aisim(&args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    err
}

const ROW: &str = r#"{"timestamp": 0, "input_length": 10, "output_length": 2}"#;

#[test]
fn bad_trace_rows_exit_2_naming_file_line_and_field() {
    let cases: [(&str, Vec<u8>, &str); 8] = [
        ("utf8.jsonl", [ROW.as_bytes(), b"\n{\"timestamp\": 1\xff}\n"].concat(), ":2: field `(row)`: byte 0xff at column 16 is not UTF-8"),
        ("frac.jsonl", format!("{ROW}\n{}\n", ROW.replace("10,", "10.5,")).into_bytes(), ":2: field `input_length`: `10.5` is not a whole number"),
        ("range.csv", b"Timestamp,Model,Request tokens,Response tokens\n0,m,1e300,1\n".to_vec(), ":2: field `Request tokens`: `1e300` is out of range (allowed: 0 ..= 4294967295)"),
        ("date.csv", b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-30 00:00:00,8,1\n".to_vec(), ":2: field `TIMESTAMP`: `2023-02-30 00:00:00` is not a timestamp like 2023-11-16 18:15:46.6805900: day 30 does not exist in February 2023 (28 days)"),
        ("far.jsonl", format!("{ROW}\n{}\n", ROW.replace("\"timestamp\": 0", "\"timestamp\": 1e300")).into_bytes(), ":2: field `timestamp`:"),
        ("cycle.jsonl", b"{\"chat_id\": 1, \"parent_chat_id\": 2, \"timestamp\": 0, \"input_length\": 8, \"output_length\": 1}\n{\"chat_id\": 2, \"parent_chat_id\": 1, \"timestamp\": 1, \"input_length\": 8, \"output_length\": 1}\n".to_vec(), ":1: field `parent_chat_id`: the parents of lines 1 -> 2 form a cycle"),
        ("dup.jsonl", b"{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 0, \"input_length\": 8, \"output_length\": 1}\n{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 1, \"input_length\": 8, \"output_length\": 1}\n".to_vec(), ":2: field `chat_id`: chat_id 1 repeats line 1"),
        ("quoted.csv", b"Timestamp,Model,Request tokens,Response tokens\n0,\"a,\nb\",8,1\n1,m,x,1\n".to_vec(), ":4: field `Request tokens`: `x` is not a number of tokens"),
    ];
    for (name, bytes, says) in cases {
        let err = fails(name, &bytes, &[]);
        assert!(err.contains(&format!("{name}{says}")), "{name}: {err}");
    }
}

#[test]
fn a_byte_order_mark_is_no_error() {
    let p = temp("bom.jsonl", format!("\u{feff}{ROW}\n").as_bytes());
    let o = aisim(&["replay", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn speedup_and_rate_beyond_the_clock_exit_2_naming_them() {
    let two = format!(
        "{ROW}\n{}\n",
        ROW.replace("\"timestamp\": 0", "\"timestamp\": 1000")
    );
    let err = fails("speedup.jsonl", two.as_bytes(), &["--speedup", "1e-300"]);
    assert!(
        err.contains("`admission.speedup`") && err.contains("line 2 of"),
        "{err}"
    );

    let o = aisim(&[
        "replay",
        "--synthetic",
        "--requests",
        "3",
        "--rate",
        "1e-300",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`workload.arrival.rate`") && err.contains("beyond aisim's clock"),
        "{err}"
    );

    let o = aisim(&["gen-trace", "--requests", "3", "--rate", "1e-300"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`workload.arrival.rate`"), "{err}");
}

#[test]
fn counted_oddities_show_in_json_and_table() {
    let text = "{\"chat_id\": 1, \"parent_chat_id\": 7, \"timestamp\": 0, \"input_length\": 32, \"output_length\": 1, \"hash_ids\": [1]}\n";
    let p = temp("odd.jsonl", text.as_bytes());
    let o = aisim(&["replay", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["workload"]["orphan_turns"], 1);
    assert_eq!(
        v["workload"]["hash_ids_short"], 1,
        "32 tokens at 16 per block need 2 ids"
    );
    assert_eq!(v["workload"]["hash_ids_long"], 0);
    let table =
        String::from_utf8_lossy(&aisim(&["replay", p.to_str().unwrap()]).stdout).into_owned();
    assert!(
        table.contains("orphan turns") && table.contains("1 short, 0 long"),
        "{table}"
    );
}

#[test]
fn spec_files_take_a_byte_order_mark_and_name_bytes_that_are_not_utf8() {
    let spec = aisim(&["replay", "--print-spec"]).stdout;
    let p = temp(
        "bom-spec.json",
        &[b"\xef\xbb\xbf".as_slice(), &spec].concat(),
    );
    let o = aisim(&["replay", "--spec", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let mut bad = spec.clone();
    let second_line = bad.iter().position(|&b| b == b'\n').unwrap() + 1;
    bad.insert(second_line + 2, 0xff);
    let p = temp("bad-spec.json", &bad);
    let o = aisim(&["replay", "--spec", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad-spec.json:2:") && err.contains("byte 0xff at column 3 is not UTF-8"),
        "{err}"
    );
}

#[test]
fn every_small_data_file_takes_a_bom_and_names_bytes_that_are_not_utf8() {
    let fleet = std::fs::read(fixture("fleet.json")).unwrap();
    let cdf = b"[[100, 0.5], [1000, 1.0]]\n".to_vec();
    let table = br#"{"prefill": [[1, 1.0], [8192, 50.0]], "decode": {"kv_tokens": [1, 256], "context": [1, 100000], "ms": [[5.0, 6.0], [7.0, 9.0]]}}"#.to_vec();
    // (file name, its bytes, the command reading it with {} for its path)
    let cases: [(&str, Vec<u8>, &[&str]); 3] = [
        (
            "fleet.json",
            fleet,
            &["simulate-fleet", "{}", "--lam", "10", "--n-req", "50"],
        ),
        (
            "cdf.json",
            cdf,
            &[
                "optimize",
                "--cdf",
                "{}",
                "--lam",
                "10",
                "--verify-top",
                "0",
            ],
        ),
        ("table.json", table, &["replay", "--timing", "table:{}"]),
    ];
    for (name, bytes, args) in cases {
        let run = |file: &str, bytes: &[u8]| {
            let p = temp(file, bytes);
            let p = p.to_str().unwrap();
            let args: Vec<String> = args.iter().map(|a| a.replace("{}", p)).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            aisim(&args)
        };
        let with_bom = run(
            &format!("bom-{name}"),
            &[b"\xef\xbb\xbf".as_slice(), &bytes].concat(),
        );
        let err = String::from_utf8_lossy(&with_bom.stderr);
        assert_eq!(with_bom.status.code(), Some(0), "{name} with a BOM: {err}");

        // A bad byte as the first byte of the second line.
        let mut bad = bytes.clone();
        if !bad.contains(&b'\n') {
            bad.insert(bad.len() / 2, b'\n');
        }
        let second_line = bad.iter().position(|&b| b == b'\n').unwrap() + 1;
        bad.insert(second_line, 0xff);
        let o = run(&format!("bad-{name}"), &bad);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("bad-{name}:2: byte 0xff at column 1 is not UTF-8")),
            "{name}: {err}"
        );

        // Broken JSON: the place is named once, before what is wrong
        // (serde_json's own text would name it again at the end).
        let o = run(&format!("cut-{name}"), &bytes[..bytes.len() / 2]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(": line "), "{name}: {err}");
        assert_eq!(err.matches("column").count(), 1, "{name}: {err}");
    }
    let spec = stdout(&aisim(&["replay", "--print-spec"]));
    let p = temp("cut-spec.json", &spec.as_bytes()[..spec.len() / 2]);
    let o = aisim(&["replay", "--spec", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("column").count(), 1, "{err}");
}

#[test]
fn measured_runs_follow_the_readers_rules() {
    // A measured run that does not parse names its place once, as every JSON file.
    let run = temp("cut-run.json", br#"{"version": 1,, }"#);
    let o = aisim(&["validate", run.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cut-run.json: line 1 column 15: key must be a string")
            && err.matches("column").count() == 1,
        "{err}"
    );
    // A measured time beyond the clock is refused, never clamped into the trace.
    let far = r#"{"request_id":"b","send_s":1e300,"first_token_s":1e300,"end_s":1e300,"input_tokens":10,"output_tokens":5}"#;
    let (code, err, out) = import("far.jsonl", format!("{GOOD_ROW}\n{far}\n").as_bytes());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("far.jsonl:2: field `send_s`: 1e300"), "{err}");
    assert!(!out.exists(), "nothing is written");
}

/// One measured request in the generic JSONL shape.
const GOOD_ROW: &str = r#"{"request_id":"a","send_s":0,"first_token_s":0.1,"end_s":0.5,"input_tokens":10,"output_tokens":5}"#;

/// `aisim measured import` of a file `name` holding `bytes`: the exit code,
/// stderr, and the measured run it was asked to write.
fn import(name: &str, bytes: &[u8]) -> (Option<i32>, String, PathBuf) {
    let p = temp(name, bytes);
    let out = temp_dir("bad-inputs").join(format!("{name}.run.json"));
    let o = aisim(&[
        "measured",
        "import",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (o.status.code(), err, out)
}

#[test]
fn measured_request_files_are_read_like_traces() {
    // CSV through the csv crate: a quoted id holding a comma and a line break.
    let csv = "request_id,send_s,first_token_s,end_s,input_tokens,output_tokens\n\
               \"req,\n1\",0,0.05,0.5,100,10\n\
               req-2,0.1,0.2,0.9,200,20\n";
    let (code, err, out) = import("quoted.csv", csv.as_bytes());
    assert_eq!(code, Some(0), "{err}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(run["measured"]["completed"], 2);
    // A bad number in the record after them names the line it is on (5: the
    // quoted id took two).
    let (code, err, _) = import("bad.csv", format!("{csv}req-3,0.2,x,1.0,10,5\n").as_bytes());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("bad.csv:5: field `first_token_s`"), "{err}");
    // A JSONL row that does not parse: its file line and its column, once.
    let (code, err, _) = import(
        "bad.jsonl",
        format!("{GOOD_ROW}\n{{\"request_id\" 1}}\n").as_bytes(),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("bad.jsonl:2: field `(row)`: broken JSON at column 15: expected `:`")
            && err
                .split_once("bad.jsonl")
                .unwrap()
                .1
                .matches("line")
                .count()
                == 0,
        "{err}"
    );
}

/// Blank lines, CRLF, a BOM and a record spanning lines before a bad CSV
/// row: `measured import` and `replay` both name the line it starts on.
#[test]
fn a_bad_csv_row_after_blank_lines_is_named_by_its_own_line() {
    // Line 1 BOM + header, 2 good, 3 blank, 4-5 a quoted id, 6 blank, 7 bad.
    let measured = "\u{feff}request_id,send_s,first_token_s,end_s,input_tokens,output_tokens\r\n\
                    a,0,0.05,0.5,100,10\r\n\r\n\
                    \"b\r\nc\",0.1,0.2,0.9,200,20\r\n\r\n\
                    d,0.2,x,1.0,10,5";
    let (code, err, out) = import("blank.csv", measured.as_bytes());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("blank.csv:7: field `first_token_s`"), "{err}");
    assert!(!out.exists(), "nothing is written");
    // Line 1 header, 2-3 blank, 4 good, 5 blank, 6 bad.
    let trace = "Timestamp,Model,Request tokens,Response tokens\n\n\n0,m,8,1\n\n1,m,x,1\n";
    let err = fails("blank.csv", trace.as_bytes(), &[]);
    assert!(
        err.contains("blank.csv:6: field `Request tokens`: `x` is not a number of tokens"),
        "{err}"
    );
}

/// A manual profile where a model is needed says that a computed one is,
/// not that the profile is unknown nor "use a manual profile"; a computed
/// key that names nothing lists hardware and models, no manual profile.
#[test]
fn physics_on_a_manual_profile_asks_for_hardware_and_model() {
    for (args, profile) in [
        (
            &["replay", "--profile", "h100", "--timing", "physics"][..],
            "h100",
        ),
        (
            &["replay", "--timing", "physics", "--profile", "a10g"][..],
            "a10g",
        ),
        (
            &[
                "replay",
                "--prefill-workers",
                "1",
                "--decode-workers",
                "1",
                "--kv-bytes-per-token",
                "1000",
                "--prefill-timing",
                "physics",
                "--prefill-profile",
                "a100",
            ][..],
            "a100",
        ),
    ] {
        let o = aisim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("profile `{profile}` names no model"))
                && e.contains("this needs a computed profile, HARDWARE/MODEL")
                && e.contains(&format!("{profile}/llama-3.1-8b")),
            "{e}"
        );
        assert!(!e.contains("unknown profile"), "{e}");
        assert!(!e.contains("use a manual profile"), "{e}");
    }
    for key in ["h100/tp2", "h100/", "z900/llama-3.1-8b"] {
        let o = aisim(&["replay", "--timing", "physics", "--profile", key]);
        assert_eq!(o.status.code(), Some(2), "{key}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("unknown profile `{key}`: use HARDWARE/MODEL"))
                && e.contains("llama-3.1-8b"),
            "{e}"
        );
        assert!(!e.contains("manual profile"), "{e}");
    }
}
