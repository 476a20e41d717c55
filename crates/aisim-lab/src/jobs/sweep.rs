//! The sweep jobs: `sweep plan` (a grid into a plan), `sweep run` (a shard
//! of a plan into a results folder), `sweep merge` (results folders into one
//! table) and `sweep saturate` (the highest rate that holds the SLOs).

use std::ffi::OsString;
use std::path::PathBuf;

use aisim_core::text_file::MAX_TEXT_FILE_BYTES;
use aisim_replay::policy::SpecComposition;
use aisim_replay::ReplaySpec;
use serde::{Deserialize, Serialize};

use super::{JobError, Version};
use crate::saturate::{self, Axis, Range, SaturateReport, Saturation, SearchSettings};
use crate::sweep::{
    self, Base, CostBasis, Grid, Pending, Plan, RunOptions, RunResult, RunSummary, Shard, Slo,
};

/// Most threads per core a job starts: more only cost memory and switches
/// (a replay is CPU-bound), and thousands would fail to spawn.
pub const MAX_THREADS_PER_CORE: usize = 4;

/// The threads `threads` asks for (0 refused), at most
/// [`MAX_THREADS_PER_CORE`] per core; else the machine's.
pub fn threads(asked: Option<usize>) -> Result<usize, JobError> {
    let cores = crate::seeds::available_threads();
    match asked {
        Some(0) => Err(JobError::msg(
            "--threads 0: at least 1 thread runs the replays",
        )),
        Some(n) => Ok(n.min(cores * MAX_THREADS_PER_CORE)),
        None => Ok(cores),
    }
}

/// `aisim sweep plan GRID`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepPlanRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The grid file (JSON or TOML, docs/sweeps.md).
    pub grid: PathBuf,
}

/// Turns a grid's `base_args` (the replay's command-line flags) into the
/// base spec, relative paths taken from the grid's folder: only a front end
/// that has the flags' parser (the CLI) can; elsewhere a grid gives `base`.
pub type BaseArgsParser<'a> = &'a dyn Fn(&[String], &Grid) -> Result<ReplaySpec, JobError>;

/// A plan, and every file it was made from or its runs read (the grid, its
/// base spec file, the traces and tables): what no output may overwrite.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The plan.
    pub plan: Plan,
    /// The plan file's text (what `Plan::to_jsonl` gives), made once: its
    /// size is checked before it is written.
    pub text: String,
    /// Each input, named for an error, and its path.
    pub inputs: Vec<(String, PathBuf)>,
}

/// Runs `sweep plan`: the grid expanded into one checked line per run.
pub fn sweep_plan(
    r: &SweepPlanRequest,
    base_args: Option<BaseArgsParser>,
) -> Result<Planned, JobError> {
    let grid = Grid::read(&r.grid)?;
    let base = match &grid.base {
        Base::Spec(spec) => (**spec).clone(),
        Base::Args(list) => match base_args {
            Some(parse) => parse(list, &grid)?,
            None => {
                return Err(JobError::msg(format!(
                    "{}: `base_args` are command-line flags, read only by `aisim sweep plan`; give the base as `base` (a replay spec, what `aisim replay ... --print-spec` writes)",
                    grid.path.display()
                )))
            }
        },
    };
    let plan = Plan::expand(&grid, &base)?;
    // What plan writes, run must read.
    let text = plan.to_jsonl();
    let bytes = text.len() as u64;
    if bytes > MAX_TEXT_FILE_BYTES {
        return Err(JobError::msg(format!(
            "{}: the plan of {} runs would be {} MiB, over the {} MiB a plan file may hold (what `sweep run` reads): split the grid",
            grid.path.display(),
            plan.lines.len(),
            bytes.div_ceil(1 << 20),
            MAX_TEXT_FILE_BYTES >> 20
        )));
    }
    let mut inputs = vec![("GRID".to_string(), grid.path.clone())];
    inputs.extend(
        grid.base_file
            .iter()
            .map(|p| ("the grid's base".to_string(), p.clone())),
    );
    let mut seen = std::collections::BTreeSet::new();
    for f in plan.lines.iter().flat_map(|l| &l.inputs) {
        if seen.insert(&f.path) {
            inputs.push(("a run's input".to_string(), f.path.clone()));
        }
    }
    Ok(Planned { plan, text, inputs })
}

