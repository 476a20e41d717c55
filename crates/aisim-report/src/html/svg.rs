//! Line charts as inline SVG: axes with units and ticks, one `<polyline
//! class="series">` per series, a legend. No script, no font, no URL: the
//! chart is drawn with what any browser has.

use std::fmt::Write;

use super::escape::escape;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 32.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 48.0;
const LEGEND_ROW: f64 = 18.0;

/// Colours of the series, in order (the Tableau 10 palette), repeated past ten.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// How a series joins its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Straight segments.
    Line,
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
            Shape::Line => self.points.clone(),
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
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    ((first..=last).map(|k| k as f64 * step).collect(), decimals)
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

impl Chart {
    /// A CDF chart: `unit` on x, the fraction `of` at or below on y, 0 to 1.
    pub fn cdf(title: &str, unit: &str, of: &str, series: Vec<Series>) -> Chart {
        Chart {
            title: title.to_string(),
            x_label: unit.to_string(),
            y_label: format!("fraction of {of} at or below"),
            series,
            y_range: Some((0.0, 1.0)),
        }
    }

    /// Legend entries a row holds: 4, fewer when the longest name would run
    /// into the next entry (about 7 px a character at the page's 12 px, the
    /// swatch and a gap beside it).
    fn legend_columns(&self) -> usize {
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let entry = 32.0 + 7.0 * longest as f64;
        ((WIDTH - LEFT - RIGHT) / entry).floor().clamp(1.0, 4.0) as usize
    }

    /// The chart as an SVG element (inside a `<figure>` with its title).
    pub fn render(&self) -> String {
        let columns = self.legend_columns();
        let legend_rows = self.series.len().div_ceil(columns) as f64;
        let height = HEIGHT + legend_rows * LEGEND_ROW;
        let (x0, x1) = range(
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0)),
            true,
        );
        let (y0, y1) = self.y_range.unwrap_or_else(|| {
            range(
                self.series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.1)),
                true,
            )
        });
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_w;
        let py = |y: f64| TOP + plot_h - (y - y0) / (y1 - y0) * plot_h;
        let mut s = String::new();
        let _ = write!(
            s,
            "<figure>\n<figcaption>{}</figcaption>\n<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">\n",
            escape(&self.title),
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_w}\" height=\"{plot_h}\" class=\"plot\"/>"
        );
        let (xt, xd) = ticks(x0, x1);
        for x in xt {
            let _ = writeln!(
                s,
                "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{1:.1}\" class=\"grid\"/><text x=\"{0:.1}\" y=\"{2:.1}\" class=\"tick\" text-anchor=\"middle\">{3:.xd$}</text>",
                px(x),
                TOP + plot_h,
                TOP + plot_h + 16.0,
                x
            );
        }
        let (yt, yd) = ticks(y0, y1);
        for y in yt {
            let _ = writeln!(
                s,
                "<line x1=\"{LEFT}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" class=\"grid\"/><text x=\"{2:.1}\" y=\"{3:.1}\" class=\"tick\" text-anchor=\"end\">{4:.yd$}</text>",
                py(y),
                LEFT + plot_w,
                LEFT - 6.0,
                py(y) + 4.0,
                y
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"label\" text-anchor=\"middle\">{}</text>",
            LEFT + plot_w / 2.0,
            TOP + plot_h + 36.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            "<text x=\"14\" y=\"{0:.1}\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1})\">{1}</text>",
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for (k, series) in self.series.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            let mut points = String::new();
            for (x, y) in series.drawn() {
                if x.is_finite() && y.is_finite() {
                    let _ = write!(points, "{:.1},{:.1} ", px(x), py(y));
                }
            }
            let _ = writeln!(
                s,
                "<polyline class=\"series\" points=\"{}\" stroke=\"{colour}\"><title>{}</title></polyline>",
                points.trim_end(),
                escape(&series.name)
            );
            let (row, col) = (k / columns, k % columns);
            let lx = LEFT + col as f64 * (plot_w / columns as f64);
            let ly = HEIGHT + row as f64 * LEGEND_ROW;
            let _ = writeln!(
                s,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"14\" height=\"4\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{ly:.1}\" class=\"legend\">{}</text>",
                ly - 6.0,
                lx + 20.0,
                escape(&series.name)
            );
        }
        if self.series.iter().all(|s| s.points.is_empty()) {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"label\" text-anchor=\"middle\">no data</text>",
                LEFT + plot_w / 2.0,
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
        let c = Chart {
            title: "T <1>".into(),
            x_label: "x (ms)".into(),
            y_label: "y".into(),
            series: vec![
                Series::cdf("a", vec![(1.0, 0.5), (2.0, 1.0)]),
                Series::line("b", vec![(0.0, 0.0), (2.0, 0.4)]),
            ],
            y_range: Some((0.0, 1.0)),
        };
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
}
