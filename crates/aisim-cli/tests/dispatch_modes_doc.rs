//! docs/dispatch-modes.md, run as written: its commands (with `aisim` the
//! binary under test and a scratch folder for /tmp/aisim-dispatch) produce
//! the table it shows, and the table says what the text claims; its "Side
//! by side" commands print the compare excerpts it shows and write the pages.

mod common;

use std::path::Path;
use std::process::Command;

use common::temp_dir;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/dispatch-modes.md");
const RUNS: [&str; 4] = [
    "slack-tracets",
    "slack-thinktime",
    "saturated-tracets",
    "saturated-thinktime",
];

/// The commands of the doc's first `sh` block.
fn commands(doc: &str) -> Vec<String> {
    common::first_sh_block(doc)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// The commands of the doc's `n`th `sh` block (from 0).
fn block(doc: &str, n: usize) -> Vec<String> {
    doc.split("```sh")
        .nth(n + 1)
        .unwrap_or_else(|| panic!("no sh block {n}"))
        .split("```")
        .next()
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// Runs a line of the doc with `aisim` the binary under test and `dir` for
/// /tmp/aisim-dispatch; its stdout.
fn run_line(line: &str, dir: &Path) -> String {
    assert!(
        line.contains("/tmp/aisim-dispatch"),
        "writes only to /tmp/aisim-dispatch: {line}"
    );
    let line = line.replace("/tmp/aisim-dispatch", &dir.display().to_string());
    let script = format!(
        "aisim() {{ '{}' \"$@\"; }}; {line}",
        env!("CARGO_BIN_EXE_aisim")
    );
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    // Nothing on stderr but the note of what a command wrote.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && err.lines().all(|l| l.starts_with("wrote ")),
        "{line}: {err}"
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the doc's `jq` line prints for one run.
fn row(run: &str, r: &serde_json::Value) -> String {
    let n = |path: &str| {
        r.pointer(path)
            .and_then(|v| v.as_f64())
            .unwrap_or_else(|| panic!("{run}: {path}"))
            .round()
    };
    let cells = [
        "/sessions/realized_gap_ms/p50",
        "/sessions/realized_gap_ms/p90",
        "/sessions/trace_gap_ms/p50",
        "/latency/ttft_ms/p90",
        "/latency/ttft_from_dispatch_ms/p90",
        "/latency/e2e_ms/p90",
        "/latency/e2e_from_dispatch_ms/p90",
        "/latency/dispatch_delay_ms/p90",
        "/concurrency/mean",
        "/duration_s",
    ]
    .map(|p| format!("{}", n(p)));
    format!("| {run} | {} |", cells.join(" | "))
}

#[test]
fn the_worked_example_produces_its_table() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let dir = temp_dir("dispatch-modes");
    let cmds = commands(&doc);
    assert_eq!(cmds.len(), 6, "{cmds:?}");
    for line in &cmds {
        run_line(line, &dir);
    }
    let report = |run: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(Path::new(&dir).join(format!("{run}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let [st, sk, xt, xk] = RUNS.map(report);
    for (run, r) in RUNS.iter().zip([&st, &sk, &xt, &xk]) {
        let row = row(run, r);
        assert!(doc.contains(&format!("{row}\n")), "docs/dispatch-modes.md lacks the row\n{row}\n(rerun the doc's commands and paste the table)");
        assert_eq!(r["outcomes"]["completed"], 800, "{run}");
    }
    // What the text reads in it.
    let at = |r: &serde_json::Value, p: &str| r.pointer(p).unwrap().as_f64().unwrap();
    assert_eq!(at(&sk, "/sessions/realized_gap_ms/p50"), 3000.0);
    assert_eq!(at(&xk, "/sessions/realized_gap_ms/p90"), 3000.0);
    assert!(at(&st, "/sessions/realized_gap_ms/p50") < 3000.0);
    assert_eq!(
        at(&xt, "/sessions/realized_gap_ms/p90"),
        0.0,
        "the gap collapses when saturated"
    );
    // Saturated, tracets measures the backlog from the trace clock, and
    // queues more even from dispatch.
    for p in ["/latency/ttft_ms/p90", "/latency/e2e_ms/p90"] {
        assert!(at(&xt, p) > 2.0 * at(&xk, p), "{p}");
    }
    let from_dispatch = "/latency/ttft_from_dispatch_ms/p90";
    assert!(at(&xt, from_dispatch) > at(&xk, from_dispatch));
    for p in ["/latency/ttft_ms/p90", "/latency/e2e_ms/p90", from_dispatch] {
        assert!(
            (at(&st, p) - at(&sk, p)).abs() < 0.1 * at(&sk, p),
            "with slack the modes agree on {p}"
        );
    }
    // "Side by side": the compare excerpts are what the commands print,
    // and the pages are written.
    let side = block(&doc, 2);
    assert_eq!(side.len(), 3, "{side:?}");
    for line in &side {
        for out in run_line(line, &dir).lines() {
            assert!(
                doc.contains(&format!("\n{out}\n")),
                "docs/dispatch-modes.md lacks the line\n{out}\n(rerun the doc's commands and paste the excerpts)"
            );
        }
    }
    for page in [
        "slack-compare.html",
        "saturated-compare.html",
        "saturated-tracets.html",
    ] {
        let html = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(html.contains("CDF of the inter-turn gap"), "{page}");
    }
}
