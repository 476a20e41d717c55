//! The fidelity jobs: `validate` (replay measured runs and compare),
//! `calibrate` (fit the physics model to them) and `measured import` (a
//! measured run from per-request measurements).

use std::path::{Path, PathBuf};
use std::time::Instant;

use aisim_core::profile::ComputedProfile;
use aisim_core::timing::{PhysicsTiming, TimingSpec};
use aisim_replay::ReplaySpec;
use serde::{Deserialize, Serialize};

use super::timing_form::{fitted_frontend_ms, parse_timing, timing_flags};
use super::{JobError, Version};
use crate::fidelity::aiperf::read_aiperf;
use crate::fidelity::blis::read_blis;
use crate::fidelity::calibrate::{
    calibrate_observed as fit_runs_observed, runs_at, CalibrateOptions, CalibrationProgress, Fit,
    FittedFile, FITTED_VERSION, FIT_NAMES,
};
use crate::fidelity::guidellm::read_guidellm;
use crate::fidelity::import::{imported, origin_of, read_generic, read_llmservingsim, Imported};
use crate::fidelity::inference_perf::{read_inference_perf, Stage};
use crate::fidelity::measured::MeasuredRun;
use crate::fidelity::sglang_bench::read_sglang_bench;
use crate::fidelity::validate::{validate as validate_runs, RunValidation, ValidationReport};
use crate::fidelity::vllm_bench::read_vllm_bench;

/// `aisim validate RUN.json...` (the runs required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// Measured-run files (docs/fidelity.md).
    pub runs: Vec<PathBuf>,
    /// Timing model instead of each run's (the `--timing` forms).
    #[serde(default)]
    pub timing: Option<String>,
    /// Profile of `timing` physics / fitted:FILE (else each run's); alone, its iteration timing.
    #[serde(default)]
    pub profile: Option<String>,
}

/// The files measured runs read, named for an error: each run file, and the
/// trace and per-request file it names. No output may be one of them.
pub fn run_inputs(paths: &[PathBuf]) -> Result<Vec<(String, PathBuf)>, JobError> {
    let mut files = Vec::new();
    for p in paths {
        let run = MeasuredRun::from_file(p)?;
        files.push(("RUN.json".to_string(), p.clone()));
        for (field, f) in run.spec.input_files() {
            files.push((format!("{}'s {field}", p.display()), f.to_path_buf()));
        }
        if let Some(r) = &run.requests {
            files.push((format!("{}'s requests", p.display()), r.clone()));
        }
    }
    Ok(files)
}

/// Reads every run.
fn read_runs(paths: &[PathBuf]) -> Result<Vec<MeasuredRun>, JobError> {
    if paths.is_empty() {
        return Err(JobError::msg(
            "no measured run given: name at least one RUN.json",
        ));
    }
    paths
        .iter()
        .map(|p| Ok(MeasuredRun::from_file(p)?))
        .collect()
}

/// The runs with `timing` / `profile` applied (each over its own spec's timing).
fn with_timing(
    mut runs: Vec<MeasuredRun>,
    timing: Option<&str>,
    profile: Option<&str>,
) -> Result<Vec<MeasuredRun>, JobError> {
    let frontend = fitted_frontend_ms(timing)?;
    for run in &mut runs {
        if let Some(t) = timing_flags(timing, profile, &run.spec.timing)
            .map_err(|e| e.context(format!("run `{}`", run.name)))?
        {
            if let Some(w) = t.fit_warning() {
                tracing::warn!("run {}: {w}", run.name);
            }
            run.spec.timing = t;
        }
        if let Some(ms) = frontend {
            run.set_frontend_ms(ms);
        }
    }
    Ok(runs)
}

/// Runs `validate`.
pub fn validate(r: &ValidateRequest) -> Result<ValidationReport, JobError> {
    let runs = with_timing(
        read_runs(&r.runs)?,
        r.timing.as_deref(),
        r.profile.as_deref(),
    )?;
    Ok(validate_runs(&runs, None)?)
}

