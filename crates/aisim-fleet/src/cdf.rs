//! Length distributions as CDFs of total tokens (input + output) per request,
//! and, for a trace, its requests' joint input and output lengths.

use std::path::Path;
use std::sync::Arc;

use aisim_replay::workload::random::uniform_int;
use aisim_replay::workload::synthetic::{sample_cdf_total, split_total};
use rand_pcg::Pcg64;

use serde::{Deserialize, Serialize};

use crate::error::FleetError;

/// Points `(t, F)`: a fraction `F` of requests have at most `t` total tokens.
/// The first interval starts at `(0, 0)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cdf {
    /// Name (built-in key, file or `trace:FILE`).
    pub name: String,
    /// Strictly increasing `t`, non-decreasing `F` in [0, 1], last `F` = 1.
    pub points: Vec<(u64, f64)>,
    /// A trace's requests as `(input, output)` tokens (each at least 1),
    /// sorted by total: when present they, not the points and the 80/20
    /// split, are the workload (`F` is their exact empirical CDF).
    #[serde(skip)]
    pub pairs: Option<Arc<[(u32, u32)]>>,
}

/// Where a workload's input and output lengths come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthSource {
    /// A trace's own `(input, output)` pairs.
    TracePairs,
    /// A total-length CDF split 80 % input / 20 % output (the reference's rule).
    Split80_20,
}

impl LengthSource {
    /// What it means, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            LengthSource::TracePairs => "each request's input and output lengths from the trace",
            LengthSource::Split80_20 => {
                "total lengths from the CDF, split 80 % input / 20 % output"
            }
        }
    }
}

/// Total tokens of a pair.
fn total(p: &(u32, u32)) -> u64 {
    p.0 as u64 + p.1 as u64
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CdfFile {
    Points(Vec<(f64, f64)>),
    Object { cdf: Vec<(f64, f64)> },
}

#[derive(Deserialize)]
struct BuiltinFile {
    workloads: std::collections::BTreeMap<String, BuiltinCdf>,
}

#[derive(Deserialize)]
struct BuiltinCdf {
    description: String,
    points: Vec<(f64, f64)>,
}

/// A built-in workload as listed by `aisim profiles`.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    /// Key.
    pub name: String,
    /// Where it comes from.
    pub description: String,
    /// Mean total tokens (interval midpoints).
    pub mean_tokens: f64,
    /// Smallest breakpoint with F ≥ 0.5.
    pub p50_tokens: u64,
    /// Smallest breakpoint with F ≥ 0.99.
    pub p99_tokens: u64,
}

/// Every built-in CDF with a few derived numbers.
pub fn builtin_summaries() -> Vec<WorkloadSummary> {
    builtin_names()
        .into_iter()
        .filter_map(|(name, description)| {
            let c = Cdf::builtin(&name)?;
            let at = |q: f64| {
                c.points
                    .iter()
                    .find(|p| p.1 >= q)
                    .map_or(c.max_len(), |p| p.0)
            };
            Some(WorkloadSummary {
                mean_tokens: c.mean_mid(),
                p50_tokens: at(0.5),
                p99_tokens: at(0.99),
                name,
                description,
            })
        })
        .collect()
}

/// Names and descriptions of the built-in CDFs.
pub fn builtin_names() -> Vec<(String, String)> {
    builtin_file()
        .workloads
        .iter()
        .map(|(k, v)| (k.clone(), v.description.clone()))
        .collect()
}

/// The embedded CDFs, parsed once.
fn builtin_file() -> &'static BuiltinFile {
    static CELL: std::sync::OnceLock<BuiltinFile> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        serde_json::from_str(include_str!("../data/workload_cdfs.json"))
            .expect("embedded CDFs are valid")
    })
}

