//! `--html FILE` on replay, compare and the fleet commands that simulate: one
//! self-contained page (nothing external), one SVG per chart with its
//! series, the same bytes for the same input, and a page that renders in
//! headless Chromium without console errors and not blank.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{aisim, fixture, stderr, stdout, temp_dir};

/// Runs `args` plus `--html FILE` and returns the page and stdout.
fn page_of(args: &[&str], name: &str) -> (String, String) {
    let path = temp_dir("html").join(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--html", path.to_str().unwrap()]);
    let o = aisim(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    (std::fs::read_to_string(&path).unwrap(), stdout(&o))
}

/// What the page must not hold: anything fetched or run.
fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for needle in [
        "http",
        "<script",
        "src=",
        "href=",
        "url(",
        "@import",
        "<link",
        "@font-face",
    ] {
        assert!(!lower.contains(needle), "the page holds {needle:?}");
    }
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
}

/// Each SVG's series count, in page order.
fn series_per_svg(html: &str) -> Vec<usize> {
    html.split("<svg")
        .skip(1)
        .map(|chart| {
            let body = &chart[..chart.find("</svg>").expect("closed")];
            body.matches("<polyline class=\"series\"").count()
        })
        .collect()
}

#[test]
fn the_replay_page_is_self_contained_with_one_svg_per_chart() {
    let args = [
        "replay",
        &fixture("demo_sessions.jsonl"),
        "--workers",
        "3",
        "--quiet",
        "--format",
        "json",
    ];
    let (html, json) = page_of(&args, "sessions.html");
    assert_self_contained(&html);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let shown = report["time_series"]["kv"]["shown"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(shown, 3);
    assert!(report["sessions"].is_object());
    // TTFT, TPOT, E2E; output tokens; arrivals and completions (no
    // timeouts or rejections here); in flight, running, waiting; each
    // worker and all of them; the realized and trace gaps.
    assert_eq!(series_per_svg(&html), [1, 1, 1, 1, 2, 3, shown + 1, 2]);
    assert_eq!(
        html.matches("<svg").count(),
        html.matches("<figure>").count()
    );
    // Axes say their units.
    for label in [
        "TTFT (ms)",
        "TPOT (ms)",
        "E2E (ms)",
        "simulated time (s)",
        "output tokens / s",
        "gap (ms)",
    ] {
        assert!(html.contains(&format!(">{label}</text>")), "{label}");
    }
    // The same input gives the same bytes.
    let (again, _) = page_of(&args, "sessions-again.html");
    assert_eq!(html, again);
}

#[test]
fn an_overloaded_replay_charts_its_timeouts_and_rejections() {
    let (html, _) = page_of(
        &[
            "replay",
            "--workers",
            "1",
            "--timeout",
            "1",
            "--max-model-len",
            "4000",
            "--quiet",
        ],
        "overloaded.html",
    );
    assert_self_contained(&html);
    // The demo on one worker: requests time out and long ones are refused,
    // so the requests chart has arrivals, completions, timeouts and
    // rejections.
    assert_eq!(series_per_svg(&html), [1, 1, 1, 1, 4, 3, 2, 2]);
    for name in ["timed out", "rejected"] {
        assert!(html.contains(&format!("<title>{name}</title>")), "{name}");
    }
}

#[test]
fn the_fleet_pages_have_a_curve_per_scope() {
    let des = ["--n-s", "4", "--n-l", "4", "--n-req", "3000", "--lam", "20"];
    let (html, table) = page_of(&[&["simulate"][..], &des].concat(), "simulate.html");
    assert_self_contained(&html);
    assert!(
        table.contains("Fleet DES"),
        "the table still goes to stdout"
    );
    // TTFT and queue wait, each of the fleet and its two pools.
    assert_eq!(series_per_svg(&html), [3, 3]);
    let (html, _) = page_of(
        &[&["compare-routers"][..], &des].concat(),
        "compare-routers.html",
    );
    assert_self_contained(&html);
    assert_eq!(series_per_svg(&html), [3, 3], "one curve per router");
    let (html, _) = page_of(
        &[
            "simulate-fleet",
            &fixture("fleet.json"),
            "--n-req",
            "3000",
            "--lam",
            "20",
        ],
        "fleet.html",
    );
    assert_self_contained(&html);
    assert_eq!(series_per_svg(&html), [3, 3]);
}

#[test]
fn the_page_on_stdout_is_the_only_thing_there() {
    let o = aisim(&["replay", "--html", "-", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("<!DOCTYPE html>") && out.ends_with("</html>\n"));
    for clash in [
        &["--per-request", "-"][..],
        &["--out", "-"][..],
        &["--format", "json"][..],
    ] {
        let o = aisim(&[&["replay", "--html", "-", "--quiet"][..], clash].concat());
        assert_eq!(o.status.code(), Some(2), "{clash:?}");
        assert!(stderr(&o).contains("--html -"), "{clash:?}: {}", stderr(&o));
    }
    let o = aisim(&[
        "simulate", "--n-s", "1", "--n-l", "1", "--n-req", "100", "--html", "-", "--out", "-",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "nothing written before the error");
    let o = aisim(&["replay", "--print-spec", "--html", "x.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--html has no effect with --print-spec"),
        "{}",
        stderr(&o)
    );
    let o = aisim(&["replay", "--quiet", "--html", "/nonexistent-dir/x.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent-dir/x.html"),
        "{}",
        stderr(&o)
    );
}

/// The browser: `AISIM_CHROMIUM` or Debian's `/usr/bin/chromium`. Missing,
/// the test passes on a newcomer's machine but fails where
/// `AISIM_REQUIRE_CHROMIUM=1` (CI, `.ci/run`) says it must run.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("AISIM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var("AISIM_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "AISIM_REQUIRE_CHROMIUM=1 but there is no browser at {} (apt-get install -y chromium, or set AISIM_CHROMIUM)",
        path.display()
    );
    eprintln!(
        "skipped: no browser at {} (set AISIM_REQUIRE_CHROMIUM=1 to make this fail)",
        path.display()
    );
    None
}

/// Headless Chromium on `page` with a fresh profile: its stdout, its
/// stderr (console messages logged there).
fn headless(browser: &Path, page: &Path, action: &str, dir: &Path) -> (String, String) {
    let profile = dir.join(format!(
        "profile-{}",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1000,2600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(action)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium {action}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Headless Chromium on `html` (written to `dir/name.html`): no console
/// error, every chart and curve parsed, `text` in the DOM, and a screenshot
/// that is not blank.
fn assert_renders(browser: &Path, dir: &Path, name: &str, html: &str, text: &str) {
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).unwrap();
    let (dom, log) = headless(browser, &page, "--dump-dom", dir);
    assert_eq!(console_errors(&log), 0, "{name}: console:\n{log}");
    // The browser parsed every chart and every curve.
    assert_eq!(dom.matches("<svg").count(), html.matches("<svg").count());
    assert_eq!(
        dom.matches("<polyline").count(),
        html.matches("<polyline").count()
    );
    assert!(dom.contains(text), "{name}: {text:?}");
    // Not blank: the screenshot of the page against that of an empty page
    // of the same size (PNG compresses a blank page to almost nothing).
    let blank = dir.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let shot = |p: &Path, name: &str| {
        let png = dir.join(name);
        headless(browser, p, &format!("--screenshot={}", png.display()), dir);
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name} is a PNG");
        bytes.len()
    };
    let (drawn, empty) = (
        shot(&page, &format!("{name}.png")),
        shot(&blank, "blank.png"),
    );
    assert!(
        drawn > 10 * empty,
        "{name}: screenshot {drawn} bytes, blank page {empty}"
    );
}

fn console_errors(log: &str) -> usize {
    ["Uncaught", "ERROR:CONSOLE", "Refused to", "net::ERR"]
        .into_iter()
        .filter(|bad| log.contains(bad))
        .count()
}

#[test]
fn the_page_renders_in_headless_chromium() {
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("chromium");
    // The check sees a console error when there is one.
    let broken = dir.join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><html><body><script>throw new Error('x')</script></body></html>",
    )
    .unwrap();
    let (_, log) = headless(&browser, &broken, "--dump-dom", &dir);
    assert!(console_errors(&log) > 0, "a thrown error is logged:\n{log}");
    let (html, _) = page_of(
        &[
            "replay",
            &fixture("demo_sessions.jsonl"),
            "--workers",
            "2",
            "--quiet",
        ],
        "replay.html",
    );
    assert_renders(&browser, &dir, "replay", &html, "CDF of TTFT");
}

/// Two reports of the demo (2 workers; 4 with a timeout) in a folder of
/// their own and their compare page written with `--html`: the page, stdout
/// and the reports' paths.
fn compare_page(name: &str) -> (String, String, [String; 2]) {
    let dir = temp_dir(name);
    let run = |file: &str, extra: &[&str]| {
        let path = dir.join(file).to_str().unwrap().to_string();
        let o = aisim(&[&["replay", "--quiet", "--out", &path][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        path
    };
    let a = run("a.json", &["--workers", "2"]);
    let b = run("b.json", &["--workers", "4", "--timeout", "3"]);
    let (html, table) = page_of(&["compare", &a, &b], name);
    (html, table, [a, b])
}

#[test]
fn the_compare_page_overlays_both_runs() {
    let (html, table, [a, b]) = compare_page("compare.html");
    assert_self_contained(&html);
    assert!(table.contains("B - A"), "the table still goes to stdout");
    // TTFT, TPOT, E2E and output tokens: one curve per run; requests
    // (arrivals and completions), concurrency (3), KV (2 + 1 and 4 + 1
    // workers) and gaps (2) per run.
    assert_eq!(series_per_svg(&html), [2, 2, 2, 2, 4, 6, 8, 4]);
    assert_eq!(
        html.matches("<svg").count(),
        html.matches("<figure>").count()
    );
    for name in ["A: completed requests", "B: completed requests"] {
        assert!(html.contains(&format!("<title>{name}</title>")), "{name}");
    }
    // The discipline warning, and the table of every figure with its deltas.
    assert!(html.contains("warning: the disciplines differ"));
    assert!(html.contains("<th>B - A</th><th>change</th>"));
    assert!(html.contains("<td>latency.ttft_ms.p90</td>"));
    let (again, _, _) = compare_page("compare.html");
    assert_eq!(html, again, "the same input gives the same bytes");
    // On stdout the page is alone there; the warning goes to stderr.
    let (a, b) = (a.as_str(), b.as_str());
    let o = aisim(&["compare", a, b, "--html", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), html);
    assert!(stderr(&o).contains("the disciplines differ"));
    for clash in [&["--out", "-"][..], &["--format", "json"][..]] {
        let o = aisim(&[&["compare", a, b, "--html", "-"][..], clash].concat());
        assert_eq!(o.status.code(), Some(2), "{clash:?}");
        assert!(o.stdout.is_empty(), "{clash:?}: nothing written");
        assert!(stderr(&o).contains("--html -"), "{clash:?}: {}", stderr(&o));
    }
    let o = aisim(&["compare", a, b, "--html", "/nonexistent-dir/c.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent-dir/c.html"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_compare_page_renders_in_headless_chromium() {
    let Some(browser) = chromium() else { return };
    let (html, _, _) = compare_page("compare-chromium.html");
    let dir = temp_dir("chromium-compare");
    assert_renders(&browser, &dir, "compare", &html, "B: completed requests");
}
