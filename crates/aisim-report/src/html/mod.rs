//! Self-contained HTML reports: one file with inline SVG charts and the
//! report's tables, no script, no font and no URL, readable from disk in any
//! browser. The same input gives the same bytes.
//!
//! A page is a title and a list of parts (charts and tables); the replay and
//! fleet pages build theirs from the reports (`replay.rs`, `fleet.rs`), and
//! `replay_charts` overlays several runs, which the page of `aisim compare`
//! does (`compare.rs`).

mod compare;
mod escape;
mod fleet;
mod replay;
mod saturate;
pub mod svg;
mod sweep;

pub use compare::render_compare_html;
pub use escape::escape;
pub use fleet::{render_compare_routers_html, render_simulate_html};
pub use replay::{render_replay_html, replay_charts, ReplayRun};
pub use saturate::render_saturate_html;
pub use sweep::render_sweep_html;

use crate::table::Table;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}\
svg.chart{max-width:100%;height:auto;font-size:12px}\
.plot{fill:#fff;stroke:#888}.grid{stroke:#e4e4e4}.tick,.legend{fill:#444}.label{fill:#222}\
polyline.series{fill:none;stroke-width:1.6}.mark{stroke:#555;stroke-width:1.2;stroke-dasharray:5 4}.mark-label{fill:#333;paint-order:stroke;stroke:#fff;stroke-width:3px}\
div.scroll{max-width:100%;overflow-x:auto}\
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}\
caption{text-align:left;font-weight:600;padding:.3em 0}\
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
p.note{color:#555;font-size:.9em}";

/// One part of a page.
#[derive(Debug, Clone)]
pub enum Part {
    /// A section heading.
    Heading(String),
    /// A paragraph of explanation.
    Note(String),
    /// A chart.
    Chart(svg::Chart),
    /// A table.
    Table(Table),
}

/// A whole page: `<!DOCTYPE html>` to `</html>`, with its style inline.
pub fn page(title: &str, parts: &[Part]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
        escape(title)
    );
    for part in parts {
        match part {
            Part::Heading(h) => out.push_str(&format!("<h2>{}</h2>\n", escape(h))),
            Part::Note(n) => out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(n))),
            Part::Chart(c) => out.push_str(&c.render()),
            // A wide table scrolls within the page, not the page with it.
            Part::Table(t) => {
                out.push_str("<div class=\"scroll\">\n");
                out.push_str(&table(t));
                out.push_str("</div>\n");
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A table as HTML, numbers right-aligned as in the terminal.
pub fn table(t: &Table) -> String {
    let mut out = String::from("<table>\n");
    if let Some(title) = t.title() {
        out.push_str(&format!("<caption>{}</caption>\n", escape(title)));
    }
    out.push_str("<tr>");
    for h in t.header() {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for row in t.rows() {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if i > 0 && t.aligns_right(c) {
                " class=\"num\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", escape(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_align_right() {
        assert_eq!(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        let mut t = Table::new(["name", "value"]).titled("T & U");
        t.row(["<x>", "1.5"]);
        assert_eq!(
            table(&t),
            "<table>\n<caption>T &amp; U</caption>\n<tr><th>name</th><th>value</th></tr>\n<tr><td>&lt;x&gt;</td><td class=\"num\">1.5</td></tr>\n</table>\n"
        );
    }
}
