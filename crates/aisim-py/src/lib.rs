//! `aisim._aisim`: the native half of the Python module `aisim`.
//!
//! One entry point, [`run`]: a job's name and its keyword arguments as JSON
//! (named as the CLI's flags in snake case), turned into the job's request
//! by the library (`aisim_lab::jobs`: `ReplayFlags` for the replay's flags,
//! `flags::request_from_flags` for the others), run with the GIL released,
//! and handed back as an [`Outcome`]: the report as the CLI's `--format
//! json` writes it, the per-request records, the spec, and the HTML page on
//! demand. No logic of its own beyond that translation: the Python wrapper
//! (`python/aisim/__init__.py`) turns these strings into dicts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use aisim_lab::compare::{compare_files, CompareRequest};
use aisim_lab::jobs::catalog::{self, ProfilesRequest};
use aisim_lab::jobs::fidelity::{self, CalibrateRequest, ValidateRequest};
use aisim_lab::jobs::flags::request_from_flags;
use aisim_lab::jobs::replay::{ReplayJob, ReplayOutputs};
use aisim_lab::jobs::replay_flags::ReplayFlags;
use aisim_lab::jobs::sweep::{self as sweep_jobs, SaturateRequest, SweepRequest};
use aisim_lab::jobs::{fleet, JobError};
use aisim_lab::saturate::Axis;
use aisim_replay::collector::RequestRecord;
use aisim_replay::per_request::RequestRow;
use aisim_replay::runtime::ReplayObserver;
use aisim_replay::ReplaySpec;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Map, Value};

/// Renders the HTML page of a finished job.
type Page = Box<dyn Fn() -> String + Send + Sync>;

/// What a job gives back.
#[pyclass(module = "aisim._aisim", frozen)]
struct Outcome {
    /// The report, as `--format json` writes it.
    #[pyo3(get)]
    report: String,
    /// The per-request records as columns (JSON of `{name: [values]}`), for replays.
    #[pyo3(get)]
    requests: Option<String>,
    /// The request that reproduces the run (JSON), where there is one.
    #[pyo3(get)]
    spec: Option<String>,
    /// Another output of the job, JSON: calibrate's fitted coefficients,
    /// sweep's best run.
    #[pyo3(get)]
    extra: Option<String>,
    page: Option<Page>,
}

#[pymethods]
impl Outcome {
    /// The page `--html` writes, when the job has one.
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        match &self.page {
            Some(page) => Ok(py.allow_threads(page)),
            None => Err(PyValueError::new_err("this job has no HTML page")),
        }
    }

    /// Whether `html()` has a page to give.
    fn has_html(&self) -> bool {
        self.page.is_some()
    }
}

impl Outcome {
    fn report<T: serde::Serialize>(report: &T) -> Outcome {
        Outcome {
            report: aisim_report::to_json(report),
            requests: None,
            spec: None,
            extra: None,
            page: None,
        }
    }
}

/// A job's failure as Python's exception: `ValueError` for the user's
/// input, `RuntimeError` for aisim's bug (the CLI's exit 2 and 1).
fn to_py(e: JobError) -> PyErr {
    let internal = e.is_internal();
    let boxed = e.into_boxed();
    let text = aisim_lab::jobs::paragraph(boxed.as_ref());
    if internal {
        PyRuntimeError::new_err(format!(
            "internal error: {text}; this is a bug in aisim, please report it"
        ))
    } else {
        PyValueError::new_err(text)
    }
}

/// The keyword arguments as an object, nulls (arguments not given) dropped.
fn arguments(json: &str) -> Result<Map<String, Value>, JobError> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| JobError::msg(format!("the arguments are not JSON: {e}")))?;
    let Value::Object(map) = v else {
        return Err(JobError::msg("the arguments are not an object"));
    };
    Ok(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
}

