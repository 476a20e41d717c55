//! `aisim compare`: two replay reports side by side: the fields of their
//! specs that differ, and every figure with its absolute and relative
//! delta. Both are found by walking the JSON (the specs field by field, the
//! reports' numbers), so a spec field or a metric added later is compared
//! without being listed here. `aisim-report` renders the comparison.

use std::path::{Path, PathBuf};

use aisim_core::text_file::{json_error_text, read_text_file};
use aisim_replay::{ReplayReport, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jobs::{JobError, Version};

/// Sections that are not results of the run: the machine's timing, the spec
/// (its differences become warnings), the per-worker detail and the run's
/// bins over time (the HTML report's charts, not figures).
const NOT_COMPARED: [&str; 5] = ["host", "spec", "workers", "schema_version", "time_series"];

/// Parts of the spec and report that define the measurement discipline.
const DISCIPLINE: [&str; 5] = [
    "spec.discipline",
    "spec.dispatch",
    "spec.admission",
    "spec.sla",
    "discipline.loop",
];

/// Parts that define the workload.
const WORKLOAD: [&str; 2] = ["spec.workload", "workload.source"];

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Schema version of this comparison.
    pub schema_version: u32,
    /// The first run (as named on the command line).
    pub a: String,
    /// The second run.
    pub b: String,
    /// Every field of the two specs that differs, by dotted path, sorted
    /// by path: what was changed between the runs.
    #[serde(default)]
    pub spec_differences: Vec<SpecDifference>,
    /// Differences that make the deltas less than like for like.
    pub warnings: Vec<String>,
    /// Every figure, sorted by its path.
    pub metrics: Vec<MetricDelta>,
}

/// A field of the spec that differs between the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecDifference {
    /// Its dotted path in the spec (`topology.workers`, `router.policy`;
    /// an array's elements by position: `pools.0.workers`).
    pub field: String,
    /// Its value in run A (`null`: absent, or null, in that spec).
    pub a: Value,
    /// Its value in run B.
    pub b: Value,
}

/// The leaves on which `a` and `b` differ, by dotted path under `path`:
/// two objects key by key (an absent key is `null`), two arrays of the same
/// length element by element, anything else as a whole (an object against
/// `null`: the part of the spec one run has and the other has not).
fn value_differences(a: &Value, b: &Value, path: &str, out: &mut Vec<SpecDifference>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    if let (Value::Array(xs), Value::Array(ys)) = (a, b) {
        if xs.len() == ys.len() {
            for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                value_differences(x, y, &join(&i.to_string()), out);
            }
            return;
        }
    }
    if let (Value::Object(ma), Value::Object(mb)) = (a, b) {
        let mut keys: Vec<&String> = ma.keys().chain(mb.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let (x, y) = (
                ma.get(key).unwrap_or(&Value::Null),
                mb.get(key).unwrap_or(&Value::Null),
            );
            value_differences(x, y, &join(key), out);
        }
    } else if a != b {
        out.push(SpecDifference {
            field: path.to_string(),
            a: a.clone(),
            b: b.clone(),
        });
    }
}

/// The fields of the specs `a` and `b` (as JSON) that differ.
pub fn spec_differences(a: &Value, b: &Value) -> Vec<SpecDifference> {
    let mut out = Vec::new();
    value_differences(a, b, "", &mut out);
    out
}

/// One figure of both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDelta {
    /// Its place in the report, as a dotted path (`latency.ttft_ms.p99`;
    /// pools by name: `pools.workers.gpus`).
    pub metric: String,
    /// In run A (`null`: none, e.g. a percentile of unfinished requests).
    pub a: Option<f64>,
    /// In run B.
    pub b: Option<f64>,
    /// B − A.
    pub delta: Option<f64>,
    /// (B − A) / |A| × 100 (`null` when A is 0 and B is not).
    pub delta_pct: Option<f64>,
}