/// `aisim sweep run PLAN --out DIR`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRunRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The plan file (`sweep plan` writes it).
    pub plan: PathBuf,
    /// The results folder.
    pub out: PathBuf,
    /// The shard to run, I/N (0-based) [default: from Slurm or Kubernetes, else all].
    #[serde(default)]
    pub shard: Option<String>,
    /// Shards of a Kubernetes Indexed Job.
    #[serde(default)]
    pub shards: Option<u64>,
    /// Threads [default: the machine's].
    #[serde(default)]
    pub threads: Option<usize>,
    /// Keep each run's whole report in its result.
    #[serde(default)]
    pub full_report: bool,
}

/// A shard of a plan, checked and ready to run: what it holds is known
/// before anything runs, so a front end can say so (and size its progress).
pub struct SweepRunJob {
    plan: Plan,
    request: SweepRunRequest,
    /// The shard this process runs.
    pub shard: Shard,
    /// The threads it runs on.
    pub threads: usize,
}

impl SweepRunJob {
    /// Reads the plan and picks the shard: `request.shard`, else the job
    /// array's variables read through `env`.
    pub fn new(
        request: SweepRunRequest,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<SweepRunJob, JobError> {
        if request.out.as_os_str() == "-" {
            return Err(JobError::msg(
                "--out -: sweep run writes a results folder, not stdout; give a folder",
            ));
        }
        let flag = request.shard.as_deref().map(Shard::parse).transpose()?;
        let shard = Shard::select(flag, request.shards, env)?;
        let threads = threads(request.threads)?;
        let plan = Plan::read(&request.plan)?;
        Ok(SweepRunJob {
            plan,
            request,
            shard,
            threads,
        })
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The shard's runs, and which are in the results folder already.
    pub fn pending(&self) -> Result<Pending<'_>, JobError> {
        Ok(Pending::find(
            &self.plan,
            &self.request.plan,
            &self.request.out,
            self.shard,
            self.request.full_report,
        )?)
    }

    /// Runs what `pending` left, calling `finished` with each result.
    pub fn run(
        &self,
        pending: Pending<'_>,
        finished: &(dyn Fn(&RunResult) + Sync),
    ) -> Result<RunSummary, JobError> {
        let options = RunOptions {
            threads: self.threads,
            full_report: self.request.full_report,
        };
        Ok(pending.run(options, finished)?)
    }
}

/// Runs `sweep run` with the process's environment.
pub fn sweep_run(r: &SweepRunRequest) -> Result<RunSummary, JobError> {
    let job = SweepRunJob::new(r.clone(), &|name| std::env::var_os(name))?;
    let pending = job.pending()?;
    job.run(pending, &|_| {})
}

/// `aisim sweep merge DIR...`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SweepMergeRequest {
    /// Request version.
    pub version: Version,
    /// Results folders of one plan (at least one).
    pub dirs: Vec<PathBuf>,
    /// Pick the best run (cheapest holding the SLOs).
    pub best: bool,
    /// TTFT p99 limit, ms.
    pub sla_ttft_ms: Option<f64>,
    /// TPOT p99 limit, ms.
    pub sla_tpot_ms: Option<f64>,
    /// E2E p99 limit, ms.
    pub sla_e2e_ms: Option<f64>,
}

/// The merged results, and the best run.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Every run of the plan, by index.
    pub results: Vec<RunResult>,
    /// The best run (its index in `results`) and what "cheapest" meant, when asked for.
    pub best: Option<(Option<usize>, CostBasis)>,
}

impl SweepMergeRequest {
    /// The SLOs, each a finite number above 0.
    pub fn slo(&self) -> Result<Slo, JobError> {
        let slo = Slo {
            ttft_ms: self.sla_ttft_ms,
            tpot_ms: self.sla_tpot_ms,
            e2e_ms: self.sla_e2e_ms,
        };
        for (flag, v) in [
            ("--slo-ttft-ms", slo.ttft_ms),
            ("--slo-tpot-ms", slo.tpot_ms),
            ("--slo-e2e-ms", slo.e2e_ms),
        ] {
            if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(JobError::msg(format!(
                    "{flag} {v}: must be a finite number above 0"
                )));
            }
        }
        Ok(slo)
    }
}

