//! Charts as inline SVG: axes with units and ticks (linear, or by decades
//! when the values span them; named ticks for a categorical axis), one
//! `<polyline class="series">` per line and one `<g class="series points">`
//! per set of points, reference lines (an SLO limit, a saturation point),
//! and a legend in which no two series look alike. No script, no font, no
//! URL: the chart is drawn with what any browser has.

use std::fmt::Write;

use aisim_core::number::rounded;

use super::escape::escape;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
/// The least room left of the plot: the y label and the widest tick label
/// widen it (`left_margin`).
const LEFT: f64 = 72.0;
const RIGHT: f64 = 32.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 48.0;
const LEGEND_ROW: f64 = 18.0;
/// Between the x axis's label and the legend's first row.
const LEGEND_GAP: f64 = 12.0;
/// Width of a character of the page's 12 px text, about (digits and most
/// letters of a sans-serif face are narrower).
const CHAR_PX: f64 = 7.0;
/// Decades the positive values of an automatic axis must span to be drawn
/// on a log scale (a hundredfold).
const LOG_DECADES: f64 = 2.0;

/// Colours of the series, in order (the Tableau 10 palette); past ten the
/// colours come round again with another dash pattern (`DASHES`), so no two
/// series of a chart look alike.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Dash patterns of the rounds of the palette: solid, dashed, dotted,
/// dash-dot.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// How a series joins its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Straight segments.
    Line,
    /// Straight segments with a dot at each point (few points, each a run).
    LinePoints,
    /// Dots only (values at named positions, which no line joins).
    Points,
    /// A step up at each point (an empirical CDF), from 0 at the first.
    Cdf,
}

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` by increasing x.
    pub points: Vec<(f64, f64)>,
    /// How the points join.
    pub shape: Shape,
}

impl Series {
    /// A series of straight segments.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            shape: Shape::Line,
        }
    }

    /// A series of straight segments with a dot at each point.
    pub fn line_points(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            shape: Shape::LinePoints,
        }
    }

    /// A series of dots.
    pub fn points(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            shape: Shape::Points,
        }
    }

    /// A CDF drawn as steps.
    pub fn cdf(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            shape: Shape::Cdf,
        }
    }

    fn drawn(&self) -> Vec<(f64, f64)> {
        match self.shape {
            Shape::Line | Shape::LinePoints | Shape::Points => self.points.clone(),
            Shape::Cdf => {
                let mut out = Vec::with_capacity(self.points.len() * 2);
                let mut below = 0.0;
                for &(x, y) in &self.points {
                    out.push((x, below));
                    out.push((x, y));
                    below = y;
                }
                out
            }
        }
    }

    fn has_line(&self) -> bool {
        self.shape != Shape::Points
    }

    fn has_dots(&self) -> bool {
        matches!(self.shape, Shape::Points | Shape::LinePoints)
    }
}

/// How the y axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly.
    Linear,
    /// By decades: a log scale when every value is positive and they span
    /// at least two decades (a latency from 30 ms to 3,000,000 ms), else
    /// linear.
    Auto,
}

/// A reference line: where, and what it marks.
#[derive(Debug, Clone)]
pub struct Mark {
    /// The value on its axis.
    pub at: f64,
    /// Its label, drawn beside it.
    pub label: String,
}

/// A chart: its title, axis labels (with units) and series.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Heading above the chart.
    pub title: String,
    /// What the x axis measures, with its unit.
    pub x_label: String,
    /// What the y axis measures, with its unit.
    pub y_label: String,
    /// The curves.
    pub series: Vec<Series>,
    /// A y range fixed in advance (a CDF's 0 to 1), else from the data.
    pub y_range: Option<(f64, f64)>,
    /// The names of x = 0, 1, 2, …: a categorical axis (a router), whose
    /// ticks are these names and nothing between them.
    pub x_categories: Option<Vec<String>>,
    /// How the y axis maps values.
    pub y_scale: Scale,
    /// Horizontal reference lines (an SLO limit), inside the y range.
    pub y_marks: Vec<Mark>,
    /// Vertical reference lines (a saturation point), inside the x range.
    pub x_marks: Vec<Mark>,
}

/// Ticks of an axis over `[lo, hi]`: about five, at the 1, 2 or 5 × 10^k
/// step nearest a fifth of the span, with the decimals that step needs.
pub fn ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .min_by(|a, b| (a / raw).ln().abs().total_cmp(&(b / raw).ln().abs()))
        .unwrap_or(mag);
    steps(lo, hi, step)
}

/// The multiples of `step` in `[lo, hi]`, with the decimals `step` needs.
fn steps(lo: f64, hi: f64, step: f64) -> (Vec<f64>, usize) {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    ((first..=last).map(|k| k as f64 * step).collect(), decimals)
}

/// Ticks of an axis of whole numbers (worker counts): [`ticks`], but never
/// between two whole numbers.
fn whole_ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let (t, d) = ticks(lo, hi);
    if t.len() >= 2 && t[1] - t[0] < 1.0 {
        steps(lo, hi, 1.0)
    } else {
        (t, d)
    }
}

/// The data range of an axis, widened to a span when flat and to 0 below
/// when every value is positive (so areas and rates read from zero).
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() };
    }
    // Round the top up to a tick, so the last tick marks the top.
    let (t, _) = ticks(lo, hi);
    let step = if t.len() >= 2 { t[1] - t[0] } else { hi - lo };
    (lo, (hi / step).ceil() * step)
}

/// The decades `[lo, hi]` (as powers of ten) of positive values spanning at
/// least [`LOG_DECADES`], or `None`.
fn decades(values: impl Iterator<Item = f64>) -> Option<(i32, i32)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        if v <= 0.0 {
            return None;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi || (hi / lo).log10() < LOG_DECADES {
        return None;
    }
    Some((lo.log10().floor() as i32, hi.log10().ceil() as i32))
}

/// Ticks of a log axis over decades `lo..=hi`: each power of ten, and its
/// 2 and 5 multiples when there are at most three decades.
fn log_ticks(lo: i32, hi: i32) -> Vec<f64> {
    let mut out = Vec::new();
    for e in lo..=hi {
        let p = 10f64.powi(e);
        out.push(p);
        if hi - lo <= 3 && e < hi {
            out.extend([2.0 * p, 5.0 * p]);
        }
    }
    out
}

/// A y axis: the position of a value (`None` off a log axis's domain), its
/// ticks and their labels.
struct YAxis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl YAxis {
    fn new(chart: &Chart) -> YAxis {
        let values = || {
            chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .chain(chart.y_marks.iter().map(|m| m.at))
        };
        if let Some((lo, hi)) = chart.y_range {
            let (t, d) = ticks(lo, hi);
            return YAxis::linear(lo, hi, t, d);
        }
        if chart.y_scale == Scale::Auto {
            if let Some((lo, hi)) = decades(values()) {
                let hi = hi.max(lo + 1);
                let ticks = log_ticks(lo, hi)
                    .into_iter()
                    .map(|v| (v, rounded(v, 4)))
                    .collect();
                return YAxis {
                    log: true,
                    lo: f64::from(lo),
                    hi: f64::from(hi),
                    ticks,
                };
            }
        }
        let (lo, hi) = range(values(), true);
        let (t, d) = ticks(lo, hi);
        YAxis::linear(lo, hi, t, d)
    }

    fn linear(lo: f64, hi: f64, t: Vec<f64>, decimals: usize) -> YAxis {
        YAxis {
            log: false,
            lo,
            hi,
            ticks: t
                .into_iter()
                .map(|v| (v, format!("{v:.decimals$}")))
                .collect(),
        }
    }

    /// The fraction of the axis's height at `y`.
    fn at(&self, y: f64) -> f64 {
        let v = if self.log { y.log10() } else { y };
        (v - self.lo) / (self.hi - self.lo)
    }
}

/// An x axis: its range and its ticks with their labels.
struct XAxis {
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl XAxis {
    fn new(chart: &Chart) -> XAxis {
        if let Some(names) = &chart.x_categories {
            return XAxis {
                lo: -0.5,
                hi: names.len().max(1) as f64 - 0.5,
                ticks: names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (i as f64, n.clone()))
                    .collect(),
            };
        }
        let xs = || {
            chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .chain(chart.x_marks.iter().map(|m| m.at))
                .filter(|x| x.is_finite())
        };
        let (lo, hi) = range(xs(), true);
        let (t, d) = if xs().all(|x| x.fract() == 0.0) {
            whole_ticks(lo, hi)
        } else {
            ticks(lo, hi)
        };
        // Room right of the last tick, so a dot there is drawn whole.
        let pad = if chart.series.iter().any(Series::has_dots) {
            (hi - lo) * 0.03
        } else {
            0.0
        };
        XAxis {
            lo,
            hi: hi + pad,
            ticks: t.into_iter().map(|v| (v, format!("{v:.d$}"))).collect(),
        }
    }
}

impl Chart {
    /// A chart of lines on linear axes, with no reference line.
    pub fn new(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> Chart {
        Chart {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            series,
            y_range: None,
            x_categories: None,
            y_scale: Scale::Linear,
            y_marks: Vec::new(),
            x_marks: Vec::new(),
        }
    }

    /// A CDF chart: `unit` on x, the fraction `of` at or below on y, 0 to 1.
    pub fn cdf(title: &str, unit: &str, of: &str, series: Vec<Series>) -> Chart {
        Chart {
            y_range: Some((0.0, 1.0)),
            ..Chart::new(
                title,
                unit,
                &format!("fraction of {of} at or below"),
                series,
            )
        }
    }

    /// Legend entries a row holds: 4, fewer when the longest name would run
    /// into the next entry (about 7 px a character at the page's 12 px, the
    /// swatch and a gap beside it).
    fn legend_columns(&self, plot_w: f64) -> usize {
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let entry = 32.0 + CHAR_PX * longest as f64;
        (plot_w / entry).floor().clamp(1.0, 4.0) as usize
    }

    /// The colour and dash pattern of series `k`: no two alike among the
    /// first 40.
    pub fn style(k: usize) -> (&'static str, &'static str) {
        (
            PALETTE[k % PALETTE.len()],
            DASHES[(k / PALETTE.len()) % DASHES.len()],
        )
    }

    /// The chart as an SVG element (inside a `<figure>` with its title).
    pub fn render(&self) -> String {
        let x = XAxis::new(self);
        let y = YAxis::new(self);
        // Room for the rotated y label (about 20 px) and the widest tick label.
        let widest = y
            .ticks
            .iter()
            .map(|(_, l)| l.chars().count())
            .max()
            .unwrap_or(1);
        let left = LEFT.max(34.0 + CHAR_PX * widest as f64);
        let plot_w = WIDTH - left - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let columns = self.legend_columns(plot_w);
        let legend_rows = self.series.len().div_ceil(columns) as f64;
        let height = HEIGHT + LEGEND_GAP + legend_rows * LEGEND_ROW;
        let px = |v: f64| left + (v - x.lo) / (x.hi - x.lo) * plot_w;
        let py = |v: f64| TOP + plot_h - y.at(v) * plot_h;
        let mut s = String::new();
        let _ = write!(
            s,
            "<figure>\n<figcaption>{}</figcaption>\n<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">\n",
            escape(&self.title),
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{TOP}\" width=\"{plot_w}\" height=\"{plot_h}\" class=\"plot\"/>"
        );
        for (v, label) in &x.ticks {
            let _ = writeln!(
                s,
                "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{1:.1}\" class=\"grid\"/><text x=\"{0:.1}\" y=\"{2:.1}\" class=\"tick x\" text-anchor=\"middle\">{3}</text>",
                px(*v),
                TOP + plot_h,
                TOP + plot_h + 16.0,
                escape(label)
            );
        }
        for (v, label) in &y.ticks {
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" class=\"grid\"/><text x=\"{2:.1}\" y=\"{3:.1}\" class=\"tick y\" text-anchor=\"end\">{4}</text>",
                py(*v),
                left + plot_w,
                left - 6.0,
                py(*v) + 4.0,
                escape(label)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"label x\" text-anchor=\"middle\">{}</text>",
            left + plot_w / 2.0,
            TOP + plot_h + 36.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            "<text x=\"14\" y=\"{0:.1}\" class=\"label y\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1})\">{1}{2}</text>",
            TOP + plot_h / 2.0,
            escape(&self.y_label),
            if y.log { ", log scale" } else { "" }
        );
        for m in &self.y_marks {
            let at = py(m.at);
            if at.is_finite() && (TOP..=TOP + plot_h).contains(&at) {
                let _ = writeln!(
                    s,
                    "<line x1=\"{left}\" y1=\"{at:.1}\" x2=\"{0:.1}\" y2=\"{at:.1}\" class=\"mark\"/><text x=\"{1:.1}\" y=\"{2:.1}\" class=\"mark-label\" text-anchor=\"end\">{3}</text>",
                    left + plot_w,
                    left + plot_w - 4.0,
                    at - 4.0,
                    escape(&m.label)
                );
            }
        }
        for m in &self.x_marks {
            let at = px(m.at);
            if at.is_finite() && (left..=left + plot_w).contains(&at) {
                // The label inside the plot, on the side with room.
                let (lx, anchor) = if at > left + plot_w / 2.0 {
                    (at - 4.0, "end")
                } else {
                    (at + 4.0, "start")
                };
                let _ = writeln!(
                    s,
                    "<line x1=\"{at:.1}\" y1=\"{TOP}\" x2=\"{at:.1}\" y2=\"{0:.1}\" class=\"mark\"/><text x=\"{lx:.1}\" y=\"{1:.1}\" class=\"mark-label\" text-anchor=\"{anchor}\">{2}</text>",
                    TOP + plot_h,
                    TOP + 14.0,
                    escape(&m.label)
                );
            }
        }
        let categorical = self.x_categories.is_some();
        let n = self.series.len() as f64;
        for (k, series) in self.series.iter().enumerate() {
            let (colour, dash) = Chart::style(k);
            // Dots of several series at one named tick side by side.
            let dodge = if categorical {
                (k as f64 - (n - 1.0) / 2.0) * 6.0
            } else {
                0.0
            };
            let drawn: Vec<(f64, f64)> = series
                .drawn()
                .into_iter()
                .map(|(a, b)| (px(a) + dodge, py(b)))
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .collect();
            let dash_attr = if dash.is_empty() {
                String::new()
            } else {
                format!(" stroke-dasharray=\"{dash}\"")
            };
            if series.has_line() {
                let mut points = String::new();
                for (a, b) in &drawn {
                    let _ = write!(points, "{a:.1},{b:.1} ");
                }
                let _ = writeln!(
                    s,
                    "<polyline class=\"series\" points=\"{}\" stroke=\"{colour}\"{dash_attr}><title>{}</title></polyline>",
                    points.trim_end(),
                    escape(&series.name)
                );
            }
            if series.has_dots() {
                let mut dots = String::new();
                for (a, b) in &drawn {
                    let _ = write!(dots, "<circle cx=\"{a:.1}\" cy=\"{b:.1}\" r=\"3.5\"/>");
                }
                let _ = writeln!(
                    s,
                    "<g class=\"series points\" fill=\"{colour}\"><title>{}</title>{dots}</g>",
                    escape(&series.name)
                );
            }
            let (row, col) = (k / columns, k % columns);
            let lx = left + col as f64 * (plot_w / columns as f64);
            let ly = HEIGHT + LEGEND_GAP + row as f64 * LEGEND_ROW;
            let swatch = if series.has_line() {
                format!(
                    "<line x1=\"{lx:.1}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"{colour}\" stroke-width=\"3\"{dash_attr}/>",
                    ly - 4.0,
                    lx + 16.0
                )
            } else {
                format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"/>",
                    lx + 8.0,
                    ly - 4.0
                )
            };
            let _ = writeln!(
                s,
                "{swatch}<text x=\"{:.1}\" y=\"{ly:.1}\" class=\"legend\">{}</text>",
                lx + 20.0,
                escape(&series.name)
            );
        }
        if self.series.iter().all(|s| s.points.is_empty()) {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"label\" text-anchor=\"middle\">no data</text>",
                left + plot_w / 2.0,
                TOP + plot_h / 2.0
            );
        }
        s.push_str("</svg>\n</figure>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_round_steps_within_the_range() {
        assert_eq!(ticks(0.0, 10.0), (vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0], 0));
        assert_eq!(
            ticks(0.0, 1.0),
            (vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0], 1)
        );
        let (t, d) = ticks(0.0, 1234.0);
        assert_eq!((t.first(), t.last(), d), (Some(&0.0), Some(&1200.0), 0));
        // A run of 1,022.8 s reads on an axis to 1,200 s, not 1,500.
        assert_eq!(range([0.0, 1022.8].into_iter(), true), (0.0, 1200.0));
        assert_eq!(range([3.0, 7.0].into_iter(), true), (0.0, 7.0));
        assert_eq!(range(std::iter::empty(), true), (0.0, 1.0));
        assert_eq!(range([5.0].into_iter(), false), (5.0, 10.0));
    }

    #[test]
    fn one_polyline_per_series_and_steps_for_a_cdf() {
        let c = Chart::cdf(
            "T <1>",
            "x (ms)",
            "y",
            vec![
                Series::cdf("a", vec![(1.0, 0.5), (2.0, 1.0)]),
                Series::line("b", vec![(0.0, 0.0), (2.0, 0.4)]),
            ],
        );
        let svg = c.render();
        assert_eq!(svg.matches("<polyline class=\"series\"").count(), 2);
        assert!(svg.contains("T &lt;1&gt;"));
        // The CDF: from 0 up to 0.5 at x = 1, to 1 at x = 2.
        let plot_h = HEIGHT - TOP - BOTTOM;
        let y = |v: f64| TOP + plot_h - v * plot_h;
        let x = |v: f64| LEFT + v / 2.0 * (WIDTH - LEFT - RIGHT);
        let expect = format!(
            "points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"",
            x(1.0),
            y(0.0),
            x(1.0),
            y(0.5),
            x(2.0),
            y(0.5),
            x(2.0),
            y(1.0)
        );
        assert!(svg.contains(&expect), "{svg}");
    }

    /// The text of each element of `class` in `svg`, in order.
    fn texts<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
        svg.split(&format!("class=\"{class}\""))
            .skip(1)
            .map(|rest| {
                let rest = &rest[rest.find('>').unwrap() + 1..];
                &rest[..rest.find("</text>").unwrap()]
            })
            .collect()
    }

    #[test]
    fn latencies_spanning_decades_are_drawn_by_decades_with_their_limit() {
        let p99 = vec![(1.0, 30.0), (50.0, 400.0), (80.0, 3_000_000.0)];
        let mut c = Chart::new(
            "TTFT",
            "rate (req/s)",
            "TTFT (ms)",
            vec![Series::line("p99", p99)],
        );
        c.y_scale = Scale::Auto;
        c.y_marks = vec![Mark {
            at: 500.0,
            label: "SLO".into(),
        }];
        c.x_marks = vec![Mark {
            at: 55.0,
            label: "holds".into(),
        }];
        let svg = c.render();
        assert_eq!(texts(&svg, "label y"), ["TTFT (ms), log scale"]);
        assert_eq!(
            texts(&svg, "tick y"),
            ["10", "100", "1000", "10000", "100000", "1000000", "10000000"]
        );
        assert_eq!(texts(&svg, "mark-label"), ["SLO", "holds"]);
        // Each decade the same height: 500 ms sits log10(50)/6 of the way up.
        let plot_h = HEIGHT - TOP - BOTTOM;
        let y500 = TOP + plot_h - 50f64.log10() / 6.0 * plot_h;
        assert!(svg.contains(&format!("y1=\"{y500:.1}\"")), "{svg}");
        // Room for the 8-character ticks beside the y label: the plot starts
        // past 34 px + 7 px a character.
        let left = 34.0 + CHAR_PX * 8.0;
        assert!(
            svg.contains(&format!("<rect x=\"{left}\" y=\"{TOP}\"")),
            "{svg}"
        );
        // Under two decades, or with a value at or below 0, the axis stays linear.
        for values in [
            vec![(0.0, 30.0), (1.0, 2999.0)],
            vec![(0.0, 0.0), (1.0, 3e6)],
        ] {
            let mut c = Chart::new("T", "x", "y", vec![Series::line("s", values)]);
            c.y_scale = Scale::Auto;
            assert_eq!(texts(&c.render(), "label y"), ["y"]);
        }
    }

    #[test]
    fn a_categorical_axis_is_ticked_by_its_names_and_whole_numbers_by_wholes() {
        let c = Chart {
            x_categories: Some(vec!["round_robin".into(), "kv".into()]),
            ..Chart::new(
                "T",
                "router.policy",
                "ms",
                vec![
                    Series::points("lowest", vec![(0.0, 1.0), (1.0, 2.0)]),
                    Series::points("highest", vec![(0.0, 3.0), (1.0, 4.0)]),
                ],
            )
        };
        let svg = c.render();
        assert_eq!(texts(&svg, "tick x"), ["round_robin", "kv"]);
        assert_eq!(svg.matches("<polyline").count(), 0, "no line joins names");
        assert_eq!(
            svg.matches("<circle cx").count(),
            4 + 2,
            "4 dots, 2 swatches"
        );
        let workers = Chart::new(
            "T",
            "workers",
            "ms",
            vec![Series::line_points("median", vec![(1.0, 1.0), (2.0, 2.0)])],
        );
        assert_eq!(texts(&workers.render(), "tick x"), ["0", "1", "2"]);
    }

    #[test]
    fn no_two_of_forty_series_look_alike() {
        let styles: std::collections::HashSet<_> = (0..40).map(Chart::style).collect();
        assert_eq!(styles.len(), 40);
        let c = Chart::new(
            "T",
            "x",
            "y",
            (0..18)
                .map(|k| Series::line(format!("s{k}"), vec![(0.0, k as f64)]))
                .collect(),
        );
        let svg = c.render();
        assert_eq!(
            svg.matches("stroke-dasharray=\"7 4\"").count(),
            2 * 8,
            "lines 11 to 18 and their swatches dashed"
        );
    }
}