impl MetricDelta {
    fn new(metric: String, a: Option<f64>, b: Option<f64>) -> MetricDelta {
        let delta = a.zip(b).map(|(a, b)| b - a);
        let delta_pct = a.zip(delta).and_then(|(a, d)| {
            if d == 0.0 {
                Some(0.0)
            } else if a == 0.0 {
                None // from nothing: no relative change
            } else {
                Some(d / a.abs() * 100.0)
            }
        });
        MetricDelta {
            metric,
            a,
            b,
            delta,
            delta_pct,
        }
    }
}

/// Scalar leaves under `v`, by dotted path, sorted by path within each
/// object (serde_json's maps are sorted). Arrays of objects are keyed by the
/// element's `pool` name (or its position); arrays of scalars are skipped
/// (lists of names, not figures).
fn leaves<'v>(v: &'v Value, path: &str, out: &mut Vec<(String, &'v Value)>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                leaves(value, &join(key), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Value::Object(o) = item {
                    let key = o
                        .get("pool")
                        .and_then(Value::as_str)
                        .map_or_else(|| i.to_string(), String::from);
                    leaves(item, &join(&key), out);
                }
            }
        }
        scalar => out.push((path.to_string(), scalar)),
    }
}

/// The report's figures: its numeric leaves outside `NOT_COMPARED`, a `null`
/// leaf being a figure without a value (a percentile of unfinished requests).
fn figures(report: &Value) -> Vec<(String, Option<f64>)> {
    let mut all = Vec::new();
    if let Value::Object(map) = report {
        for (key, value) in map
            .iter()
            .filter(|(k, _)| !NOT_COMPARED.contains(&k.as_str()))
        {
            leaves(value, key, &mut all);
        }
    }
    all.into_iter()
        .filter_map(|(path, v)| match v {
            Value::Number(n) => Some((path, n.as_f64())),
            Value::Null => Some((path, None)),
            _ => None,
        })
        .collect()
}

fn at<'v>(v: &'v Value, dotted: &str) -> &'v Value {
    dotted
        .split('.')
        .fold(v, |v, key| v.get(key).unwrap_or(&Value::Null))
}

/// The leaves under `paths` on which the runs differ, each with both values.
fn differences(a: &Value, b: &Value, paths: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        leaves(at(a, p), p, &mut la);
        leaves(at(b, p), p, &mut lb);
        let value_in = |l: &[(String, &Value)], key: &str| {
            l.iter()
                .find(|(k, _)| k == key)
                .map_or_else(|| "absent".to_string(), |(_, v)| v.to_string())
        };
        let mut keys: Vec<&String> = la.iter().chain(&lb).map(|(k, _)| k).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let (x, y) = (value_in(&la, key), value_in(&lb, key));
            if x != y {
                out.push(format!("{key} {x} vs {y}"));
            }
        }
    }
    out
}

/// Compares run `a` (named `a_name`) with run `b`.
pub fn compare(a: &ReplayReport, a_name: &str, b: &ReplayReport, b_name: &str) -> Comparison {
    let (va, vb) = (
        serde_json::to_value(a).expect("reports serialize"),
        serde_json::to_value(b).expect("reports serialize"),
    );
    let mut warnings = Vec::new();
    for (what, paths) in [
        ("disciplines", &DISCIPLINE[..]),
        ("workloads", &WORKLOAD[..]),
    ] {
        let differ = differences(&va, &vb, paths);
        if !differ.is_empty() {
            warnings.push(format!(
                "the {what} differ, so the deltas are not like for like: {}",
                differ.join("; ")
            ));
        }
    }
    let (fa, fb) = (figures(&va), figures(&vb));
    let mut metrics: Vec<MetricDelta> = fa
        .iter()
        .map(|(name, x)| {
            let y = fb.iter().find(|(n, _)| n == name).and_then(|(_, y)| *y);
            MetricDelta::new(name.clone(), *x, y)
        })
        .collect();
    // Figures only B has (a pool A lacks) come after A's.
    for (name, y) in &fb {
        if !fa.iter().any(|(n, _)| n == name) {
            metrics.push(MetricDelta::new(name.clone(), None, *y));
        }
    }
    Comparison {
        schema_version: aisim_replay::SCHEMA_VERSION,
        a: a_name.to_string(),
        b: b_name.to_string(),
        spec_differences: spec_differences(&va["spec"], &vb["spec"]),
        warnings,
        metrics,
    }
}

