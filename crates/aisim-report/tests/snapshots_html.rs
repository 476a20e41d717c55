//! Snapshot of the HTML report's skeleton: its headings, charts (one SVG
//! each, with its series) and table headers, digits masked, the curves'
//! points and the axes' ticks left out (regenerate with `cargo xtask
//! golden`, review the diff before committing).

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::TopologySpec;
use aisim_replay::{ReplaySpec, Replayer};

/// The structural lines of a page, numbers masked.
fn skeleton(html: &str) -> String {
    let keep = [
        "<!DOCTYPE",
        "<html",
        "<title",
        "<h1",
        "<h2",
        "<p class",
        "<figure",
        "<figcaption",
        "<svg",
        "<polyline",
        "</svg",
        "<table",
        "<caption",
        "<tr><th",
        "</body",
    ];
    html.lines()
        .filter(|l| keep.iter().any(|k| l.starts_with(k)))
        .map(|l| {
            // A curve's points and colour are data, not structure.
            let l = match (l.find(" points=\""), l.find("><title>")) {
                (Some(a), Some(b)) => format!("{}{}", &l[..a], &l[b..]),
                _ => l.to_string(),
            };
            l.chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn replay_html_skeleton() {
    // The embedded demo (sessions, so the gap chart too) on two workers.
    let spec = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 2 },
        ..ReplaySpec::default()
    };
    let out = Replayer::new(spec, SpecComposition)
        .unwrap()
        .with_cdfs(true)
        .run()
        .unwrap();
    let html = aisim_report::html::render_replay_html(&out.report, out.cdfs.as_ref());
    insta::assert_snapshot!(skeleton(&html));
}

#[test]
fn compare_html_skeleton() {
    // The demo on two workers against four with a timeout: a discipline
    // warning, both runs on every chart.
    let run = |workers: u32, timeout_s: Option<f64>| {
        let mut spec = ReplaySpec {
            topology: TopologySpec::Aggregated { workers },
            ..ReplaySpec::default()
        };
        spec.discipline.timeout_s = timeout_s;
        Replayer::new(spec, SpecComposition)
            .unwrap()
            .run()
            .unwrap()
            .report
    };
    let (a, b) = (run(2, None), run(4, Some(3.0)));
    let c = aisim_report::compare::compare(&a, "a.json", &b, "b.json");
    let html = aisim_report::html::render_compare_html(&c, &a, &b);
    insta::assert_snapshot!(skeleton(&html));
}
