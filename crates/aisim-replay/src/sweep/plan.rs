//! A plan: the grid's cross product, one JSON line per run with its id, its
//! axis values and its full spec, checked before anything runs, and a
//! digest of the whole that every line and every result carries.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grid::{Grid, Ordered};
use super::preflight::Preflight;
use super::SweepError;
use crate::{ReplayError, ReplaySpec};

/// One run of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanLine {
    /// Its 0-based index, zero-padded to the width of the last one.
    pub id: String,
    /// Its 0-based index (what `--shard I/N` counts).
    pub index: u64,
    /// Runs in the plan.
    pub runs: u64,
    /// The plan's digest.
    pub plan: String,
    /// Each axis's value in this run, in the grid's order.
    pub axes: Ordered,
    /// The spec it replays.
    pub spec: ReplaySpec,
}

/// Every run of a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The runs, by index.
    pub lines: Vec<PlanLine>,
}

impl Plan {
    /// The plan's digest (every line carries it).
    pub fn digest(&self) -> &str {
        self.lines.first().map_or("", |l| l.plan.as_str())
    }

    /// The plan file's text: one JSON line per run.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(&serde_json::to_string(line).expect("plans serialize"));
            out.push('\n');
        }
        out
    }

    /// Expands `grid` over `base` (the grid's own base, or the spec its
    /// `base_args` describe): the cross product of the axes, the first
    /// varying slowest, less the excluded combinations; every run's spec
    /// checked as a replay would check it (fields, ranges, the timing
    /// model, the engines, the trace read once per file).
    pub fn expand(grid: &Grid, base: &ReplaySpec) -> Result<Plan, SweepError> {
        let total = grid.product_size()?;
        let base_json = serde_json::to_value(base).expect("specs serialize");
        let mut preflight = Preflight::default();
        // Each value alone first, so a refused value is named by its axis
        // and not by the first combination that holds it.
        for axis in &grid.axes {
            for v in &axis.values {
                let values = Ordered(vec![(axis.field.clone(), v.clone())]);
                let spec = apply(&base_json, &values, grid.folder())
                    .and_then(|s| preflight.check(&s).map(|()| s));
                spec.map_err(|source| SweepError::Axis {
                    grid: grid.path.clone(),
                    axis: axis.field.clone(),
                    value: v.to_string(),
                    source,
                })?;
            }
        }
        let mut runs: Vec<(Ordered, ReplaySpec)> = Vec::new();
        for k in 0..total {
            let values = values_at(grid, k);
            if grid.exclude.iter().any(|e| excludes(e, &values)) {
                continue;
            }
            let spec = apply(&base_json, &values, grid.folder())
                .and_then(|s| preflight.check(&s).map(|()| s))
                .map_err(|source| SweepError::Run {
                    grid: grid.path.clone(),
                    id: format!("{}", runs.len()),
                    axes: shown(&values),
                    source,
                })?;
            runs.push((values, spec));
        }
        if runs.is_empty() {
            return Err(SweepError::file(&grid.path, "`exclude` leaves no run"));
        }
        Ok(Plan::of(runs))
    }

    /// Numbers the runs and seals them with their digest.
    fn of(runs: Vec<(Ordered, ReplaySpec)>) -> Plan {
        let n = runs.len() as u64;
        let width = (n - 1).to_string().len();
        let mut lines: Vec<PlanLine> = runs
            .into_iter()
            .enumerate()
            .map(|(i, (axes, spec))| PlanLine {
                id: format!("{i:0width$}"),
                index: i as u64,
                runs: n,
                plan: String::new(),
                axes,
                spec,
            })
            .collect();
        let digest = digest_of(&lines);
        for l in &mut lines {
            l.plan.clone_from(&digest);
        }
        Plan { lines }
    }

    /// Reads a plan file written by [`Plan::to_jsonl`], refusing one whose
    /// lines were edited, reordered, dropped or mixed from several plans.
    pub fn read(path: &Path) -> Result<Plan, SweepError> {
        let text = aisim_core::text_file::read_text_file(path).map_err(|e| {
            SweepError::file(
                path,
                e.to_string().replace(&format!("{}: ", path.display()), ""),
            )
        })?;
        let mut lines = Vec::new();
        for (i, row) in text.lines().enumerate() {
            let at = |reason: String| SweepError::file(path, format!("line {}: {reason}", i + 1));
            if row.trim().is_empty() {
                return Err(at("empty line: a plan has one run per line".into()));
            }
            let line: PlanLine = serde_json::from_str(row).map_err(|e| {
                at(format!(
                    "not a line of `aisim sweep plan`: column {}: {e}",
                    e.column()
                ))
            })?;
            let first = lines.first().unwrap_or(&line);
            let (n, plan) = (first.runs, first.plan.clone());
            let width = n.saturating_sub(1).to_string().len();
            let want = format!("{i:0width$}");
            if line.index != i as u64 || line.id != want || line.runs != n || line.plan != plan {
                return Err(at(format!(
                    "run {} (index {}) of plan {} with {} runs, where run {want} of plan {plan} with {n} runs belongs: the plan file was edited or put together from several",
                    line.id, line.index, line.plan, line.runs
                )));
            }
            lines.push(line);
        }
        let Some(first) = lines.first() else {
            return Err(SweepError::file(
                path,
                "no runs: not a plan of `aisim sweep plan`",
            ));
        };
        if first.runs != lines.len() as u64 {
            return Err(SweepError::file(
                path,
                format!(
                    "{} runs where the plan has {}: lines are missing",
                    lines.len(),
                    first.runs
                ),
            ));
        }
        let digest = digest_of(&lines);
        if digest != first.plan {
            return Err(SweepError::file(
                path,
                format!(
                    "its runs do not match their digest {} (they give {digest}): the plan file was edited; plan again",
                    first.plan
                ),
            ));
        }
        Ok(Plan { lines })
    }
}