/// Takes `name` out of `args`, read as `T`.
fn take<T: serde::de::DeserializeOwned>(
    args: &mut Map<String, Value>,
    name: &str,
) -> Result<Option<T>, JobError> {
    match args.remove(name) {
        None => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| JobError::msg(format!("{name}: {e}"))),
    }
}

/// The replay's flags of `args` and the spec they describe: `spec` is a
/// spec (a dict, what `Result.spec` holds) the flags refine, or a spec
/// file as `--spec` reads it.
fn replay_spec(args: Map<String, Value>) -> Result<(ReplaySpec, ReplayFlags), JobError> {
    let mut args = args;
    let base = match args.remove("spec") {
        Some(Value::Object(o)) => {
            let text = Value::Object(o).to_string();
            Some(aisim_lab::jobs::from_json::<ReplaySpec>("spec", &text)?)
        }
        Some(other) => {
            args.insert("spec".into(), other);
            None
        }
        None => None,
    };
    let flags = ReplayFlags::from_value(Value::Object(args))?;
    let spec = match base {
        Some(base) => flags.to_spec_over(Some(base))?,
        None => flags.to_spec()?,
    };
    Ok((spec, flags))
}

/// The spec with its paths absolute, as `--print-spec` writes it: it runs
/// from any folder.
fn reproducible(spec: &ReplaySpec) -> Result<String, JobError> {
    let mut spec = spec.clone();
    let here = std::env::current_dir()
        .map_err(|e| JobError::from(e).context("resolving the spec's paths"))?;
    spec.resolve_paths(&here);
    Ok(spec.to_json())
}

/// The replay's observer here: the records as rows.
#[derive(Default)]
struct Collect {
    rows: Vec<RequestRow>,
}

impl ReplayObserver for Collect {
    fn records(&mut self, batch: &[RequestRecord]) -> std::io::Result<()> {
        self.rows.extend(batch.iter().map(RequestRow::of));
        Ok(())
    }
}

/// A JSON object's entries in their written order (a struct's field order).
struct Entries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry::<String, Value>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// The rows as columns, `{name: [value per row]}` (JSON), the names in the
/// order `--per-request` writes them.
fn columns(rows: &[RequestRow]) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut cols: Vec<Vec<Value>> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let text = serde_json::to_string(row).expect("a row serializes");
        let Entries(entries) = serde_json::from_str(&text).expect("a row is an object");
        for (k, v) in entries {
            let at = match names.iter().position(|n| *n == k) {
                Some(at) => at,
                None => {
                    names.push(k);
                    cols.push(vec![Value::Null; i]);
                    names.len() - 1
                }
            };
            cols[at].push(v);
        }
    }
    let mut out = Vec::new();
    out.push(b'{');
    for (i, (n, c)) in names.iter().zip(&cols).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, n).expect("a name is JSON");
        out.push(b':');
        serde_json::to_writer(&mut out, c).expect("values are JSON");
    }
    out.push(b'}');
    String::from_utf8(out).expect("JSON is UTF-8")
}

fn replay(args: Map<String, Value>) -> Result<Outcome, JobError> {
    let (spec, flags) = replay_spec(args)?;
    let spec_json = reproducible(&spec)?;
    let outputs = ReplayOutputs {
        cdfs: true,
        stream_records: true,
    };
    let job = ReplayJob::new(spec, flags.seeds, outputs).map_err(|e| flags.blame(e))?;
    let mut observer = Collect::default();
    let output = job.run(&mut observer).map_err(|e| flags.blame(e))?;
    let requests = columns(&observer.rows);
    let report = output.report;
    let cdfs = output.cdfs;
    let mut outcome = Outcome::report(&report);
    outcome.requests = Some(requests);
    outcome.spec = Some(spec_json);
    outcome.page = Some(Box::new(move || {
        aisim_report::html::render_replay_html(&report, cdfs.as_ref())
    }));
    Ok(outcome)
}