/// `aisim calibrate RUN.json... --out FITTED.json` (the runs required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrateRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// Measured-run files; each needs a physics (or profile) timing.
    pub runs: Vec<PathBuf>,
    /// Coefficients to fit [default: all the runs exercise].
    #[serde(default)]
    pub fit: Option<Vec<String>>,
    /// Start from these coefficients (physics or fitted:FILE) [default: physics].
    #[serde(default)]
    pub timing: Option<String>,
    /// Most replays of the set of runs [default: 200].
    #[serde(default)]
    pub max_evaluations: Option<u32>,
    /// Runs not fitted to: the fit's error is reported on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holdout: Vec<PathBuf>,
    /// Also fit on every run but one, for each run, and report the error on
    /// the one left out.
    #[serde(default)]
    pub cross_validate: bool,
}

/// What `aisim calibrate` reports: the fit, and each run's errors under it.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationReport {
    /// The fit.
    pub fit: Fit,
    /// Every run validated at the start and at the fit.
    pub zero_shot: ValidationReport,
    /// The same with the fitted coefficients.
    pub calibrated: ValidationReport,
    /// The `holdout` runs, zero-shot and under the fit (not fitted to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holdout: Option<Holdout>,
    /// Leave-one-run-out: per run, the fit on the others and its error on
    /// the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_validation: Option<Vec<Fold>>,
    /// Wall-clock facts (not deterministic).
    pub host: CalibrationHost,
}

/// Runs the fit was not fitted to, before and under it.
#[derive(Debug, Clone, Serialize)]
pub struct Holdout {
    /// Zero-shot (the start).
    pub zero_shot: ValidationReport,
    /// Under the fit.
    pub calibrated: ValidationReport,
}

/// One fold of the leave-one-run-out check.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    /// The run left out.
    pub held_out: String,
    /// Its errors at the start.
    pub zero_shot: RunValidation,
    /// Its errors under the fit on the other runs (absent when that fit was
    /// refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<RunValidation>,
    /// The fit on the other runs (absent when it was refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    /// Why the fit on the other runs was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// How long the fit took.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationHost {
    /// Seconds of wall clock.
    pub wall_s: f64,
}

/// A calibration's report and the file `--timing fitted:FILE` reads.
#[derive(Debug, Clone)]
pub struct Calibrated {
    /// The report.
    pub report: CalibrationReport,
    /// The fitted coefficients, as written to `--out`.
    pub fitted: FittedFile,
}

/// Runs `calibrate`.
pub fn calibrate(r: &CalibrateRequest) -> Result<Calibrated, JobError> {
    calibrate_observed(r, &mut |_| {})
}

