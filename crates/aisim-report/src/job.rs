//! A job by its kind's name and its request as JSON: the one library call,
//! and what every front end that takes requests (the service) hands back:
//! the report as `--format json` writes it, the page `--html` writes, and a
//! replay's per-request records. The request is exactly the library's (for
//! a replay the spec `aisim replay --print-spec` writes), so the bytes are
//! the CLI's for the same request.

use std::io::Write;

use aisim_lab::jobs::fidelity::{self, CalibrateRequest, ValidateRequest};
use aisim_lab::jobs::replay::{ReplayJob, ReplayOutputs, SeedsRequest};
use aisim_lab::jobs::sweep::{self as sweep_jobs, SaturateRequest, SweepRequest};
use aisim_lab::jobs::{fleet, from_value_named, JobError};
use aisim_replay::collector::RequestRecord;
use aisim_replay::per_request::{RowFormat, RowWriter};
use aisim_replay::runtime::ReplayObserver;
use aisim_replay::ReplaySpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The jobs a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// `aisim replay` (request: the spec).
    Replay,
    /// `aisim replay --seeds N`.
    Seeds,
    /// `aisim sweep plan`, `run` and `merge` in one.
    Sweep,
    /// `aisim sweep saturate`.
    Saturate,
    /// `aisim optimize`.
    Optimize,
    /// `aisim pareto`.
    Pareto,
    /// `aisim disagg`.
    Disagg,
    /// `aisim simulate`.
    Simulate,
    /// `aisim whatif`.
    Whatif,
    /// `aisim validate`.
    Validate,
    /// `aisim calibrate`.
    Calibrate,
}

impl JobKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [JobKind; 11] = [
        JobKind::Replay,
        JobKind::Seeds,
        JobKind::Sweep,
        JobKind::Saturate,
        JobKind::Optimize,
        JobKind::Pareto,
        JobKind::Disagg,
        JobKind::Simulate,
        JobKind::Whatif,
        JobKind::Validate,
        JobKind::Calibrate,
    ];

    /// The kind's name, as requests write it.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Replay => "replay",
            JobKind::Seeds => "seeds",
            JobKind::Sweep => "sweep",
            JobKind::Saturate => "saturate",
            JobKind::Optimize => "optimize",
            JobKind::Pareto => "pareto",
            JobKind::Disagg => "disagg",
            JobKind::Simulate => "simulate",
            JobKind::Whatif => "whatif",
            JobKind::Validate => "validate",
            JobKind::Calibrate => "calibrate",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Result<JobKind, JobError> {
        JobKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = JobKind::ALL.iter().map(|k| k.name()).collect();
                JobError::msg(format!(
                    "kind `{name}`: not a job; one of {}",
                    names.join(", ")
                ))
            })
    }

    /// What its progress counts.
    pub fn progress_unit(self) -> Option<&'static str> {
        match self {
            JobKind::Replay | JobKind::Seeds => Some("requests"),
            JobKind::Sweep => Some("runs"),
            JobKind::Calibrate => Some("replays"),
            _ => None,
        }
    }
}

/// Where a job tells how far it got and puts its per-request records.
pub trait JobSink: Sync {
    /// `done` of `total` (when known) in the kind's unit.
    fn progress(&self, done: u64, total: Option<u64>);
    /// Where a replay's per-request records go (JSONL, as `--per-request
    /// FILE.jsonl` writes them), if anywhere.
    fn records(&mut self) -> Option<&mut dyn Write>;
}

/// What a job gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutput {
    /// The report, as `--format json` (or `--out FILE`) writes it.
    pub report: String,
    /// The page `--html` writes, for the kinds that have one.
    pub html: Option<String>,
    /// Per-request records written to the sink.
    pub records: u64,
    /// A calibration's fitted coefficients, as `calibrate --out FILE` writes them.
    pub fitted: Option<String>,
}

impl JobOutput {
    fn of<T: Serialize>(report: &T, html: Option<String>) -> JobOutput {
        JobOutput {
            report: crate::to_json(report),
            html,
            records: 0,
            fitted: None,
        }
    }
}

/// Reads `request` as `T`, an error naming the field (`request/plan/lam`).
fn read<T: serde::de::DeserializeOwned>(request: &Value) -> Result<T, JobError> {
    from_value_named("request", request)
}

/// The request of `kind` read from `example` and written back with every
/// field, the defaults filled in: what a form starts from.
pub fn filled_request(kind: JobKind, example: &Value) -> Result<Value, JobError> {
    fn fill<T: serde::de::DeserializeOwned + Serialize>(
        example: &Value,
    ) -> Result<Value, JobError> {
        let r: T = read(example)?;
        Ok(serde_json::to_value(&r).expect("a request is JSON"))
    }
    match kind {
        JobKind::Replay => fill::<ReplaySpec>(example),
        JobKind::Seeds => fill::<SeedsRequest>(example),
        JobKind::Sweep => fill::<SweepRequest>(example),
        JobKind::Saturate => fill::<SaturateRequest>(example),
        JobKind::Optimize => fill::<fleet::OptimizeRequest>(example),
        JobKind::Pareto => fill::<fleet::ParetoRequest>(example),
        JobKind::Disagg => fill::<fleet::DisaggRequest>(example),
        JobKind::Simulate => fill::<fleet::SimulateRequest>(example),
        JobKind::Whatif => fill::<fleet::WhatIfRequest>(example),
        JobKind::Validate => fill::<ValidateRequest>(example),
        JobKind::Calibrate => fill::<CalibrateRequest>(example),
    }
}

