//! A plan: the grid's cross product, one JSON line per run with its id, its
//! axis values and its full spec, checked before anything runs, and a
//! digest of the whole that every line and every result carries.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grid::{Grid, Ordered};
use super::inputs::{Fingerprints, InputFile};
use super::preflight::Preflight;
use super::SweepError;
use aisim_replay::{ReplayError, ReplaySpec};

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
    /// The files it reads, by size and content when planned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputFile>,
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
                    axes: blamed(&values, &source),
                    source: Box::new(source),
                })?;
            runs.push((values, spec));
        }
        if runs.is_empty() {
            return Err(SweepError::file(&grid.path, "`exclude` leaves no run"));
        }
        let mut fingerprints = Fingerprints::default();
        let runs = runs
            .into_iter()
            .map(|(axes, spec)| Ok((axes, fingerprints.of(&spec)?, spec)))
            .collect::<Result<Vec<_>, SweepError>>()?;
        Ok(Plan::of(runs))
    }

    /// Numbers the runs and seals them with their digest.
    fn of(runs: Vec<(Ordered, Vec<InputFile>, ReplaySpec)>) -> Plan {
        let n = runs.len() as u64;
        let width = (n - 1).to_string().len();
        let mut lines: Vec<PlanLine> = runs
            .into_iter()
            .enumerate()
            .map(|(i, (axes, inputs, spec))| PlanLine {
                id: format!("{i:0width$}"),
                index: i as u64,
                runs: n,
                plan: String::new(),
                axes,
                spec,
                inputs,
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

/// The run's axis values for its error, led by the axis at fault when the
/// error names its field (`invalid replay spec: `topology.workers``, or
/// serde's `unknown field `wrkers``).
fn blamed(values: &Ordered, e: &ReplayError) -> String {
    let text = e.to_string();
    let unknown = text
        .split("unknown field `")
        .nth(1)
        .and_then(|t| t.split('`').next());
    let at_fault = values.0.iter().position(|(axis, _)| {
        let inside = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}."));
        match e {
            ReplayError::Spec { field, .. } if inside(field, axis) || inside(axis, field) => true,
            _ => unknown.is_some_and(|u| axis.rsplit('.').next() == Some(u)),
        }
    });
    match at_fault {
        None => shown(values),
        Some(i) => {
            let (axis, v) = &values.0[i];
            let others: Vec<(String, Value)> = values
                .0
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| p.clone())
                .collect();
            let rest = if others.is_empty() {
                String::new()
            } else {
                format!(", with {}", shown(&Ordered(others)))
            };
            format!("axis `{axis}` = {v}{rest}")
        }
    }
}

/// The base with each axis's value set at its dotted field, read back as a
/// spec (so an unknown field is refused by the spec's own reader), its
/// relative paths resolved against the grid's folder.
fn apply(base: &Value, values: &Ordered, folder: &Path) -> Result<ReplaySpec, ReplayError> {
    let mut json = base.clone();
    for (field, v) in &values.0 {
        set(&mut json, field, v.clone())?;
    }
    let mut spec: ReplaySpec = serde_json::from_value(json).map_err(|e| {
        // The axis whose value alone the base cannot take, when one is.
        let alone = values.0.iter().find(|(field, v)| {
            let mut one = base.clone();
            set(&mut one, field, v.clone()).is_err()
                || serde_json::from_value::<ReplaySpec>(one).is_err()
        });
        ReplayError::Spec {
            field: alone.map_or("(axes)".into(), |(f, _)| f.clone()),
            reason: e.to_string(),
        }
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
        // Plans without inputs keep the digest they always had.
        if !l.inputs.is_empty() {
            feed(
                serde_json::to_string(&l.inputs)
                    .expect("inputs serialize")
                    .as_bytes(),
            );
            feed(b"\n");
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::{Axis, Base};
    use proptest::prelude::*;

    fn grid(sizes: &[usize], exclude: Vec<Ordered>) -> Grid {
        Grid {
            path: "/g/grid.json".into(),
            base: crate::sweep::Base::Args(Vec::new()),
            base_file: None,
            axes: sizes
                .iter()
                .enumerate()
                .map(|(a, &n)| Axis {
                    field: format!("axis{a}"),
                    values: (0..n as u64).map(Value::from).collect(),
                })
                .collect(),
            exclude,
        }
    }

    fn synthetic() -> ReplaySpec {
        ReplaySpec {
            workload: aisim_replay::spec::WorkloadSpec::Synthetic(
                aisim_replay::spec::SyntheticSpec::default(),
            ),
            ..ReplaySpec::default()
        }
    }

    proptest! {
        /// Run k is the k-th tuple of the axes' values in lexicographic
        /// order (the first axis slowest): every combination once, in order.
        #[test]
        fn runs_enumerate_the_product_in_order(sizes in proptest::collection::vec(1usize..5, 0..4)) {
            let g = grid(&sizes, Vec::new());
            let total = g.product_size().unwrap();
            let tuples: Vec<Vec<u64>> = (0..total)
                .map(|k| values_at(&g, k).0.iter().map(|(_, v)| v.as_u64().unwrap()).collect())
                .collect();
            prop_assert_eq!(tuples.len(), sizes.iter().product::<usize>());
            for w in tuples.windows(2) {
                prop_assert!(w[0] < w[1], "{:?} then {:?}", w[0], w[1]);
            }
        }
    }

    #[test]
    fn the_base_needs_to_be_valid_only_with_its_axes_set() {
        // A temperature only the kv router reads: the base alone is refused.
        let base = r#""base": {"version": 1, "workload": {"kind": "demo"}, "router": {"temperature": 0.5}}"#;
        let parse = |axes: &str| {
            let g = Grid::parse(
                Path::new("/g/g.json"),
                &format!(r#"{{{base}, "axes": {{"router.policy": {axes}}}}}"#),
            )
            .unwrap();
            let Base::Spec(spec) = &g.base else {
                panic!("an inline base")
            };
            assert!(spec.validate().is_err());
            Plan::expand(&g, spec).map_err(|e| e.to_string())
        };
        let plan = parse(r#"["kv"]"#).unwrap();
        assert_eq!(plan.lines.len(), 1);
        assert_eq!(plan.lines[0].spec.router.temperature, 0.5);
        // A run where it stays without effect is refused, naming that run.
        let e = parse(r#"["kv", "round_robin"]"#).unwrap_err();
        assert!(e.contains("run 1 ("), "{e}");
        assert!(e.contains("router.temperature"), "{e}");
    }

    #[test]
    fn ids_are_zero_padded_indices_and_the_digest_seals_the_runs() {
        let g = Grid {
            axes: vec![Axis {
                field: "seed".into(),
                values: (1..=11).map(Value::from).collect(),
            }],
            ..grid(&[], Vec::new())
        };
        let plan = Plan::expand(&g, &synthetic()).unwrap();
        let ids: Vec<&str> = plan.lines.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids[..3], ["00", "01", "02"]);
        assert_eq!(ids[10], "10");
        assert_eq!(plan.lines[4].spec.seed, 5);
        assert!(plan
            .lines
            .iter()
            .all(|l| l.plan == plan.digest() && l.runs == 11));
        assert_eq!(plan.digest().len(), 16);
        // The same grid plans to the same bytes; another value, another digest.
        assert_eq!(Plan::expand(&g, &synthetic()).unwrap(), plan);
        let mut other = g.clone();
        other.axes[0].values[10] = Value::from(12);
        assert_ne!(
            Plan::expand(&other, &synthetic()).unwrap().digest(),
            plan.digest()
        );
    }

    #[test]
    fn excluded_combinations_are_left_out_and_the_rest_renumbered() {
        let mut g = grid(&[2, 2], Vec::new());
        g.axes[0].field = "seed".into();
        g.axes[1].field = "admission.speedup".into();
        g.axes[1].values = vec![Value::from(1.0), Value::from(2.0)];
        g.exclude = vec![Ordered(vec![
            ("seed".into(), Value::from(0)),
            ("admission.speedup".into(), Value::from(2.0)),
        ])];
        let plan = Plan::expand(&g, &synthetic()).unwrap();
        let runs: Vec<(u64, f64)> = plan
            .lines
            .iter()
            .map(|l| (l.spec.seed, l.spec.admission.speedup))
            .collect();
        assert_eq!(runs, [(0, 1.0), (1, 1.0), (1, 2.0)]);
        assert_eq!(plan.lines[2].id, "2");
    }

    #[test]
    fn a_refused_value_names_its_axis_and_run() {
        let mut g = grid(&[1, 2], Vec::new());
        g.axes[0].field = "seed".into();
        g.axes[1].field = "topology.workers".into();
        g.axes[1].values = vec![Value::from(2), Value::from(0)];
        let e = Plan::expand(&g, &synthetic()).unwrap_err().to_string();
        assert!(
            e.starts_with("/g/grid.json: run 1 (axis `topology.workers` = 0, with seed = 0): invalid replay spec: `topology.workers`"),
            "{e}"
        );
        g.axes[1].field = "topology.wrkers".into();
        let e = Plan::expand(&g, &synthetic()).unwrap_err().to_string();
        assert!(
            e.contains("run 0 (axis `topology.wrkers` = 2, with seed = 0)")
                && e.contains("unknown field `wrkers`"),
            "{e}"
        );
        g.axes[1].field = "seed.x".into();
        let e = Plan::expand(&g, &synthetic()).unwrap_err().to_string();
        assert!(e.contains("`seed` is a value, not a table"), "{e}");
    }
}
