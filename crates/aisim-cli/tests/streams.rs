//! Where the binary's bytes go: a closed stdout pipe, a full disk, `-` for
//! stdout, one stream on stdout, logs on stderr.

mod common;

use std::io::Read;
use std::process::{Output, Stdio};

use common::{command as aisim, fixture, stderr, temp_dir, without_host};

/// Commands of every kind, with outputs from 17 KB to about 1 MB.
const COMMANDS: &[&[&str]] = &[
    &[
        "replay",
        "--synthetic",
        "--requests",
        "2000",
        "--per-request",
        "-",
    ],
    &["replay", "--format", "json"],
    &["gen-trace", "--requests", "5000"],
    &["profiles", "--format", "json"],
    &[
        "simulate", "--lam", "100", "--n-s", "9", "--n-l", "27", "--n-req", "2000",
    ],
];

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    for args in COMMANDS {
        let mut child = aisim()
            .args(*args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -c 1`: read one byte (so the writer has started), then
        // close the pipe while most of the output is still to come.
        let mut pipe = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        pipe.read_exact(&mut one).unwrap();
        drop(pipe);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_full_disk_is_one_line_and_exit_1() {
    for args in COMMANDS {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = aisim().args(*args).stdout(full).output().unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(
            e.starts_with("error: cannot write the ") && e.contains("to stdout: No space left"),
            "{args:?}: {e}"
        );
    }
    // Logs that cannot be written are dropped; the run goes on.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = aisim()
        .args(["replay", "-v", "--format", "json"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcomes"]["completed"], 240);
    // A file named by a flag, too.
    let o = aisim()
        .args(["replay", "--out", "/dev/full"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write the JSON report to /dev/full"));
}

#[test]
fn dash_is_stdout_and_stdout_carries_one_stream() {
    let dir = temp_dir("dash");
    let run = |args: &[&str]| aisim().current_dir(&dir).args(args).output().unwrap();
    let json = run(&["replay", "--format", "json"]);
    let out_dash = run(&["replay", "--out", "-"]);
    assert!(out_dash.status.success(), "{}", stderr(&out_dash));
    let report_of = |o: &Output| without_host(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(report_of(&json), report_of(&out_dash));

    let report = dir.join("report.json");
    let o = run(&[
        "replay",
        "--per-request",
        "-",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        lines.len() as u64,
        v["outcomes"]["offered"].as_u64().unwrap()
    );
    assert_eq!(lines.len(), 240);

    let gen = run(&["gen-trace", "--requests", "4", "--out", "-"]);
    assert_eq!(gen.stdout, run(&["gen-trace", "--requests", "4"]).stdout);
    assert_eq!(String::from_utf8(gen.stdout).unwrap().lines().count(), 4);
    // No file named `-` anywhere.
    assert!(!dir.join("-").exists());

    for (args, a, b) in [
        (
            &["replay", "--out", "-", "--format", "table"][..],
            "--out -",
            "--format table",
        ),
        (
            &["replay", "--per-request", "-", "--out", "-"],
            "--per-request -",
            "--out -",
        ),
        (
            &["replay", "--per-request", "-", "--format", "json"],
            "--per-request -",
            "--format json",
        ),
        (
            &["profiles", "--out", "-", "--format", "table"],
            "--out -",
            "--format table",
        ),
        (
            &["disagg", "--out", "-", "--format", "table"],
            "--out -",
            "--format table",
        ),
    ] {
        let o = run(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(a) && e.contains(b), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn verbose_logs_the_stages_without_colour_codes() {
    let o = aisim()
        .args(["replay", &fixture("traces/azure_small.csv"), "-v"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let e = stderr(&o);
    for line in [
        "engines built",
        "load_trace{path=",
        "trace read format=Azure rows=3 skipped=0 bytes=",
        "replay finished requests=3 passes=",
        "outputs written records=0",
        "command finished ok=true",
    ] {
        assert!(e.contains(line), "missing `{line}` in:\n{e}");
    }
    assert!(!e.contains('\x1b'), "ANSI escape in:\n{e}");
    assert!(!e.contains("DEBUG"), "-v is info, not debug:\n{e}");
    let quiet = aisim().args(["replay"]).output().unwrap();
    assert_eq!(stderr(&quiet), "");
    let debug = aisim()
        .args(["replay", &fixture("traces/azure_small.csv")])
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert!(stderr(&debug).contains("DEBUG") && stderr(&debug).contains("report derived"));
}