/// The axis values of the `k`-th run of the full product (the last axis
/// varies fastest).
fn values_at(grid: &Grid, mut k: u64) -> Ordered {
    let mut out = vec![(String::new(), Value::Null); grid.axes.len()];
    for (slot, axis) in out.iter_mut().zip(&grid.axes).rev() {
        let n = axis.values.len() as u64;
        *slot = (axis.field.clone(), axis.values[(k % n) as usize].clone());
        k /= n;
    }
    Ordered(out)
}

fn excludes(entry: &Ordered, values: &Ordered) -> bool {
    entry
        .0
        .iter()
        .all(|(f, v)| values.0.iter().any(|(g, w)| f == g && v == w))
}

/// `axis = value, ...`, for messages.
pub(crate) fn shown(values: &Ordered) -> String {
    let parts: Vec<String> = values.0.iter().map(|(f, v)| format!("{f} = {v}")).collect();
    parts.join(", ")
}

/// The base with each axis's value set at its dotted field, read back as a
/// spec (so an unknown field is refused by the spec's own reader), its
/// relative paths resolved against the grid's folder.
fn apply(base: &Value, values: &Ordered, folder: &Path) -> Result<ReplaySpec, ReplayError> {
    let mut json = base.clone();
    for (field, v) in &values.0 {
        set(&mut json, field, v.clone())?;
    }
    let mut spec: ReplaySpec = serde_json::from_value(json).map_err(|e| ReplayError::Spec {
        field: shown(values),
        reason: e.to_string(),
    })?;
    spec.resolve_paths(folder);
    Ok(spec)
}

/// Sets `field` (dotted) inside `json`, creating the tables on the way.
fn set(json: &mut Value, field: &str, v: Value) -> Result<(), ReplayError> {
    let mut at = json;
    let parts: Vec<&str> = field.split('.').collect();
    for (depth, part) in parts.iter().enumerate() {
        let Value::Object(map) = at else {
            return Err(ReplayError::Spec {
                field: field.to_string(),
                reason: format!(
                    "`{}` is a value, not a table of fields",
                    parts[..depth].join(".")
                ),
            });
        };
        if depth + 1 == parts.len() {
            map.insert(part.to_string(), v);
            return Ok(());
        }
        at = map
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    Ok(())
}

/// FNV-1a over every line's id, axes and spec: 16 hex digits.
fn digest_of(lines: &[PlanLine]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(b"aisim sweep plan 1\n");
    for l in lines {
        feed(l.id.as_bytes());
        feed(b"\n");
        feed(
            serde_json::to_string(&l.axes)
                .expect("axes serialize")
                .as_bytes(),
        );
        feed(b"\n");
        feed(
            serde_json::to_string(&l.spec)
                .expect("specs serialize")
                .as_bytes(),
        );
        feed(b"\n");
    }
    format!("{h:016x}")
}