/// [`calibrate`], telling `observe` of each replay of the runs in a search
/// (the fit's, then each fold's) and of each stage as it ends (the zero-shot
/// validation, each round of the search, the calibrated validation, the
/// held-out runs, each fold).
pub fn calibrate_observed(
    r: &CalibrateRequest,
    observe: &mut dyn FnMut(CalibrationProgress),
) -> Result<Calibrated, JobError> {
    let started = Instant::now();
    let runs = read_runs(&r.runs)?;
    let holdout = if r.holdout.is_empty() {
        None
    } else {
        Some(read_runs(&r.holdout)?)
    };
    if r.cross_validate && runs.len() < 2 {
        return Err(JobError::msg(
            "--cross-validate needs two runs or more: each is left out of a fit on the others",
        ));
    }
    let mut options = CalibrateOptions::for_runs(&runs);
    if let Some(t) = &r.timing {
        let spec = parse_timing(t, None, &runs[0].spec.timing)?;
        let TimingSpec::Physics { coefficients, .. } = spec else {
            return Err(JobError::msg(format!(
                "--timing {t}: calibration starts from physics or fitted:FILE"
            )));
        };
        options.start = coefficients;
        options.start_frontend_ms = fitted_frontend_ms(Some(t))?;
    }
    if let Some(fit) = &r.fit {
        options.fit = Vec::new();
        options.fit_given = true;
        for name in fit {
            let known = FIT_NAMES
                .iter()
                .find(|n| **n == name.trim())
                .ok_or_else(|| {
                    JobError::msg(format!(
                        "--fit {name}: not a coefficient; use {}",
                        FIT_NAMES.join(", ")
                    ))
                })?;
            options.fit.push(known);
        }
    }
    if let Some(n) = r.max_evaluations {
        if n == 0 {
            return Err(JobError::msg(
                "--max-evaluations 0: at least 1 replay is needed",
            ));
        }
        options.max_evaluations = n;
    }
    let start = (options.start, options.start_frontend_ms);
    let zero_shot = validate_runs(&runs_at(&runs, start.0, start.1)?, None)?;
    observe(CalibrationProgress::Stage(format!(
        "zero-shot: mean absolute error {} % over {} run(s)",
        overall(&zero_shot),
        runs.len()
    )));
    let fit = fit_runs_observed(&runs, &options, observe)?;
    let calibrated = validate_runs(&runs_at(&runs, fit.coefficients, fit.frontend_ms)?, None)?;
    observe(CalibrationProgress::Stage(format!(
        "calibrated: mean absolute error {} %",
        overall(&calibrated)
    )));
    // A fitted file is usable only if the model accepts it.
    PhysicsTiming::new(
        &ComputedProfile::from_key(runs[0].spec.timing.profile_key().unwrap_or_default())?,
        fit.coefficients,
    )?;
    let holdout = match holdout {
        None => None,
        Some(h) => {
            let report = Holdout {
                zero_shot: validate_runs(&runs_at(&h, start.0, start.1)?, None)?,
                calibrated: validate_runs(&runs_at(&h, fit.coefficients, fit.frontend_ms)?, None)?,
            };
            observe(CalibrationProgress::Stage(format!(
                "held out: mean absolute error {} % zero-shot, {} % under the fit",
                overall(&report.zero_shot),
                overall(&report.calibrated)
            )));
            Some(report)
        }
    };
    let cross_validation = if r.cross_validate {
        let mut folds = Vec::new();
        for (k, left) in runs.iter().enumerate() {
            let others: Vec<MeasuredRun> = runs
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, r)| r.clone())
                .collect();
            let one = std::slice::from_ref(left);
            let zero = validate_runs(&runs_at(one, start.0, start.1)?, None)?;
            let mut fold_options = options.clone();
            if !options.fit_given {
                fold_options.fit = CalibrateOptions::for_runs(&others).fit;
            }
            // A fold's search shows its replays, not its stages.
            let mut replays = |p: CalibrationProgress| {
                if let CalibrationProgress::Replays { .. } = p {
                    observe(p);
                }
            };
            let (fit, refused) = match fit_runs_observed(&others, &fold_options, &mut replays) {
                Ok(f) => (Some(f), None),
                Err(e @ crate::fidelity::FidelityError::Overloaded { .. }) => {
                    (None, Some(e.to_string()))
                }
                Err(e) => return Err(e.into()),
            };
            let calibrated = match &fit {
                Some(f) => Some(
                    validate_runs(&runs_at(one, f.coefficients, f.frontend_ms)?, None)?
                        .runs
                        .remove(0),
                ),
                None => None,
            };
            observe(CalibrationProgress::Stage(format!(
                "cross-validation: {} left out, mean absolute error {} % zero-shot, {} under the fit on the others",
                left.name,
                overall(&zero),
                calibrated
                    .as_ref()
                    .and_then(|c| c.mape_pct.get("overall"))
                    .map_or("refused".into(), |x| format!("{x:.2} %"))
            )));
            folds.push(Fold {
                held_out: left.name.clone(),
                zero_shot: zero.runs.into_iter().next().expect("one run validated"),
                calibrated,
                fit,
                refused,
            });
        }
        Some(folds)
    } else {
        None
    };
    Ok(Calibrated {
        fitted: FittedFile {
            version: FITTED_VERSION,
            coefficients: fit.coefficients,
            frontend_ms: fit.frontend_ms,
            profiles: runs
                .iter()
                .filter_map(|r| r.spec.timing.profile_key().map(str::to_string))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            fit: Some(fit.clone()),
        },
        report: CalibrationReport {
            fit,
            zero_shot,
            calibrated,
            holdout,
            cross_validation,
            host: CalibrationHost {
                wall_s: started.elapsed().as_secs_f64(),
            },
        },
    })
}

/// A validation's overall mean absolute error, two decimals (`n/a` without one).
fn overall(v: &ValidationReport) -> String {
    v.mape_pct
        .get("overall")
        .map_or("n/a".into(), |x| format!("{x:.2}"))
}

/// What a measured run is imported from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportSource {
    /// The generic per-request shape (JSONL or CSV, docs/fidelity.md).
    #[default]
    Generic,
    /// An LLMServingSim run folder (requests.jsonl, meta.json, trace_mooncake_b16.jsonl).
    Llmservingsim,
    /// An inference-perf run folder (results/config.yaml, the stages'
    /// lifecycle metrics, exp-config.yaml): summaries only.
    InferencePerf,
    /// `vllm bench serve --save-result --save-detailed`'s result JSON.
    VllmBench,
    /// AIPerf's `profile_export.jsonl` (or its artifact folder).
    Aiperf,
    /// GuideLLM's benchmarks report (`benchmarks.json` or `.yaml`, or its
    /// folder), one benchmark of it.
    Guidellm,
    /// SGLang's `bench_serving --output-details` results (JSONL), one run
    /// of it, when it has send times.
    SglangBench,
    /// A BLIS TraceV2 (its YAML header and CSV data, or their folder).
    Blis,
}