impl Cdf {
    /// Validates raw points.
    pub fn new(name: impl Into<String>, raw: &[(f64, f64)]) -> Result<Cdf, FleetError> {
        let name = name.into();
        let bad = |index: usize, reason: String| FleetError::BadCdf {
            source_name: name.clone(),
            index,
            reason,
        };
        if raw.is_empty() {
            return Err(bad(0, "a CDF needs at least one point".into()));
        }
        let mut points = Vec::with_capacity(raw.len());
        for (i, &(t, f)) in raw.iter().enumerate() {
            if !(t.is_finite() && t >= 1.0 && t.fract() == 0.0) {
                return Err(bad(
                    i,
                    format!("length {t} is not a whole number of tokens ≥ 1"),
                ));
            }
            if !(0.0..=1.0).contains(&f) || f.is_nan() {
                return Err(bad(i, format!("F = {f} is outside [0, 1]")));
            }
            if let Some(&(pt, pf)) = points.last() {
                if t as u64 <= pt {
                    return Err(bad(i, format!("length {t} is not above the previous {pt}: points must be sorted by length")));
                }
                if f < pf {
                    return Err(bad(
                        i,
                        format!("F = {f} decreases (previous {pf}): a CDF never decreases"),
                    ));
                }
            }
            points.push((t as u64, f));
        }
        let last = points.last().expect("non-empty").1;
        if (last - 1.0).abs() > 1e-9 {
            return Err(bad(
                points.len() - 1,
                format!("the last F is {last}, it must be 1"),
            ));
        }
        Ok(Cdf {
            name,
            points,
            pairs: None,
        })
    }

    /// A built-in CDF (`azure`, `lmsys`, `agent_heavy`).
    pub fn builtin(key: &str) -> Option<Cdf> {
        let f = builtin_file();
        let w = f.workloads.get(key)?;
        Some(Cdf::new(key, &w.points).expect("built-in CDFs are valid"))
    }

    /// A CDF file: a list of `[t, F]` points or an object with `cdf`.
    pub fn from_file(path: &Path) -> Result<Cdf, FleetError> {
        let text =
            aisim_core::text_file::read_text_file(path).map_err(aisim_core::CoreError::from)?;
        let parsed: CdfFile = serde_json::from_str(&text).map_err(|e| FleetError::File {
            path: path.into(),
            reason: format!(
                "{}; expected a list of [tokens, F] points or {{\"cdf\": [...]}}",
                aisim_core::text_file::json_error_text(&e)
            ),
        })?;
        let raw = match parsed {
            CdfFile::Points(p) | CdfFile::Object { cdf: p } => p,
        };
        Cdf::new(path.display().to_string(), &raw)
    }

    /// The workload of a trace any replay reader understands: its requests'
    /// `(input, output)` pairs (each at least 1 token), and 50 quantile points
    /// of their totals (the last at F = 1) for summaries.
    pub fn from_trace(path: &Path) -> Result<Cdf, FleetError> {
        let trace = aisim_replay::trace::read_trace(path, None, None)?;
        let pairs: Vec<(u32, u32)> = trace
            .records
            .iter()
            .map(|r| (r.input_length.max(1), r.output_length.max(1)))
            .collect();
        Cdf::from_pairs(format!("trace:{}", path.display()), pairs)
    }

    /// A workload of `(input, output)` pairs (an error when there are none).
    pub fn from_pairs(name: String, mut pairs: Vec<(u32, u32)>) -> Result<Cdf, FleetError> {
        if pairs.is_empty() {
            return Err(FleetError::BadCdf {
                source_name: name,
                index: 0,
                reason: "the trace has no requests".into(),
            });
        }
        pairs.sort_unstable_by_key(|p| (total(p), p.0));
        let n = pairs.len();
        let mut raw: Vec<(f64, f64)> = Vec::new();
        for q in 1..=50 {
            let f = q as f64 / 50.0;
            let idx = ((f * n as f64).ceil() as usize).clamp(1, n) - 1;
            let t = total(&pairs[idx]) as f64;
            match raw.last_mut() {
                Some(last) if last.0 >= t => last.1 = f,
                _ => raw.push((t, f)),
            }
        }
        let mut cdf = Cdf::new(name, &raw)?;
        cdf.pairs = Some(pairs.into());
        Ok(cdf)
    }

    /// Where the lengths come from.
    pub fn length_source(&self) -> LengthSource {
        if self.pairs.is_some() {
            LengthSource::TracePairs
        } else {
            LengthSource::Split80_20
        }
    }

    /// The pairs with a total in `lo ..= hi` (sorted by total, so a slice).
    fn pairs_between(&self, lo: u64, hi: u64) -> Option<&[(u32, u32)]> {
        let pairs = self.pairs.as_deref()?;
        let a = pairs.partition_point(|p| total(p) < lo);
        let b = pairs.partition_point(|p| total(p) <= hi);
        Some(&pairs[a..b.max(a)])
    }