/// `aisim compare A.json B.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The first run's JSON report (`aisim replay --out A.json`).
    pub a: PathBuf,
    /// The second run's JSON report.
    pub b: PathBuf,
}

/// The comparison (the job's report) and the two reports it read (which
/// the HTML page draws).
#[derive(Debug, Clone)]
pub struct Compared {
    /// The comparison.
    pub comparison: Comparison,
    /// Run A's report.
    pub a: ReplayReport,
    /// Run B's report.
    pub b: ReplayReport,
}

/// Runs `aisim compare`: reads both reports (refusing any other file by
/// name) and compares them.
pub fn compare_files(r: &CompareRequest) -> Result<Compared, JobError> {
    let a = read_report(&r.a)?;
    let b = read_report(&r.b)?;
    let comparison = compare(
        &a,
        &r.a.display().to_string(),
        &b,
        &r.b.display().to_string(),
    );
    Ok(Compared { comparison, a, b })
}

/// Reads a replay report, refusing any other file by name.
fn read_report(path: &Path) -> Result<ReplayReport, JobError> {
    let text = read_text_file(path)?;
    let not_a_report = |why: String| {
        JobError::msg(format!(
            "{}: not an aisim replay report (the JSON `aisim replay --out FILE` writes): {why}",
            path.display()
        ))
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| not_a_report(json_error_text(&e)))?;
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v == SCHEMA_VERSION as u64 => {}
        Some(v) => {
            return Err(not_a_report(format!(
                "report schema version {v}; this aisim reads version {SCHEMA_VERSION}"
            )))
        }
        None => return Err(not_a_report("no `schema_version`".into())),
    }
    serde_json::from_value(value).map_err(|e| not_a_report(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(a: Value, b: Value) -> Vec<(String, Value, Value)> {
        spec_differences(&a, &b)
            .into_iter()
            .map(|d| (d.field, d.a, d.b))
            .collect()
    }

    #[test]
    fn specs_differ_field_by_field() {
        let a = json!({"seed": 1, "router": {"policy": "kv", "temperature": 0.0},
                       "topology": {"kind": "aggregated", "workers": 2}, "sla": {}, "list": [1, 2]});
        let b = json!({"seed": 1, "router": {"policy": "round_robin", "temperature": 0.0},
                       "topology": {"kind": "aggregated", "workers": 4},
                       "sla": {"ttft_ms": 500.0}, "list": [1, 3], "extra": null});
        assert_eq!(
            fields(a.clone(), b),
            [
                ("list.1".into(), json!(2), json!(3)),
                ("router.policy".into(), json!("kv"), json!("round_robin")),
                ("sla.ttft_ms".into(), Value::Null, json!(500.0)),
                ("topology.workers".into(), json!(2), json!(4)),
            ]
        );
        assert_eq!(fields(a.clone(), a), []);
        // An object against nothing: as a whole.
        assert_eq!(
            fields(
                json!({"t": {"kind": "x"}}),
                json!({"t": {"kind": "y", "p": {"q": 1}}})
            ),
            [
                ("t.kind".into(), json!("x"), json!("y")),
                ("t.p".into(), Value::Null, json!({"q": 1})),
            ]
        );
        // Arrays of different lengths, and a value against an object, as wholes.
        assert_eq!(
            fields(
                json!({"l": [1], "o": 3}),
                json!({"l": [1, 2], "o": {"k": 1}})
            ),
            [
                ("l".into(), json!([1]), json!([1, 2])),
                ("o".into(), json!(3), json!({"k": 1})),
            ]
        );
    }
}