impl ImportSource {
    /// Its name on the command line (`--from`).
    fn flag(self) -> &'static str {
        match self {
            ImportSource::Generic => "generic",
            ImportSource::Llmservingsim => "llmservingsim",
            ImportSource::InferencePerf => "inference-perf",
            ImportSource::VllmBench => "vllm-bench",
            ImportSource::Aiperf => "aiperf",
            ImportSource::Guidellm => "guidellm",
            ImportSource::SglangBench => "sglang-bench",
            ImportSource::Blis => "blis",
        }
    }
}

/// `aisim measured import INPUT --out RUN.json` (both required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// Per-request file, or with `from: llmservingsim` the run folder.
    pub input: PathBuf,
    /// What `input` is [default: generic].
    #[serde(default)]
    pub from: Option<ImportSource>,
    /// The measured-run file the import is for; its trace and per-request
    /// file are named beside it.
    pub out: PathBuf,
    /// Name of the run [default: the file name of `out` without .json].
    #[serde(default)]
    pub name: Option<String>,
    /// Profile of the run's physics timing (HARDWARE/MODEL[/tpN]).
    #[serde(default)]
    pub profile: Option<String>,
    /// Take the run's spec (engine, timing, ...) from this measured run.
    #[serde(default)]
    pub spec_from: Option<PathBuf>,
    /// Tokens per prompt block of the hash ids (generic files) [default: 16].
    #[serde(default)]
    pub trace_block_size: Option<u32>,
    /// With `from: inference_perf`: the stage (0-based) or `summary`.
    #[serde(default)]
    pub stage: Option<String>,
    /// With `from: guidellm`: the benchmark of the report; with `from:
    /// sglang_bench`: the run (line) of the file (0-based).
    #[serde(default)]
    pub benchmark: Option<usize>,
}

/// Runs `measured import`: the measured run, its trace and its per-request
/// file, with the paths they are to be written to (nothing is written here).
pub fn measured_import(a: &ImportRequest) -> Result<Imported, JobError> {
    let from = a.from.unwrap_or_default();
    if a.stage.is_some() && from != ImportSource::InferencePerf {
        return Err(JobError::msg(
            "--stage has no effect here: it picks a stage of an inference-perf run (--from inference-perf)",
        ));
    }
    if a.benchmark.is_some() && !matches!(from, ImportSource::Guidellm | ImportSource::SglangBench)
    {
        return Err(JobError::msg(
            "--benchmark has no effect here: it picks a benchmark of a GuideLLM report (--from guidellm) or a run of an SGLang results file (--from sglang-bench)",
        ));
    }
    let name = a.name.clone().unwrap_or_else(|| run_name(&a.out));
    if from == ImportSource::InferencePerf {
        let stage: Stage = a
            .stage
            .as_deref()
            .ok_or_else(|| {
                JobError::msg("--from inference-perf needs --stage N (0-based) or --stage summary")
            })?
            .parse()
            .map_err(|e: String| JobError::msg(format!("--stage {e}")))?;
        let profile = a.profile.as_deref().ok_or_else(|| {
            JobError::msg("--from inference-perf needs --profile HARDWARE/MODEL[/tpN]: the run's files name no hardware")
        })?;
        let mut spec = match &a.spec_from {
            Some(p) => MeasuredRun::from_file(p)?.spec,
            None => ReplaySpec::default(),
        };
        if let Some(t) = timing_flags(Some("physics"), Some(profile), &spec.timing)? {
            spec.timing = t;
        }
        let block = a.trace_block_size.unwrap_or(16);
        if block == 0 {
            return Err(JobError::msg(
                "--trace-block-size 0: at least 1 token per block",
            ));
        }
        return Ok(read_inference_perf(
            &a.input, stage, spec, &a.out, &name, block,
        )?);
    }
    if matches!(
        from,
        ImportSource::VllmBench
            | ImportSource::Aiperf
            | ImportSource::Guidellm
            | ImportSource::SglangBench
            | ImportSource::Blis
    ) {
        return bench_import(a, from, &name);
    }
    let (requests, spec, block, origin) = match from {
        ImportSource::Llmservingsim => {
            if a.trace_block_size.is_some() {
                return Err(JobError::msg("--trace-block-size has no effect with --from llmservingsim: its trace has 16-token blocks"));
            }
            if a.spec_from.is_some() {
                return Err(JobError::msg("--spec-from has no effect with --from llmservingsim: the spec comes from its meta.json"));
            }
            let (r, s) = read_llmservingsim(&a.input, a.profile.as_deref())?;
            let origin = origin_of("llmservingsim", &r);
            (r, s, 16, origin)
        }
        ImportSource::InferencePerf
        | ImportSource::VllmBench
        | ImportSource::Aiperf
        | ImportSource::Guidellm
        | ImportSource::SglangBench
        | ImportSource::Blis => unreachable!("imported above"),
        ImportSource::Generic => {
            let block = a.trace_block_size.unwrap_or(16);
            if block == 0 {
                return Err(JobError::msg(
                    "--trace-block-size 0: at least 1 token per block",
                ));
            }
            let mut spec = match &a.spec_from {
                Some(p) => MeasuredRun::from_file(p)?.spec,
                None => ReplaySpec::default(),
            };
            if a.profile.is_some() {
                if let Some(t) = timing_flags(Some("physics"), a.profile.as_deref(), &spec.timing)?
                {
                    spec.timing = t;
                }
            }
            let r = read_generic(&a.input)?;
            let origin = origin_of("generic", &r);
            (r, spec, block, origin)
        }
    };
    Ok(imported(&a.out, &name, spec, &requests, block, origin))
}

