//! Grid files (docs/sweeps.md): a base replay spec and axes, each a dotted
//! spec field with a list of values or an inclusive integer range
//! `"LO..HI"`, and optional `exclude` combinations. JSON or TOML, by the
//! file's extension; the same keys in both.

use std::path::{Path, PathBuf};

use aisim_core::number::Number;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::SweepError;
use aisim_replay::ReplaySpec;

/// Most runs one plan may hold, so a grid typed with one zero too many is
/// refused before it takes the memory (a plan line is about 2 kB).
pub const MAX_RUNS: u64 = 100_000;

/// Names with their values in the order written (a JSON object keeps it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ordered(pub Vec<(String, Value)>);

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        aisim_core::ordered::serialize_pairs(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        aisim_core::ordered::deserialize_pairs(d).map(Ordered)
    }
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    #[serde(default)]
    base: Option<Value>,
    #[serde(default)]
    base_args: Option<Vec<String>>,
    #[serde(default)]
    axes: Ordered,
    #[serde(default)]
    exclude: Vec<Ordered>,
}

/// Where the runs start from.
#[derive(Debug, Clone, PartialEq)]
pub enum Base {
    /// A spec: inline in the grid, or read from the file it names (its
    /// paths resolved against the grid's folder, or the spec file's).
    Spec(Box<ReplaySpec>),
    /// `aisim replay` flags, for the CLI to turn into a spec (relative
    /// paths in them are relative to the grid's folder).
    Args(Vec<String>),
}

/// One axis: a dotted spec field and its values, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The spec field, as `aisim replay --print-spec` writes it
    /// (`topology.workers`).
    pub field: String,
    /// Its values.
    pub values: Vec<Value>,
}

/// A grid read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The grid file, absolute.
    pub path: PathBuf,
    /// The base spec.
    pub base: Base,
    /// The spec file `base` names, when it names one.
    pub base_file: Option<PathBuf>,
    /// The axes, in the order written: the first varies slowest.
    pub axes: Vec<Axis>,
    /// Combinations left out: a run is dropped when its value of every axis
    /// an entry names equals the entry's.
    pub exclude: Vec<Ordered>,
}

impl Grid {
    /// The folder relative paths of the grid resolve against.
    pub fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("/"))
    }

    /// Reads `path` (`.json` or `.toml`).
    pub fn read(path: &Path) -> Result<Grid, SweepError> {
        let path = std::path::absolute(path).map_err(|e| SweepError::io("cannot read", path, e))?;
        let text = aisim_core::text_file::read_text_file(&path).map_err(|e| {
            SweepError::file(
                &path,
                e.to_string().replace(&format!("{}: ", path.display()), ""),
            )
        })?;
        Grid::parse(&path, &text)
    }

    /// Parses a grid's text; `path` names it in errors, gives its format
    /// by extension, and is the folder relative paths resolve against.
    pub fn parse(path: &Path, text: &str) -> Result<Grid, SweepError> {
        let file: GridFile = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str(text)
                .map_err(|e| SweepError::file(path, aisim_core::text_file::json_error_text(&e)))?,
            Some("toml") => {
                // TOML writes nan and inf, which a spec never holds (JSON
                // would read them as null, "not given"): refused by name.
                let value: toml::Value =
                    toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
                if let Some((key, v)) = non_finite(&value, String::new()) {
                    return Err(SweepError::file(
                        path,
                        format!("`{key} = {v}`: not a finite number, which no field of a spec or grid takes"),
                    ));
                }
                toml::from_str(text).map_err(|e| toml_error(path, text, &e))?
            }
            _ => {
                return Err(SweepError::file(
                    path,
                    "a grid file is JSON or TOML: its name ends in .json or .toml",
                ))
            }
        };
        let folder = path.parent().unwrap_or(Path::new("/"));
        let base_file = match &file.base {
            Some(Value::String(p)) => Some(folder.join(p)),
            _ => None,
        };
        let base = match (file.base, file.base_args) {
            (Some(_), Some(_)) => {
                return Err(SweepError::file(
                    path,
                    "`base` and `base_args` both given: the runs start from one of them",
                ))
            }
            (None, None) => {
                return Err(SweepError::file(
                    path,
                    "no `base`: give a spec (inline, or the path of a spec file) or `base_args` (aisim replay's flags)",
                ))
            }
            (None, Some(args)) => Base::Args(args),
            (Some(Value::String(p)), None) => {
                // Each run's spec is validated with its axes set (plan
                // time), not the base alone.
                let spec = ReplaySpec::read_unchecked(&folder.join(&p))
                    .map_err(|e| SweepError::file(path, format!("`base` {p}: {e}")))?;
                Base::Spec(Box::new(spec))
            }
            (Some(v @ Value::Object(_)), None) => {
                let mut spec: ReplaySpec = serde_json::from_value(v)
                    .map_err(|e| SweepError::file(path, format!("`base`: {e}")))?;
                spec.resolve_paths(folder);
                Base::Spec(Box::new(spec))
            }
            (Some(other), None) => {
                return Err(SweepError::file(
                    path,
                    format!("`base`: {other} is neither a spec (a table) nor the path of a spec file"),
                ))
            }
        };
        let axes = file
            .axes
            .0
            .into_iter()
            .map(|(field, v)| axis(path, field, v))
            .collect::<Result<Vec<_>, _>>()?;
        check_axes(path, &axes)?;
        for (i, entry) in file.exclude.iter().enumerate() {
            check_exclude(path, i, entry, &axes)?;
        }
        Ok(Grid {
            path: path.to_path_buf(),
            base,
            base_file,
            axes,
            exclude: file.exclude,
        })
    }

    /// Runs of the full cross product (before `exclude`), refused above
    /// [`MAX_RUNS`].
    pub fn product_size(&self) -> Result<u64, SweepError> {
        self.axes
            .iter()
            .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64))
            .filter(|&n| n <= MAX_RUNS)
            .ok_or_else(|| {
                let sizes: Vec<String> = self
                    .axes
                    .iter()
                    .map(|a| format!("{} {}", a.field, a.values.len()))
                    .collect();
                SweepError::file(
                    &self.path,
                    format!(
                        "the axes ({}) make more than {MAX_RUNS} runs: split the grid",
                        sizes.join(" × ")
                    ),
                )
            })
    }
}

