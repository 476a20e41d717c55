//! `--html FILE` on replay, compare, the sweep pages and the fleet commands
//! that simulate: one self-contained page (nothing external), one SVG per
//! chart with its series, no two series of a chart alike, the same bytes for
//! the same input, and a page that renders in headless Chromium without
//! console errors, not blank, no wider than the window, with tick labels
//! clear of the axis labels and a categorical axis ticked by its names.

#[path = "common/browser.rs"]
mod browser;
mod common;

use std::path::Path;

use browser::{chromium, console_errors, headless_url};
use common::{aisim, ci_grid_run, fixture, stderr, stdout, temp_dir};

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

/// No two series of a chart drawn alike: each polyline's colour and dash
/// pattern differ from every other's in its SVG.
fn assert_series_distinct(html: &str) {
    for chart in html.split("<svg").skip(1) {
        let body = &chart[..chart.find("</svg>").expect("closed")];
        let mut styles: Vec<(String, String)> = body
            .split("<polyline class=\"series\"")
            .skip(1)
            .map(|p| {
                let tag = &p[..p.find('>').unwrap()];
                let attr = |name: &str| {
                    tag.split_once(&format!(" {name}=\""))
                        .map(|(_, rest)| rest[..rest.find('"').unwrap()].to_string())
                        .unwrap_or_default()
                };
                (attr("stroke"), attr("stroke-dasharray"))
            })
            .collect();
        let n = styles.len();
        styles.sort();
        styles.dedup();
        assert_eq!(styles.len(), n, "two series drawn alike: {styles:?}");
    }
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

/// Headless Chromium on the file `page` with a fresh profile: its stdout,
/// its stderr (console messages logged there).
fn headless(browser: &Path, page: &Path, action: &str, dir: &Path) -> (String, String) {
    let profile = page.file_stem().unwrap().to_string_lossy().into_owned();
    let url = format!("file://{}", page.display());
    headless_url(browser, &url, action, dir, &profile, &[])
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
    // (arrivals and completions), concurrency (3), KV (the busiest worker
    // and all of them) and gaps (2) per run.
    assert_eq!(series_per_svg(&html), [2, 2, 2, 2, 4, 6, 4, 4]);
    assert_series_distinct(&html);
    for name in ["A: all 2 workers", "B: all 4 workers"] {
        assert!(html.contains(&format!("<title>{name}</title>")), "{name}");
    }
    assert_eq!(html.matches(", the busiest</title>").count(), 2);
    assert_eq!(
        html.matches("<svg").count(),
        html.matches("<figure>").count()
    );
    for name in ["A: completed requests", "B: completed requests"] {
        assert!(html.contains(&format!("<title>{name}</title>")), "{name}");
    }
    // Each run named by what differs in its spec, not by what they share.
    assert!(
        html.contains("<title>aisim compare: A (topology.workers 2, discipline.timeout_s -) vs B (topology.workers 4, discipline.timeout_s 3.0)</title>"),
        "{}",
        &html[..html.find("</title>").unwrap()]
    );
    assert!(html.contains("<tr><td>topology.workers</td><td>2</td><td>4</td></tr>"));
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

/// The sweep page of the CI grid (1 and 2 workers × round robin and least
/// loaded × 2 seeds), planned, run and merged with an SLO.
fn sweep_page() -> String {
    let dir = temp_dir("html-sweep");
    let (_, runs) = ci_grid_run(&dir);
    let runs = runs.as_str();
    let results = dir.join("results.jsonl");
    let merge = [
        "sweep",
        "merge",
        runs,
        "--out",
        results.to_str().unwrap(),
        "--slo-ttft-ms",
        "100",
    ];
    page_of(&merge, "sweep.html").0
}

/// The saturation page of one worker from 1 to 400 req/s (its TTFT p99 from
/// tens of ms to tens of seconds) under a TTFT limit of 300 ms, and the
/// search's JSON report.
fn saturate_page() -> (String, serde_json::Value) {
    let args = [
        "sweep",
        "saturate",
        "--synthetic",
        "--requests",
        "3000",
        "--rate-range",
        "1..400",
        "--workers",
        "1",
        "--slo-ttft-ms",
        "300",
        "--quiet",
        "--format",
        "json",
    ];
    let (html, json) = page_of(&args, "saturate.html");
    (html, serde_json::from_str(&json).unwrap())
}

/// Each chart of a page: its title and its SVG's body.
fn charts(html: &str) -> Vec<(String, &str)> {
    html.split("<svg")
        .skip(1)
        .map(|chart| {
            let title = chart.split_once("aria-label=\"").unwrap().1;
            let title = title[..title.find('"').unwrap()].to_string();
            (title, &chart[..chart.find("</svg>").expect("closed")])
        })
        .collect()
}

/// The texts of the elements of `class` in a chart's body, in order.
fn texts<'a>(body: &'a str, class: &str) -> Vec<&'a str> {
    body.split(&format!("class=\"{class}\""))
        .skip(1)
        .map(|rest| {
            let rest = &rest[rest.find('>').unwrap() + 1..];
            &rest[..rest.find("</text>").unwrap()]
        })
        .collect()
}

