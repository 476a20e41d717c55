//! The measured run: one versioned JSON file holding how a real server was
//! run (a [`ReplaySpec`]) and what was measured (docs/fidelity.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::json_file::read_json;
use super::stats::{Stats, STAT_NAMES};
use super::FidelityError;
pub use aisim_replay::frontend::Served;
use aisim_replay::ReplayError;
use aisim_replay::{ReplaySpec, SCHEMA_VERSION};

/// Version of the measured-run format.
pub const MEASURED_VERSION: u32 = 1;

/// Latency metrics a measured run may hold, all in milliseconds.
pub const LATENCY_METRICS: [&str; 4] = ["ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"];

/// What was measured; any metric or statistic may be absent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measured {
    /// Requests sent, when some did not complete (an overloaded run): the
    /// trace holds them all. Absent, every request sent completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered: Option<u64>,
    /// Requests that completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
    /// Time to first token from arrival, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Stats>,
    /// Time per output token after the first, per request, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Stats>,
    /// Inter-token latency over all token gaps, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<Stats>,
    /// End-to-end latency from arrival, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Stats>,
    /// Output tokens per second over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tok_s: Option<f64>,
}

impl Measured {
    /// The latency metric named `name` (one of [`LATENCY_METRICS`]).
    pub fn latency(&self, name: &str) -> Option<&Stats> {
        match name {
            "ttft_ms" => self.ttft_ms.as_ref(),
            "tpot_ms" => self.tpot_ms.as_ref(),
            "itl_ms" => self.itl_ms.as_ref(),
            "e2e_ms" => self.e2e_ms.as_ref(),
            _ => None,
        }
    }

    fn latency_mut(&mut self, name: &str) -> &mut Option<Stats> {
        match name {
            "ttft_ms" => &mut self.ttft_ms,
            "tpot_ms" => &mut self.tpot_ms,
            "itl_ms" => &mut self.itl_ms,
            _ => &mut self.e2e_ms,
        }
    }
}

/// Where an imported run came from, and what its file could not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// The importer (`--from`): `generic`, `llmservingsim`, `vllm-bench`, ...
    pub from: String,
    /// Which time of each request the trace's arrival is.
    pub arrival: Arrival,
    /// How the trace knows which prompts share a prefix.
    pub prefix_reuse: PrefixReuse,
}

/// Which time of a request an import's trace takes as its arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// When the load generator planned to send it (its schedule: the
    /// offered load, whatever the client's own delays).
    Planned,
    /// When the client sent it (or the server queued it).
    Sent,
}

/// What an import's trace knows of shared prompt prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixReuse {
    /// The file gave each prompt's block hashes.
    HashIds,
    /// Hashed from each prompt's text, in blocks.
    PromptText,
    /// Hashed from each prompt's token ids, in blocks.
    TokenIds,
    /// Built from each request's prefix group and length.
    PrefixGroups,
    /// The file says nothing of the prompts: replayed without shared prefixes.
    Unknown,
}

/// A measured run: the run's spec and its measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredRun {
    /// Format version ([`MEASURED_VERSION`]).
    pub version: u32,
    /// Name shown in reports.
    pub name: String,
    /// How the run is replayed (its paths resolved against the file's folder).
    pub spec: ReplaySpec,
    /// The measurements.
    pub measured: Measured,
    /// Per-request measurements the summary came from, if kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<PathBuf>,
    /// Where the measurement was taken: the engine in process (the
    /// default), or a server over HTTP, whose TTFT holds time outside the
    /// engine (request parsing, tokenization, streaming).
    #[serde(skip_serializing_if = "Served::is_in_process")]
    pub served: Served,
    /// Where an imported run came from (absent for runs written by hand).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

impl MeasuredRun {
    /// The run's spec as it is replayed against its measurement: served
    /// where it was measured, so a run served over HTTP gets that front
    /// end's time outside the engine (its spec's, else the default), and its
    /// TTFT and E2E are the client's, as measured.
    pub fn replay_spec(&self) -> ReplaySpec {
        let mut spec = self.spec.clone();
        if spec.frontend.served.is_in_process() {
            spec.frontend.served = self.served;
        }
        spec
    }

    /// The time outside the engine its replay uses, ms; `None` in process.
    pub fn frontend_ms(&self) -> Option<f64> {
        (!self.served.is_in_process()).then(|| self.replay_spec().frontend.ms())
    }

    /// Replays it with `ms` outside the engine, when it was served over
    /// HTTP (in process there is none).
    pub fn set_frontend_ms(&mut self, ms: f64) {
        if !self.served.is_in_process() {
            self.spec.frontend.served = self.served;
            self.spec.frontend.request_ms = Some(ms);
        }
    }
}

const TOP_FIELDS: [&str; 7] = [
    "version", "name", "spec", "measured", "requests", "served", "origin",
];

fn number(path: &Path, field: &str, v: &Value) -> Result<f64, FidelityError> {
    match v.as_f64() {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(FidelityError::field(
            path,
            field,
            format!("{x}: must be a finite number of 0 or more"),
        )),
        None => Err(FidelityError::field(
            path,
            field,
            format!("{v}: must be a number"),
        )),
    }
}

fn object<'v>(
    path: &Path,
    field: &str,
    v: &'v Value,
) -> Result<&'v Map<String, Value>, FidelityError> {
    v.as_object()
        .ok_or_else(|| FidelityError::field(path, field, format!("{v}: must be an object")))
}

fn unknown(path: &Path, field: &str, known: &[&str]) -> FidelityError {
    FidelityError::field(
        path,
        field,
        format!("unknown field; expected one of {}", known.join(", ")),
    )
}