/// A TOML error with its line and column, as the JSON ones.
/// The first float of `v` that is not finite, with its dotted key.
fn non_finite(v: &toml::Value, key: String) -> Option<(String, f64)> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Some((key, *x)),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| non_finite(x, format!("{key}[{i}]"))),
        toml::Value::Table(t) => t.iter().find_map(|(k, x)| {
            let dotted = if key.is_empty() {
                k.clone()
            } else {
                format!("{key}.{k}")
            };
            non_finite(x, dotted)
        }),
        _ => None,
    }
}

fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> SweepError {
    let reason = match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line} column {column}: {}", e.message().trim_end())
        }
        None => e.message().trim_end().to_string(),
    };
    SweepError::file(path, reason)
}

/// One axis from its written values: a list, or a range string.
fn axis(path: &Path, field: String, v: Value) -> Result<Axis, SweepError> {
    let bad = |reason: String| SweepError::file(path, format!("axis `{field}`: {reason}"));
    let values = match v {
        Value::Array(values) if values.is_empty() => return Err(bad("no values".into())),
        Value::Array(values) if values.len() as u64 > MAX_RUNS => {
            return Err(bad(format!(
                "{} values, more than a plan's {MAX_RUNS} runs",
                values.len()
            )))
        }
        Value::Array(values) => {
            // A set of each value's canonical text (1 and 1.0 are one value,
            // and would plan two identical runs): linear, where a scan of
            // the values before each one is quadratic in a long list.
            let mut seen = std::collections::HashSet::with_capacity(values.len());
            if let Some(v) = values.iter().find(|v| !seen.insert(canonical(v))) {
                return Err(bad(format!("{v} is given twice")));
            }
            values
        }
        // A range's values are distinct by construction.
        Value::String(s) => range(&s).map_err(bad)?,
        other => {
            return Err(bad(format!(
                "{other}: give a list of values ([4, 8]) or an inclusive range (\"1..10\")"
            )))
        }
    };
    Ok(Axis { field, values })
}