/// Runs `sweep merge`.
pub fn sweep_merge(r: &SweepMergeRequest) -> Result<Merged, JobError> {
    let slo = r.slo()?;
    if r.dirs.is_empty() {
        return Err(JobError::msg(
            "no results folder given: name at least one DIR",
        ));
    }
    let found = sweep::read_results(&r.dirs)?;
    let results = sweep::merge(&r.dirs, found)?;
    let best = r.best.then(|| {
        let (best, basis) = sweep::best(&results, &slo);
        let index = best.and_then(|b| results.iter().position(|x| std::ptr::eq(x, b)));
        (index, basis)
    });
    Ok(Merged { results, best })
}

/// `aisim sweep saturate`: a replay spec and the range to search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaturateRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The replay (the spec `aisim replay --print-spec` writes).
    pub spec: ReplaySpec,
    /// Arrival rates to search, `LO..HI` req/s (a generated workload's rate).
    #[serde(default)]
    pub rate_range: Option<String>,
    /// Speedups to search, `LO..HI` (a trace's `admission.speedup`).
    #[serde(default)]
    pub speedup_range: Option<String>,
    /// Least share of the offered cohort within every SLO limit.
    #[serde(default = "default_attainment")]
    pub attainment: f64,
    /// Relative width of the bracket at which the search stops.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Most probes.
    #[serde(default = "default_max_probes")]
    pub max_probes: u32,
    /// Probes of the first sweep over the range.
    #[serde(default = "default_points")]
    pub points: u32,
    /// Threads [default: the machine's].
    #[serde(default)]
    pub threads: Option<usize>,
}

fn default_attainment() -> f64 {
    0.9
}

fn default_tolerance() -> f64 {
    0.01
}

fn default_max_probes() -> u32 {
    20
}

fn default_points() -> u32 {
    5
}

impl SaturateRequest {
    /// What to search: exactly one range, parsed as the CLI parses it.
    pub fn saturation(&self) -> Result<Saturation, JobError> {
        let range = |flag: &str, text: &str| -> Result<Range, JobError> {
            text.parse::<Range>()
                .map_err(|e| JobError::msg(format!("{flag} {text}: {e}")))
        };
        let (axis, range) = match (&self.rate_range, &self.speedup_range) {
            (Some(r), None) => (Axis::Rate, range("--rate-range", r)?),
            (None, Some(r)) => (Axis::Speedup, range("--speedup-range", r)?),
            _ => {
                return Err(JobError::msg(
                    "give exactly one of --rate-range and --speedup-range",
                ))
            }
        };
        Ok(Saturation {
            axis,
            range,
            search: SearchSettings {
                points: self.points,
                tolerance: self.tolerance,
                max_probes: self.max_probes,
            },
            attainment: self.attainment,
        })
    }
}

/// Runs `sweep saturate`: the search's report (whether or not it found an answer).
pub fn sweep_saturate(r: &SaturateRequest) -> Result<SaturateReport, JobError> {
    let s = r.saturation()?;
    let threads = threads(r.threads)?;
    Ok(saturate::saturate(&r.spec, &s, threads, &SpecComposition)?)
}

/// The flag of a search's range.
pub fn range_flag(axis: Axis) -> &'static str {
    match axis {
        Axis::Rate => "--rate-range",
        Axis::Speedup => "--speedup-range",
    }
}

/// Refuses the replay flags `sweep saturate` sets itself or cannot use:
/// `given`, the flags given among `--seeds`, `--speedup`, `--rate` and a
/// front end's one-run outputs (`--per-request`, `--print-spec`).
pub fn check_saturate_flags(given: &[&str], axis: Axis) -> Result<(), JobError> {
    let range = range_flag(axis);
    for flag in given {
        let why = match *flag {
            "--speedup" => {
                format!("{range} sets the rate (a trace's through admission.speedup)")
            }
            "--rate" if axis == Axis::Rate => {
                format!("{range} sets the generated workload's rate")
            }
            "--rate" => continue, // the generated workload's rate at speedup 1
            _ => "it writes one replay's outputs; the search runs many".to_string(),
        };
        return Err(JobError::msg(format!(
            "{flag} has no effect with sweep saturate: {why}"
        )));
    }
    Ok(())
}