    /// A request's `(input, output)` tokens with a total clamped to
    /// `lo ..= hi` as calibration does: a pair drawn uniformly among the
    /// trace's pairs in that range (the nearest to it when none lies there),
    /// or a total from the points split 80/20.
    pub fn sample_lengths(&self, lo: u64, hi: u64, rng: &mut Pcg64) -> (u32, u32) {
        match self.pairs_between(lo, hi) {
            Some(within) if !within.is_empty() => {
                within[uniform_int(rng, 0, within.len() as u64 - 1) as usize]
            }
            Some(_) => {
                let pairs = self.pairs.as_deref().expect("pairs");
                let i = pairs
                    .partition_point(|p| total(p) < lo)
                    .min(pairs.len() - 1);
                pairs[i]
            }
            None => split_total(sample_cdf_total(&self.points, lo, hi, rng)),
        }
    }

    /// Mean input and output tokens: the pairs' own, or 80/20 of the mean
    /// total (interval midpoints).
    pub fn mean_lengths(&self) -> (f64, f64) {
        match self.pairs.as_deref() {
            Some(pairs) => {
                let n = pairs.len() as f64;
                let (i, o) = pairs
                    .iter()
                    .fold((0.0, 0.0), |(i, o), p| (i + p.0 as f64, o + p.1 as f64));
                (i / n, o / n)
            }
            None => {
                let m = self.mean_mid();
                (0.8 * m, 0.2 * m)
            }
        }
    }

    /// The share of requests whose total exceeds `max`.
    pub fn share_above(&self, max: u64) -> f64 {
        1.0 - self.eval(max as f64)
    }

    /// Requests of a trace whose total exceeds `max`; `None` for a CDF.
    pub fn count_above(&self, max: u64) -> Option<u64> {
        let pairs = self.pairs.as_deref()?;
        Some((pairs.len() - pairs.partition_point(|p| total(p) <= max)) as u64)
    }

    /// The workload up to `max` total tokens, renormalized (a point is added
    /// at `max` where it falls inside an interval); itself when nothing lies
    /// above, `None` when nothing lies at or below.
    pub fn up_to(&self, max: u64) -> Option<Cdf> {
        if self.share_above(max) <= 0.0 {
            return Some(self.clone());
        }
        if let Some(within) = self.pairs_between(0, max) {
            let name = format!("{}[≤{max}]", self.name);
            return Cdf::from_pairs(name, within.to_vec()).ok();
        }
        let top = self.eval(max as f64);
        if top <= 0.0 {
            return None;
        }
        let mut points: Vec<(u64, f64)> = self
            .points
            .iter()
            .filter(|p| p.0 < max)
            .map(|&(t, f)| (t, f / top))
            .collect();
        points.push((max, 1.0));
        Some(Cdf {
            name: format!("{}[≤{max}]", self.name),
            points,
            pairs: None,
        })
    }

    /// Resolves `NAME`, `FILE` or `trace:FILE`.
    pub fn resolve(spec: &str) -> Result<Cdf, FleetError> {
        if let Some(path) = spec.strip_prefix("trace:") {
            return Cdf::from_trace(Path::new(path));
        }
        if let Some(c) = Cdf::builtin(spec) {
            return Ok(c);
        }
        let p = Path::new(spec);
        if p.exists() {
            return Cdf::from_file(p);
        }
        let names: Vec<String> = builtin_names().into_iter().map(|(k, _)| k).collect();
        Err(FleetError::invalid(
            "--cdf",
            spec,
            format!(
                "not a built-in CDF ({}), a file, or trace:FILE",
                names.join(", ")
            ),
        ))
    }

    /// `F(t)`: 0 for t ≤ 0, linear from (0, 0) through the points, 1 past the end.
    /// For a trace, the exact share of its pairs with a total of at most `t`.
    pub fn eval(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        if let Some(pairs) = self.pairs.as_deref() {
            let below = pairs.partition_point(|p| (total(p) as f64) <= t);
            return below as f64 / pairs.len() as f64;
        }
        let (mut pt, mut pf) = (0.0, 0.0);
        for &(x, f) in &self.points {
            let x = x as f64;
            if t <= x {
                return pf + (f - pf) * (t - pt) / (x - pt);
            }
            pt = x;
            pf = f;
        }
        1.0
    }

    /// Largest length.
    pub fn max_len(&self) -> u64 {
        self.points.last().map_or(1, |p| p.0)
    }