/// A value's text with every number written one way: a whole number below
/// 2^53 as an integer (`1.0` is `1`), others as they are.
fn canonical(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 => {
                format!("{}", x as i64)
            }
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, x)| format!("{k:?}:{}", canonical(x)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// The whole numbers of an inclusive range `"LO..HI"`.
fn range(s: &str) -> Result<Vec<Value>, String> {
    let Some((lo, hi)) = s.split_once("..") else {
        return Err(format!(
            "\"{s}\" is not a range: write \"LO..HI\" (inclusive, whole numbers) or a list of values"
        ));
    };
    let end = |t: &str| {
        Number::of_text(t.trim())
            .ok_or_else(|| format!("\"{s}\": `{t}` is not a number"))?
            .whole(i64::MIN as i128, i64::MAX as i128)
            .map(|v| v as i64)
            .map_err(|e| format!("\"{s}\": `{t}`: {e}"))
    };
    let (lo, hi) = (end(lo)?, end(hi)?);
    if lo > hi {
        return Err(format!("\"{s}\": the range is empty (LO > HI)"));
    }
    let count = (hi as i128 - lo as i128 + 1) as u128;
    if count > MAX_RUNS as u128 {
        return Err(format!(
            "\"{s}\": {count} values, more than a plan's {MAX_RUNS} runs"
        ));
    }
    Ok((lo..=hi).map(Value::from).collect())
}

/// Axes name distinct fields, none inside another (`topology` and
/// `topology.workers` would set the same value twice).
fn check_axes(path: &Path, axes: &[Axis]) -> Result<(), SweepError> {
    for a in axes {
        if a.field.is_empty() || a.field.split('.').any(str::is_empty) {
            return Err(SweepError::file(
                path,
                format!(
                    "axis `{}`: not a dotted spec field (e.g. topology.workers)",
                    a.field
                ),
            ));
        }
        if let Some(outer) = axes
            .iter()
            .find(|b| a.field.starts_with(&format!("{}.", b.field)))
        {
            return Err(SweepError::file(
                path,
                format!(
                    "axis `{}` lies inside axis `{}`: both would set it",
                    a.field, outer.field
                ),
            ));
        }
    }
    Ok(())
}

/// An exclude entry names axes of the grid and values they take, so a
/// typing error cannot leave every run in without saying so.
fn check_exclude(path: &Path, i: usize, entry: &Ordered, axes: &[Axis]) -> Result<(), SweepError> {
    let at = |reason: String| SweepError::file(path, format!("exclude[{i}]: {reason}"));
    if entry.0.is_empty() {
        return Err(at("empty: it would leave out every run".into()));
    }
    for (field, v) in &entry.0 {
        let Some(axis) = axes.iter().find(|a| a.field == *field) else {
            return Err(at(format!("`{field}` is not an axis of the grid")));
        };
        if !axis.values.contains(v) {
            return Err(at(format!("{v} is not a value of axis `{field}`")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Result<Grid, SweepError> {
        Grid::parse(&Path::new("/g").join(name), text)
    }

    const BASE: &str = r#""base": {"version": 1, "workload": {"kind": "demo"}}"#;

    #[test]
    fn axes_keep_their_written_order_in_json_and_toml() {
        let json = parse(
            "g.json",
            &format!(
                r#"{{{BASE}, "axes": {{"seed": "3..5", "router.policy": ["kv", "round_robin"]}}}}"#
            ),
        )
        .unwrap();
        let toml = parse(
            "g.toml",
            "[base]\nversion = 1\nworkload = { kind = \"demo\" }\n[axes]\nseed = \"3..5\"\n\"router.policy\" = [\"kv\", \"round_robin\"]\n",
        )
        .unwrap();
        assert_eq!((&json.base, &json.axes), (&toml.base, &toml.axes));
        let fields: Vec<&str> = json.axes.iter().map(|a| a.field.as_str()).collect();
        assert_eq!(fields, ["seed", "router.policy"]);
        assert_eq!(json.axes[0].values, [3, 4, 5].map(Value::from));
        assert_eq!(json.product_size().unwrap(), 6);
    }

    #[test]
    fn toml_exclude_tables_and_a_spec_file_base() {
        let scratch = aisim_core::scratch::ScratchDir::new("grid");
        let dir = scratch.path();
        std::fs::write(
            dir.join("base.json"),
            r#"{"version": 1, "workload": {"kind": "trace", "path": "t.jsonl"}}"#,
        )
        .unwrap();
        let g = Grid::parse(
            &dir.join("g.toml"),
            "base = \"base.json\"\n[axes]\nseed = [1, 2]\n\"router.policy\" = [\"kv\", \"lpwl\"]\n[[exclude]]\nseed = 2\n\"router.policy\" = \"kv\"\n",
        )
        .unwrap();
        assert_eq!(
            g.exclude,
            [Ordered(vec![
                ("seed".into(), Value::from(2)),
                ("router.policy".into(), Value::from("kv")),
            ])]
        );
        // The spec file's relative trace is relative to the spec file.
        let Base::Spec(spec) = &g.base else {
            panic!("a spec base")
        };
        let aisim_replay::spec::WorkloadSpec::Trace { path, .. } = &spec.workload else {
            panic!("a trace")
        };
        assert_eq!(path, &dir.join("t.jsonl"));
    }

    #[test]
    fn ranges_are_inclusive_whole_numbers() {
        assert_eq!(range("1..3").unwrap(), [1, 2, 3].map(Value::from));
        assert_eq!(range("-1..0").unwrap(), [-1, 0].map(Value::from));
        assert_eq!(range("2..2").unwrap(), [Value::from(2)]);
        assert!(range("3..1").unwrap_err().contains("empty"));
        assert!(range("1.5..3").unwrap_err().contains("not a whole number"));
        assert!(range("1-3").unwrap_err().contains("not a range"));
        assert!(range("0..1000000").unwrap_err().contains("more than"));
    }

    #[test]
    fn bad_grids_name_the_key_and_value() {
        let err = |text: &str| parse("g.json", text).unwrap_err().to_string();
        assert!(err(r#"{"axes": {}}"#).contains("no `base`"));
        assert!(err(&format!(r#"{{{BASE}, "axes": {{"seed": 4}}}}"#)).contains("axis `seed`: 4"));
        assert!(
            err(&format!(r#"{{{BASE}, "axes": {{"seed": [1, 1]}}}}"#)).contains("1 is given twice")
        );
        assert!(err(&format!(
            r#"{{{BASE}, "axes": {{"seed": [1]}}, "exclude": [{{"seed": 2}}]}}"#
        ))
        .contains("exclude[0]: 2 is not a value of axis `seed`"));
        assert!(err(&format!(
            r#"{{{BASE}, "axes": {{"seed": [1]}}, "exclude": [{{"sed": 1}}]}}"#
        ))
        .contains("`sed` is not an axis"));
        assert!(err(&format!(
            r#"{{{BASE}, "axes": {{"topology": [1], "topology.workers": [2]}}}}"#
        ))
        .contains("lies inside axis `topology`"));
        assert!(err(&format!(r#"{{{BASE}, "axis": {{}}}}"#)).contains("unknown field `axis`"));
        let toml = parse("g.toml", "base_args = []\n[axes]\nseed = [1,\n")
            .unwrap_err()
            .to_string();
        assert!(toml.starts_with("/g/g.toml: line "), "{toml}");
        assert!(parse("g.yaml", "")
            .unwrap_err()
            .to_string()
            .contains(".json or .toml"));
    }

    #[test]
    fn duplicates_are_found_anywhere_in_a_long_list_and_long_lists_refused() {
        let err = |values: &[i64]| {
            let list: Vec<String> = values.iter().map(i64::to_string).collect();
            parse(
                "g.json",
                &format!(r#"{{{BASE}, "axes": {{"seed": [{}]}}}}"#, list.join(",")),
            )
            .map(|g| g.axes[0].values.len())
            .map_err(|e| e.to_string())
        };
        let mut long: Vec<i64> = (0..MAX_RUNS as i64).collect();
        assert_eq!(err(&long), Ok(MAX_RUNS as usize));
        *long.last_mut().unwrap() = 0;
        assert!(err(&long).unwrap_err().contains("0 is given twice"));
        long.push(MAX_RUNS as i64 + 1);
        assert!(err(&long).unwrap_err().contains("100001 values, more than"));
        // A range is distinct by construction: its values are taken as is.
        let g = parse(
            "g.json",
            &format!(r#"{{{BASE}, "axes": {{"seed": "1..100000"}}}}"#),
        );
        assert_eq!(g.unwrap().axes[0].values.len(), 100_000);
    }

    #[test]
    fn too_many_runs_are_refused_before_expansion() {
        let g = parse(
            "g.json",
            &format!(r#"{{{BASE}, "axes": {{"seed": "1..1000", "topology.workers": "1..101"}}}}"#),
        )
        .unwrap();
        assert!(g
            .product_size()
            .unwrap_err()
            .to_string()
            .contains("seed 1000 × topology.workers 101"));
    }
}
