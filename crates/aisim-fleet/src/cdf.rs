//! Length distributions as CDFs of total tokens (input + output) per request.

use std::path::Path;

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
        Ok(Cdf { name, points })
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

    /// The total-token CDF of a trace any replay reader understands: 50
    /// quantile points, the last at F = 1.
    pub fn from_trace(path: &Path) -> Result<Cdf, FleetError> {
        let trace = aisim_replay::trace::read_trace(path, None, None)?;
        let mut totals: Vec<u64> = trace
            .records
            .iter()
            .map(|r| (r.input_length as u64 + r.output_length as u64).max(1))
            .collect();
        totals.sort_unstable();
        let n = totals.len();
        let mut raw: Vec<(f64, f64)> = Vec::new();
        for q in 1..=50 {
            let f = q as f64 / 50.0;
            let idx = ((f * n as f64).ceil() as usize).clamp(1, n) - 1;
            let t = totals[idx] as f64;
            match raw.last_mut() {
                Some(last) if last.0 >= t => last.1 = f,
                _ => raw.push((t, f)),
            }
        }
        Cdf::new(format!("trace:{}", path.display()), &raw)
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
    pub fn eval(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
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
        let pts: Vec<(u64, f64)> = self.points.iter().copied().filter(|p| p.0 <= b).collect();
        let top = pts.last()?.1;
        if top <= 0.0 {
            return None;
        }
        Some(Cdf {
            name: format!("{}[≤{b}]", self.name),
            points: pts.into_iter().map(|(t, f)| (t, f / top)).collect(),
        })
    }

    /// The part above `cut`: the points with `t > cut`, `F' = (F − F(cut)) / (1 − F(cut))`
    /// clipped to [0, 1], the last forced to 1. `None` when nothing lies above.
    pub fn long_part(&self, cut: f64) -> Option<Cdf> {
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