fn replay_seeds(args: Map<String, Value>) -> Result<Outcome, JobError> {
    if !args.contains_key("seeds") {
        return Err(JobError::msg(
            "replay_seeds needs `seeds`, the number of seeds (at most 10000)",
        ));
    }
    replay(args)
}

fn compare(mut args: Map<String, Value>) -> Result<Outcome, JobError> {
    // `--all` shapes the table only; the report is the same.
    let _table_only: Option<bool> = take(&mut args, "all")?;
    let request: CompareRequest = request_from_flags("compare", args)?;
    let c = compare_files(&request)?;
    let mut outcome = Outcome::report(&c.comparison);
    outcome.spec = Some(aisim_report::to_json(&request));
    outcome.page = Some(Box::new(move || {
        aisim_report::html::render_compare_html(&c.comparison, &c.a, &c.b)
    }));
    Ok(outcome)
}

/// The search's own parameters, the rest being the replay's flags.
const SATURATE_OWN: [&str; 7] = [
    "rate_range",
    "speedup_range",
    "attainment",
    "tolerance",
    "max_probes",
    "points",
    "threads",
];

fn saturate(args: Map<String, Value>) -> Result<Outcome, JobError> {
    let (own, replay_args): (Map<String, Value>, Map<String, Value>) = args
        .into_iter()
        .partition(|(k, _)| SATURATE_OWN.contains(&k.as_str()));
    let axis = match own.get("rate_range") {
        Some(_) => Axis::Rate,
        None => Axis::Speedup,
    };
    let given: Vec<&str> = [
        ("seeds", "--seeds"),
        ("speedup", "--speedup"),
        ("rate", "--rate"),
    ]
    .into_iter()
    .filter(|(k, _)| replay_args.contains_key(*k))
    .map(|(_, f)| f)
    .collect();
    sweep_jobs::check_saturate_flags(&given, axis)?;
    let (spec, _) = replay_spec(replay_args)?;
    let mut request = Map::new();
    request.insert(
        "spec".into(),
        serde_json::from_str(&spec.to_json()).expect("a spec is JSON"),
    );
    request.extend(own);
    let request: SaturateRequest = request_from_flags("saturate", request)?;
    let report =
        sweep_jobs::sweep_saturate(&request).map_err(|e| sweep_jobs::blame_saturate(e, axis))?;
    let mut outcome = Outcome::report(&report);
    let mut reproduce = request.clone();
    reproduce
        .spec
        .resolve_paths(&std::env::current_dir().unwrap_or_default());
    outcome.spec = Some(aisim_report::to_json(&reproduce));
    outcome.page = Some(Box::new(move || {
        aisim_report::html::render_saturate_html(&report)
    }));
    Ok(outcome)
}

fn sweep(args: Map<String, Value>) -> Result<Outcome, JobError> {
    let request: SweepRequest = request_from_flags("sweep", args)?;
    let swept = sweep_jobs::sweep(&request, &|_, _| {})?;
    let results = swept.merged.results;
    let text = aisim_lab::sweep::to_jsonl(&results);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a result line is JSON"))
        .collect();
    let mut outcome = Outcome::report(&lines);
    let best = swept.merged.best.map(|(i, _)| i);
    outcome.extra = Some(serde_json::to_string(&best).expect("an index is JSON"));
    outcome.spec = Some(aisim_report::to_json(&swept.run));
    let slo = swept.slo;
    outcome.page = Some(Box::new(move || {
        aisim_report::html::render_sweep_html(&results, slo.is_set().then_some(&slo))
    }));
    Ok(outcome)
}

fn calibrate(mut args: Map<String, Value>) -> Result<Outcome, JobError> {
    let out: Option<PathBuf> = take(&mut args, "out")?;
    let request: CalibrateRequest = request_from_flags("calibrate", args)?;
    let calibrated = fidelity::calibrate(&request)?;
    let fitted = aisim_report::to_json(&calibrated.fitted);
    if let Some(path) = &out {
        std::fs::write(path, fitted.as_bytes()).map_err(|e| {
            JobError::from(e).context(format!(
                "writing the fitted coefficients {}",
                path.display()
            ))
        })?;
    }
    let mut outcome = Outcome::report(&calibrated.report);
    outcome.extra = Some(fitted);
    outcome.spec = Some(aisim_report::to_json(&request));
    Ok(outcome)
}