#[test]
fn the_sweep_page_draws_a_router_axis_by_name_and_rounds_its_table() {
    let html = sweep_page();
    assert_self_contained(&html);
    assert_series_distinct(&html);
    let all = charts(&html);
    assert_eq!(all.len(), 15, "5 figures against each of 3 axes");
    for (title, body) in &all {
        let ticks = texts(body, "tick x");
        if title.ends_with("against router.policy") {
            // Categories at named ticks, as dots no line joins.
            assert_eq!(ticks, ["round_robin", "least_loaded"], "{title}");
            assert_eq!(body.matches("<polyline").count(), 0, "{title}");
            assert_eq!(
                body.matches("<g class=\"series points\"").count(),
                4,
                "{title}"
            );
        } else {
            // Worker counts and seeds: whole ticks, never 0.5.
            assert!(
                title.ends_with("against topology.workers") || title.ends_with("against seed"),
                "{title}"
            );
            assert_eq!(ticks, ["0", "1", "2"], "{title}");
        }
    }
    assert!(
        !html.contains("x positions:"),
        "no note stands in for the ticks"
    );
    // The runs' table: figures to 4 significant digits (every digit
    // before the point), not 13.
    let cells: Vec<&str> = html
        .split("<td class=\"num\">")
        .skip(1)
        .map(|c| &c[..c.find("</td>").unwrap()])
        .collect();
    assert!(cells.len() > 8 * 20, "{}", cells.len());
    for c in cells {
        let digits = c.trim_start_matches(['-', '0', '.']).replace('.', "");
        let whole = c.split('.').next().unwrap().trim_start_matches('-').len();
        assert!(digits.len() <= whole.max(4), "{c}");
    }
}

#[test]
fn the_saturation_page_draws_latency_by_decades_with_the_slo_and_the_answer_marked() {
    let (html, report) = saturate_page();
    assert_self_contained(&html);
    assert_series_distinct(&html);
    let holds = report["bracket"]["holds"]["rate_rps"].as_f64().unwrap();
    let all = charts(&html);
    assert_eq!(all.len(), 4);
    for (title, body) in &all {
        // Every chart marks the highest rate found to hold.
        let marks = texts(body, "mark-label");
        let at: f64 = marks
            .iter()
            .find_map(|m| m.strip_prefix("holds up to "))
            .and_then(|m| m.strip_suffix(" req/s"))
            .unwrap_or_else(|| panic!("{title}: {marks:?}"))
            .parse()
            .unwrap();
        assert!(
            (at - holds).abs() <= holds * 1e-3,
            "{title}: {at} vs {holds}"
        );
        if title.starts_with("TTFT") {
            // TTFT p99 from about 60 ms to about 80 s: by decades, the
            // limit drawn.
            assert!(marks.contains(&"SLO: TTFT ≤ 300 ms"), "{marks:?}");
            assert_eq!(texts(body, "label y"), ["TTFT (ms), log scale"]);
            let ticks: Vec<f64> = texts(body, "tick y")
                .iter()
                .map(|t| t.parse().unwrap())
                .collect();
            for decade in [100.0, 1000.0, 10000.0] {
                assert!(ticks.contains(&decade), "{ticks:?}");
            }
            let p99: Vec<f64> = report["curve"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["ttft_ms"]["p99"].as_f64())
                .collect();
            let (lo, hi) = p99
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &v| (l.min(v), h.max(v)));
            assert!(hi / lo > 100.0, "the case spans decades: {lo}..{hi}");
            assert!(ticks[0] <= lo && *ticks.last().unwrap() >= hi, "{ticks:?}");
        } else if title.starts_with("Throughput") {
            assert_eq!(texts(body, "label y"), ["requests per second"]);
        }
    }
}