/// Checks that `request` reads as `kind`'s request, without running it.
pub fn check_request(kind: JobKind, request: &Value) -> Result<(), JobError> {
    filled_request(kind, request).map(|_| ())
}

/// Runs the job `kind` on `request` (the kind's request), telling `sink`
/// of progress and handing it a replay's records.
pub fn run_job(
    kind: JobKind,
    request: &Value,
    sink: &mut dyn JobSink,
) -> Result<JobOutput, JobError> {
    match kind {
        JobKind::Replay => replay(read(request)?, None, sink),
        JobKind::Seeds => {
            let r: SeedsRequest = read(request)?;
            replay(r.spec, Some(r.seeds), sink)
        }
        JobKind::Sweep => {
            let r: SweepRequest = read(request)?;
            let tell: &dyn JobSink = sink;
            let swept = sweep_jobs::sweep(&r, &|done, total| tell.progress(done, Some(total)))?;
            let results = &swept.merged.results;
            let lines: Vec<serde_json::Value> = aisim_lab::sweep::to_jsonl(results)
                .lines()
                .map(|l| serde_json::from_str(l).expect("a result line is JSON"))
                .collect();
            let slo = swept.slo.is_set().then_some(&swept.slo);
            let html = crate::html::render_sweep_html(results, slo);
            Ok(JobOutput::of(&lines, Some(html)))
        }
        JobKind::Saturate => {
            let r: SaturateRequest = read(request)?;
            let axis = r.saturation()?.axis;
            let report =
                sweep_jobs::sweep_saturate(&r).map_err(|e| sweep_jobs::blame_saturate(e, axis))?;
            let html = crate::html::render_saturate_html(&report);
            Ok(JobOutput::of(&report, Some(html)))
        }
        JobKind::Optimize => plain(request, fleet::optimize),
        JobKind::Pareto => plain(request, fleet::pareto),
        JobKind::Disagg => plain(request, fleet::disagg),
        JobKind::Whatif => plain(request, fleet::whatif),
        JobKind::Validate => plain(request, fidelity::validate),
        JobKind::Simulate => {
            let r: fleet::SimulateRequest = read(request)?;
            let report = fleet::simulate(&r)?;
            let html = crate::html::render_simulate_html(&report);
            Ok(JobOutput::of(&report, Some(html)))
        }
        JobKind::Calibrate => {
            let r: CalibrateRequest = read(request)?;
            let calibrated = fidelity::calibrate_observed(&r, &mut |p| {
                if let aisim_lab::fidelity::calibrate::CalibrationProgress::Replays {
                    done,
                    budget,
                } = p
                {
                    sink.progress(u64::from(done), Some(u64::from(budget)));
                }
            })?;
            let mut out = JobOutput::of(&calibrated.report, None);
            out.fitted = Some(crate::to_json(&calibrated.fitted));
            Ok(out)
        }
    }
}

/// A job whose request is read and whose report is written, nothing else.
fn plain<R, T>(
    request: &Value,
    run: impl Fn(&R) -> Result<T, JobError>,
) -> Result<JobOutput, JobError>
where
    R: serde::de::DeserializeOwned,
    T: Serialize,
{
    let r: R = read(request)?;
    Ok(JobOutput::of(&run(&r)?, None))
}

/// A replay (under `seeds` seeds when given), its records to the sink.
fn replay(
    spec: ReplaySpec,
    seeds: Option<u64>,
    sink: &mut dyn JobSink,
) -> Result<JobOutput, JobError> {
    let outputs = ReplayOutputs {
        cdfs: true,
        stream_records: sink.records().is_some(),
    };
    let job = ReplayJob::new(spec, seeds, outputs)?;
    let mut written = 0u64;
    let output = {
        let mut observer = SinkObserver {
            sink,
            written: &mut written,
        };
        job.run(&mut observer)?
    };
    let html = crate::html::render_replay_html(&output.report, output.cdfs.as_ref());
    let mut out = JobOutput::of(&output.report, Some(html));
    out.records = written;
    Ok(out)
}

/// The replay's observer: progress and records to the sink.
struct SinkObserver<'a> {
    sink: &'a mut dyn JobSink,
    written: &'a mut u64,
}

impl ReplayObserver for SinkObserver<'_> {
    fn progress(&mut self, dispatched: u64, remaining: u64) {
        self.sink.progress(dispatched, Some(dispatched + remaining));
    }

    fn records(&mut self, batch: &[RequestRecord]) -> std::io::Result<()> {
        if let Some(w) = self.sink.records() {
            RowWriter::new(RowFormat::Jsonl, w).write(batch)?;
            *self.written += batch.len() as u64;
        }
        Ok(())
    }
}

/// A sink that keeps nothing.
#[derive(Debug, Default)]
pub struct NoSink;

impl JobSink for NoSink {
    fn progress(&self, _: u64, _: Option<u64>) {}
    fn records(&mut self) -> Option<&mut dyn Write> {
        None
    }
}