/// A job whose request is its flags (nested where the request nests them).
fn plain<R, T>(
    job: &str,
    args: Map<String, Value>,
    run: impl Fn(&R) -> Result<T, JobError>,
) -> Result<(Outcome, R, T), JobError>
where
    R: serde::de::DeserializeOwned + serde::Serialize,
    T: serde::Serialize,
{
    let request: R = request_from_flags(job, args)?;
    let report = run(&request)?;
    let mut outcome = Outcome::report(&report);
    outcome.spec = Some(aisim_report::to_json(&request));
    Ok((outcome, request, report))
}

fn dispatch(job: &str, args: Map<String, Value>) -> Result<Outcome, JobError> {
    Ok(match job {
        "replay" => replay(args)?,
        "replay_seeds" => replay_seeds(args)?,
        "compare" => compare(args)?,
        "saturate" => saturate(args)?,
        "sweep" => sweep(args)?,
        "validate" => {
            plain("validate", args, |r: &ValidateRequest| {
                fidelity::validate(r)
            })?
            .0
        }
        "calibrate" => calibrate(args)?,
        "optimize" => plain("optimize", args, fleet::optimize)?.0,
        "pareto" => plain("pareto", args, fleet::pareto)?.0,
        "disagg" => plain("disagg", args, fleet::disagg)?.0,
        "whatif" => plain("whatif", args, fleet::whatif)?.0,
        "simulate" => {
            let (mut outcome, _, report) = plain("simulate", args, fleet::simulate)?;
            outcome.page = Some(Box::new(move || {
                aisim_report::html::render_simulate_html(&report)
            }));
            outcome
        }
        "profiles" => {
            let request: ProfilesRequest = request_from_flags("profiles", args)?;
            Outcome::report(&catalog::profiles(&request))
        }
        other => return Err(JobError::msg(format!("no job `{other}`"))),
    })
}

/// Runs `job` with `arguments` (JSON of the keyword arguments) on a thread
/// of its own while this one waits without the GIL, checking for signals
/// every 50 ms. On Ctrl-C the job's cancel flag (`aisim_core::cancel`) is
/// set, which every replay checks between passes and the fleet DES between
/// events; the job's thread is waited for (up to 30 s: the slot-level M/G/c
/// check and the analytic sizing do not check the flag) and
/// `KeyboardInterrupt` raised.
#[pyfunction]
fn run(py: Python<'_>, job: String, arguments_json: String) -> PyResult<Outcome> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let flag = Arc::clone(&cancel);
    std::thread::Builder::new()
        .name(format!("aisim-{job}"))
        .spawn(move || {
            let result = aisim_core::cancel::with_flag(Some(flag), || {
                arguments(&arguments_json).and_then(|args| dispatch(&job, args))
            });
            let _ = tx.send(result);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the job's thread: {e}")))?;
    let mut rx = rx;
    loop {
        // The receiver goes to the GIL-free side and back (it is Send, not Sync).
        let (got, back) = py.allow_threads(move || {
            let got = rx.recv_timeout(Duration::from_millis(50));
            (got, rx)
        });
        rx = back;
        match got {
            Ok(result) => return result.map_err(to_py),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "internal error: the job's thread ended without a result (a panic); this is a bug in aisim, please report it",
                ))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Err(e) = py.check_signals() {
            cancel.store(true, Ordering::Relaxed);
            let _ = py.allow_threads(move || rx.recv_timeout(Duration::from_secs(30)));
            return Err(e);
        }
    }
}

/// The version of aisim this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _aisim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<Outcome>()?;
    Ok(())
}