/// What the browser laid out, measured by a script in a copy of the page
/// (the pages hold none): the window's width and the page's, the elements
/// reaching past the window (outside a table's scroll box), and each
/// chart's tick labels and whether any y tick label overlaps the y label.
fn layout(browser: &Path, dir: &Path, name: &str, html: &str) -> serde_json::Value {
    const MEASURE: &str = r#"<script>
(() => {
  const W = document.documentElement.clientWidth;
  const box = e => e.getBoundingClientRect();
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const out = {window: W, page: document.documentElement.scrollWidth, wider: [], charts: []};
  for (const e of document.body.querySelectorAll('*')) {
    if (e.parentElement.closest('div.scroll')) continue;
    if (box(e).right > W + 0.5) out.wider.push(e.tagName + ': ' + (e.textContent || '').slice(0, 60));
  }
  for (const svg of document.querySelectorAll('svg.chart')) {
    const label = svg.querySelector('text.label.y');
    const ys = [...svg.querySelectorAll('text.tick.y')];
    const xs = [...svg.querySelectorAll('text.tick.x')];
    out.charts.push({
      title: svg.getAttribute('aria-label'),
      x_ticks: xs.map(t => t.textContent),
      y_ticks_on_label: ys.filter(t => meet(box(t), box(label))).map(t => t.textContent),
      x_ticks_overlapping: xs.slice(1).filter((t, i) => meet(box(t), box(xs[i]))).length,
    });
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;
    let page = dir.join(format!("{name}-measured.html"));
    std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let (dom, log) = headless(browser, &page, "--dump-dom", dir);
    assert_eq!(console_errors(&log), 0, "{name}: console:\n{log}");
    let json = dom
        .split_once("<pre id=\"layout\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .unwrap_or_else(|| panic!("{name}: no measurement in\n{dom}"))
        .0
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn the_pages_fit_the_window_with_their_labels_apart_in_headless_chromium() {
    let Some(browser) = chromium() else { return };
    let dir = temp_dir("chromium-layout");
    // The measure sees what it looks for: a page wider than the window, a
    // tick label on the y label, two x tick labels on each other.
    let bad = concat!(
        "<!DOCTYPE html><html><body><div style=\"width:3000px\">wide</div>",
        "<svg class=\"chart\" width=\"300\" height=\"100\">",
        "<text x=\"14\" y=\"50\" class=\"label y\">label</text>",
        "<text x=\"20\" y=\"50\" class=\"tick y\">1000000</text>",
        "<text x=\"100\" y=\"90\" class=\"tick x\">round_robin</text>",
        "<text x=\"110\" y=\"90\" class=\"tick x\">least_loaded</text>",
        "</svg></body></html>"
    );
    let l = layout(&browser, &dir, "bad", bad);
    assert_eq!(l["wider"][0], "DIV: wide", "{l}");
    assert_eq!(
        l["charts"][0]["y_ticks_on_label"],
        serde_json::json!(["1000000"]),
        "{l}"
    );
    assert_eq!(l["charts"][0]["x_ticks_overlapping"], 1, "{l}");
    let (saturate, _) = saturate_page();
    let (compare, _, _) = compare_page("compare-layout.html");
    let (replay, _) = page_of(
        &["replay", "--workers", "3", "--quiet"],
        "replay-layout.html",
    );
    let pages = [
        ("sweep", sweep_page()),
        ("saturate", saturate),
        ("compare", compare),
        ("replay", replay),
    ];
    for (name, html) in &pages {
        assert_renders(&browser, &dir, name, html, "<svg");
        let l = layout(&browser, &dir, name, html);
        // Nothing reaches past the window: a wide table scrolls in its box.
        assert_eq!(l["wider"], serde_json::json!([]), "{name}: {l}");
        assert!(l["page"].as_f64() <= l["window"].as_f64(), "{name}: {l}");
        let charts = l["charts"].as_array().unwrap();
        assert_eq!(charts.len(), html.matches("<svg").count(), "{name}");
        for c in charts {
            assert_eq!(c["y_ticks_on_label"], serde_json::json!([]), "{name}: {c}");
            assert_eq!(c["x_ticks_overlapping"], 0, "{name}: {c}");
        }
        if *name == "sweep" {
            let names: Vec<&serde_json::Value> = charts
                .iter()
                .filter(|c| c["title"].as_str().unwrap().ends_with("router.policy"))
                .map(|c| &c["x_ticks"])
                .collect();
            assert_eq!(names.len(), 5);
            for ticks in names {
                assert_eq!(*ticks, serde_json::json!(["round_robin", "least_loaded"]));
            }
        }
    }
}