/// A search's failure named by the flag behind it: a setting's own flag,
/// the range's for a probe that failed.
pub fn blame_saturate(e: JobError, axis: Axis) -> JobError {
    match e.into_boxed().downcast::<saturate::SaturateError>() {
        Ok(e) => match *e {
            saturate::SaturateError::Setting { setting, reason } => {
                JobError::msg(format!("--{}: {reason}", setting.replace('_', "-")))
            }
            e @ saturate::SaturateError::Probe { .. } => {
                let message = format!("{}: {e}", range_flag(axis));
                JobError::from(e).context(message)
            }
            e => e.into(),
        },
        Err(other) => JobError::from_boxed(other),
    }
}

/// A whole sweep in one call (the Python module's `sweep`, the service's
/// `sweep` job): the grid planned into `out/plan.jsonl`, every run into
/// `out` (runs already there are kept, so a rerun resumes), then merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The grid file (JSON or TOML, docs/sweeps.md); its base is a spec (`base`).
    pub grid: PathBuf,
    /// The results folder (made when missing).
    pub out: PathBuf,
    /// Threads [default: the machine's].
    #[serde(default)]
    pub threads: Option<usize>,
    /// Keep each run's whole report in its result.
    #[serde(default)]
    pub full_report: bool,
    /// Pick the best run (cheapest holding the SLOs).
    #[serde(default)]
    pub best: bool,
    /// TTFT p99 limit, ms.
    #[serde(default)]
    pub sla_ttft_ms: Option<f64>,
    /// TPOT p99 limit, ms.
    #[serde(default)]
    pub sla_tpot_ms: Option<f64>,
    /// E2E p99 limit, ms.
    #[serde(default)]
    pub sla_e2e_ms: Option<f64>,
}

/// A whole sweep's outcome.
#[derive(Debug, Clone)]
pub struct Swept {
    /// The merged results (every run of the plan) and the best run.
    pub merged: Merged,
    /// The SLOs the runs were held to.
    pub slo: Slo,
    /// The request of the shard that ran (what reproduces it).
    pub run: SweepRunRequest,
}

/// Runs a whole sweep, telling `progress` of the runs done of all (those
/// found in `out` already count as done).
pub fn sweep(r: &SweepRequest, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<Swept, JobError> {
    let merge = SweepMergeRequest {
        version: Version::CURRENT,
        dirs: vec![r.out.clone()],
        best: r.best,
        sla_ttft_ms: r.sla_ttft_ms,
        sla_tpot_ms: r.sla_tpot_ms,
        sla_e2e_ms: r.sla_e2e_ms,
    };
    let slo = merge.slo()?;
    let planned = sweep_plan(
        &SweepPlanRequest {
            version: Version::CURRENT,
            grid: r.grid.clone(),
        },
        None,
    )?;
    std::fs::create_dir_all(&r.out).map_err(|e| {
        JobError::from(e).context(format!("creating the results folder {}", r.out.display()))
    })?;
    let plan_path = r.out.join("plan.jsonl");
    std::fs::write(&plan_path, planned.text.as_bytes()).map_err(|e| {
        JobError::from(e).context(format!("writing the plan {}", plan_path.display()))
    })?;
    let run = SweepRunRequest {
        version: Version::CURRENT,
        plan: plan_path,
        out: r.out.clone(),
        shard: Some("0/1".into()),
        shards: None,
        threads: r.threads,
        full_report: r.full_report,
    };
    let job = SweepRunJob::new(run.clone(), &|_| None)?;
    let pending = job.pending()?;
    let total = (pending.done.len() + pending.todo.len()) as u64;
    let done = std::sync::atomic::AtomicU64::new(pending.done.len() as u64);
    progress(done.load(std::sync::atomic::Ordering::Relaxed), total);
    job.run(pending, &|_| {
        let now = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(now, total);
    })?;
    let merged = sweep_merge(&merge)?;
    Ok(Swept { merged, slo, run })
}
