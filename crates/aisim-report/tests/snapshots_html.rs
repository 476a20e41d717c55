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