    /// The part at or below `b`: the points with `t ≤ b`, renormalized by the
    /// last of their F values. `None` when no point lies at or below `b` or
    /// they carry no probability.
    pub fn short_part(&self, b: u64) -> Option<Cdf> {
        if let Some(within) = self.pairs_between(0, b) {
            return Cdf::from_pairs(format!("{}[≤{b}]", self.name), within.to_vec()).ok();
        }
        let pts: Vec<(u64, f64)> = self.points.iter().copied().filter(|p| p.0 <= b).collect();
        let top = pts.last()?.1;
        if top <= 0.0 {
            return None;
        }
        Some(Cdf {
            name: format!("{}[≤{b}]", self.name),
            points: pts.into_iter().map(|(t, f)| (t, f / top)).collect(),
            pairs: None,
        })
    }

    /// The part above `cut`: the points with `t > cut`, `F' = (F − F(cut)) / (1 − F(cut))`
    /// clipped to [0, 1], the last forced to 1. `None` when nothing lies above.
    pub fn long_part(&self, cut: f64) -> Option<Cdf> {
        if let Some(pairs) = self.pairs.as_deref() {
            let from = pairs.partition_point(|p| (total(p) as f64) <= cut);
            let name = format!("{}[>{cut}]", self.name);
            return Cdf::from_pairs(name, pairs[from..].to_vec()).ok();
        }
        let base = self.eval(cut);
        if base >= 1.0 {
            return None;
        }
        let mut pts: Vec<(u64, f64)> = self
            .points
            .iter()
            .filter(|p| p.0 as f64 > cut)
            .map(|&(t, f)| (t, ((f - base) / (1.0 - base)).clamp(0.0, 1.0)))
            .collect();
        pts.last_mut()?.1 = 1.0;
        Some(Cdf {
            name: format!("{}[>{cut}]", self.name),
            points: pts,
            pairs: None,
        })
    }

    /// Mean total length using each interval's upper edge.
    pub fn mean_upper(&self) -> f64 {
        let mut prev = 0.0;
        self.points
            .iter()
            .map(|&(t, f)| {
                let m = (f - prev) * t as f64;
                prev = f;
                m
            })
            .sum()
    }

    /// Mean total length using each interval's midpoint.
    pub fn mean_mid(&self) -> f64 {
        let (mut prev_t, mut prev_f) = (0.0, 0.0);
        self.points
            .iter()
            .map(|&(t, f)| {
                let m = (f - prev_f) * (prev_t + t as f64) / 2.0;
                prev_t = t as f64;
                prev_f = f;
                m
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_check_values() {
        let azure = Cdf::builtin("azure").unwrap();
        assert!((azure.eval(4096.0) - 0.898208).abs() < 5e-7);
        assert!((azure.eval(6144.0) - 0.975803).abs() < 5e-7);
        assert_eq!(azure.eval(0.0), 0.0);
        assert_eq!(azure.eval(1e9), 1.0);
        assert!((azure.eval(32.0) - 0.00837324818165691 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn bad_cdfs_are_rejected() {
        assert!(Cdf::new("x", &[(10.0, 0.5), (5.0, 1.0)])
            .unwrap_err()
            .to_string()
            .contains("sorted"));
        assert!(Cdf::new("x", &[(10.0, 0.7), (20.0, 0.5), (30.0, 1.0)])
            .unwrap_err()
            .to_string()
            .contains("decreases"));
        assert!(Cdf::new("x", &[(10.0, 1.5)])
            .unwrap_err()
            .to_string()
            .contains("outside [0, 1]"));
        assert!(Cdf::new("x", &[(10.0, -0.1), (20.0, 1.0)]).is_err());
        assert!(Cdf::new("x", &[(10.0, 0.5)])
            .unwrap_err()
            .to_string()
            .contains("must be 1"));
        assert!(Cdf::resolve("nonesuch")
            .unwrap_err()
            .to_string()
            .contains("azure"));
    }

    #[test]
    fn splitting() {
        let azure = Cdf::builtin("azure").unwrap();
        let s = azure.short_part(4096).unwrap();
        assert_eq!(s.points.last(), Some(&(4096, 1.0)));
        let l = azure.long_part(4096.0).unwrap();
        assert_eq!(l.points[0].0, 6144);
        assert_eq!(l.points.last().unwrap().1, 1.0);
        assert!(l.points.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