/// A load generator's result file as a measured run: its spec from
/// `--spec-from` and `--profile` (one of them needed: the files name no
/// hardware), served over HTTP, streaming, as these clients measure.
fn bench_import(a: &ImportRequest, from: ImportSource, name: &str) -> Result<Imported, JobError> {
    let flag = from.flag();
    if a.trace_block_size.is_some()
        && matches!(
            from,
            ImportSource::VllmBench | ImportSource::SglangBench | ImportSource::Guidellm
        )
    {
        return Err(JobError::msg(format!(
            "--trace-block-size has no effect with --from {flag}: its file keeps no prompt to hash"
        )));
    }
    if a.profile.is_none() && a.spec_from.is_none() {
        return Err(JobError::msg(format!(
            "--from {flag} needs --profile HARDWARE/MODEL[/tpN] (or --spec-from RUN.json): the file names no hardware"
        )));
    }
    let mut spec = match &a.spec_from {
        Some(p) => MeasuredRun::from_file(p)?.spec,
        None => ReplaySpec::default(),
    };
    if a.profile.is_some() {
        if let Some(t) = timing_flags(Some("physics"), a.profile.as_deref(), &spec.timing)? {
            spec.timing = t;
        }
    }
    let block = a.trace_block_size.unwrap_or(16);
    if block == 0 {
        return Err(JobError::msg(
            "--trace-block-size 0: at least 1 token per block",
        ));
    }
    let run = match from {
        ImportSource::VllmBench => {
            if a.input.is_dir() {
                return Err(JobError::msg(format!(
                    "--from vllm-bench reads one result file, and {} is a folder: name the JSON `vllm bench serve --save-result --save-detailed` wrote",
                    a.input.display()
                )));
            }
            read_vllm_bench(&a.input)?
        }
        ImportSource::Aiperf => read_aiperf(&a.input, block)?,
        ImportSource::Guidellm => read_guidellm(&a.input, a.benchmark)?,
        ImportSource::SglangBench => {
            if a.input.is_dir() {
                return Err(JobError::msg(format!(
                    "--from sglang-bench reads one results file, and {} is a folder: name the JSONL `python -m sglang.bench_serving --output-details` wrote",
                    a.input.display()
                )));
            }
            read_sglang_bench(&a.input, a.benchmark)?
        }
        ImportSource::Blis => read_blis(&a.input, block)?,
        _ => unreachable!("a load generator's file"),
    };
    let mut i = imported(&a.out, name, spec, &run.requests, block, run.origin);
    i.run.served = run.served;
    Ok(i)
}

/// A run's default name: its file name without `.json`.
fn run_name(out: &Path) -> String {
    out.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