fn parse_measured(path: &Path, v: &Value) -> Result<Measured, FidelityError> {
    let mut m = Measured::default();
    let mut known: Vec<&str> = vec!["offered", "completed", "output_tok_s"];
    known.extend(LATENCY_METRICS);
    for (key, value) in object(path, "measured", v)? {
        let field = format!("measured.{key}");
        match key.as_str() {
            "offered" | "completed" => {
                let n = number(path, &field, value)?;
                if n.fract() != 0.0 || n > u64::MAX as f64 {
                    return Err(FidelityError::field(
                        path,
                        &field,
                        format!("{n}: must be a whole number of requests"),
                    ));
                }
                *if key == "offered" {
                    &mut m.offered
                } else {
                    &mut m.completed
                } = Some(n as u64);
            }
            "output_tok_s" => m.output_tok_s = Some(number(path, &field, value)?),
            metric if LATENCY_METRICS.contains(&metric) => {
                let mut s = Stats::default();
                for (stat, x) in object(path, &field, value)? {
                    let f = format!("{field}.{stat}");
                    let x = Some(number(path, &f, x)?);
                    match stat.as_str() {
                        "mean" => s.mean = x,
                        "p50" => s.p50 = x,
                        "p90" => s.p90 = x,
                        "p99" => s.p99 = x,
                        _ => return Err(unknown(path, &f, &STAT_NAMES)),
                    }
                }
                // Percentiles never fall as they rise.
                let ordered = [("p50", s.p50), ("p90", s.p90), ("p99", s.p99)];
                let given: Vec<(&str, f64)> = ordered
                    .iter()
                    .filter_map(|(n, v)| Some((*n, (*v)?)))
                    .collect();
                if let Some(w) = given.windows(2).find(|w| w[0].1 > w[1].1) {
                    return Err(FidelityError::field(
                        path,
                        format!("{field}.{}", w[0].0),
                        format!(
                            "{} is above {} {}: percentiles rise with the share",
                            aisim_core::number::float(w[0].1),
                            w[1].0,
                            aisim_core::number::float(w[1].1)
                        ),
                    ));
                }
                *m.latency_mut(metric) = Some(s);
            }
            _ => return Err(unknown(path, &field, &known)),
        }
    }
    if let (Some(o), Some(c)) = (m.offered, m.completed) {
        if c > o {
            return Err(FidelityError::field(
                path,
                "measured.completed",
                format!("{c}: more than the {o} requests offered"),
            ));
        }
    }
    Ok(m)
}

/// The spec of a run: fields left out take their defaults (the version
/// too), relative paths are resolved against `base`.
fn parse_spec(path: &Path, v: &Value, base: &Path) -> Result<ReplaySpec, FidelityError> {
    let mut v = v.clone();
    object(path, "spec", &v)?;
    if let Some(o) = v.as_object_mut() {
        o.entry("version").or_insert(SCHEMA_VERSION.into());
    }
    let mut spec: ReplaySpec =
        serde_json::from_value(v).map_err(|e| FidelityError::field(path, "spec", e.to_string()))?;
    spec.resolve_paths(base);
    spec.validate().map_err(|e| match e {
        ReplayError::Spec { field, reason } => {
            FidelityError::field(path, format!("spec.{field}"), reason)
        }
        other => FidelityError::field(path, "spec", other.to_string()),
    })?;
    Ok(spec)
}

impl MeasuredRun {
    /// Reads and checks a measured-run file; every error names the file and
    /// the field.
    pub fn from_file(path: &Path) -> Result<MeasuredRun, FidelityError> {
        let v: Value = read_json(path)?;
        let top = object(path, "(file)", &v)?;
        if let Some(k) = top.keys().find(|k| !TOP_FIELDS.contains(&k.as_str())) {
            return Err(unknown(path, k, &TOP_FIELDS));
        }
        let missing = |f: &str| {
            FidelityError::field(
                path,
                f,
                "missing: a measured run needs it (docs/fidelity.md)",
            )
        };
        match top.get("version").and_then(Value::as_u64) {
            Some(v) if v == MEASURED_VERSION as u64 => {}
            _ => {
                let got = top
                    .get("version")
                    .map_or("missing".into(), Value::to_string);
                return Err(FidelityError::field(
                    path,
                    "version",
                    format!("{got}: this aisim reads version {MEASURED_VERSION}"),
                ));
            }
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let spec = parse_spec(path, top.get("spec").ok_or_else(|| missing("spec"))?, base)?;
        let measured = parse_measured(
            path,
            top.get("measured").ok_or_else(|| missing("measured"))?,
        )?;
        let name = match top.get("name") {
            None => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(FidelityError::field(
                    path,
                    "name",
                    format!("{other}: must be a string"),
                ))
            }
        };
        let requests = match top.get("requests") {
            None | Some(Value::Null) => None,
            Some(Value::String(r)) => {
                let p = base.join(r);
                if !p.is_file() {
                    return Err(FidelityError::field(
                        path,
                        "requests",
                        format!("{}: no such file", p.display()),
                    ));
                }
                Some(p)
            }
            Some(other) => {
                return Err(FidelityError::field(
                    path,
                    "requests",
                    format!("{other}: must be a path"),
                ))
            }
        };
        let served = match top.get("served") {
            None => Served::InProcess,
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                FidelityError::field(
                    path,
                    "served",
                    format!("{v}: one of \"in_process\", \"http_streaming\""),
                )
            })?,
        };
        let origin = match top.get("origin") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value(v.clone())
                    .map_err(|e| FidelityError::field(path, "origin", format!("{v}: {e}")))?,
            ),
        };
        Ok(MeasuredRun {
            version: MEASURED_VERSION,
            name,
            spec,
            measured,
            requests,
            served,
            origin,
        })
    }

    /// The run as pretty JSON (what [`MeasuredRun::from_file`] reads).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("measured runs serialize")
    }
}
