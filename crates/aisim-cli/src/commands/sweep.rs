//! `aisim sweep plan / run / merge` (docs/sweeps.md): a grid of replay
//! specs planned into one line per run, run in shards on a thread pool,
//! merged back into one file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use aisim_lab::jobs::sweep::{
    sweep_merge, sweep_plan, SweepMergeRequest, SweepPlanRequest, SweepRunJob, SweepRunRequest,
};
use aisim_lab::jobs::{JobError, Version};
use aisim_lab::sweep::{self, Grid, RunResult, SweepError};
use aisim_replay::ReplaySpec;

use crate::commands::replay::ReplayArgs;
use crate::exit::{input, CliError};
use crate::output::{check_paths, Target};

/// Flags of `aisim sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    command: SweepCommand,
}

#[derive(Debug, Subcommand)]
enum SweepCommand {
    /// Expand a grid file into a plan: one JSON line per run, each checked.
    ///
    /// GRID (.json or .toml, docs/sweeps.md) is a base spec (`base`: inline,
    /// or a spec file's path; or `base_args`: `aisim replay` flags) and
    /// `axes`, dotted spec fields with a list of values or an inclusive
    /// range "LO..HI". The plan is their cross product, the first axis
    /// varying slowest, less the `exclude` combinations; every run's spec is
    /// checked now (fields, ranges, timing model, engines, traces).
    ///
    /// Example:
    ///   aisim sweep plan grid.toml --out plan.jsonl
    #[command(verbatim_doc_comment)]
    Plan(PlanArgs),
    /// Run a plan's runs (or one shard's) on a thread pool: DIR/<id>.json each.
    ///
    /// A run whose result is in DIR already is skipped, so a killed or
    /// preempted run is finished by running the same command again. Without
    /// --shard, a Slurm job array's SLURM_ARRAY_TASK_ID / _COUNT / _MIN give
    /// the shard, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with
    /// --shards N; else the whole plan runs. When DIR then holds every run,
    /// DIR/results.jsonl is written, as `sweep merge` would.
    ///
    /// Examples:
    ///   aisim sweep run plan.jsonl --out results/
    ///   aisim sweep run plan.jsonl --out results/ --shard 0/4 --threads 2
    #[command(verbatim_doc_comment)]
    Run(RunArgs),
    /// Merge result folders into one JSONL file sorted by id (CSV, HTML, best).
    ///
    /// Every run of the plan must be present exactly once in the DIRs; the
    /// ids missing or duplicated are listed (exit 2). The file is byte for
    /// byte what one `sweep run` of the whole plan leaves in DIR/results.jsonl.
    /// A run meets the SLOs when every request completed and the p99 of each
    /// latency given is at or below its limit; --best prints the cheapest
    /// such run (dollars when every run's profile has a price, else GPU-hours;
    /// ties to the lowest id), or says that none does (exit 0).
    ///
    /// Example:
    ///   aisim sweep merge shard-*/ --out results.jsonl --csv results.csv --best --slo-ttft-ms 2000
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
    /// The highest arrival rate at which the SLOs hold, by bisection.
    ///
    /// Replays the workload at rates over the range: evenly spaced points
    /// (--points), then bisection of the first holding/failing pair to
    /// --tolerance. A rate holds when at least --attainment of the offered
    /// cohort completes within every --slo-*-ms limit and at least 99 % of it
    /// completes (docs/sweeps.md). Prints the answer and every probe's
    /// throughput, goodput and TTFT / TPOT percentiles; exits 2, after
    /// writing the outputs, when the range does not bracket the answer or
    /// the probes run out before the tolerance.
    ///
    /// Examples:
    ///   aisim sweep saturate --synthetic --rate-range 1..50 --slo-ttft-ms 500
    ///   aisim sweep saturate trace.jsonl --workers 4 --speedup-range 0.5..8 --slo-ttft-ms 2000 --slo-tpot-ms 50 --html sat.html
    #[command(verbatim_doc_comment)]
    Saturate(Box<crate::commands::saturate::Args>),
}

/// Flags of `sweep plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The grid file (.json or .toml).
    grid: PathBuf,
    /// Where the plan goes (JSONL, one run a line); `-` is stdout.
    #[arg(long, value_name = "PLAN.jsonl", value_parser = Target::parser())]
    out: Target,
}

/// Flags of `sweep run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan (`aisim sweep plan --out`).
    plan: PathBuf,
    /// Folder of the results, created if missing (shards may share it).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Run shard I of N only (0-based): the runs whose index k has k % N == I.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    shard: Option<String>,
    /// Shard count, with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(long, value_name = "N")]
    shards: Option<u64>,
    /// Runs at once [default: the machine's parallelism; more than 4 per
    /// core, or than the shard's runs, are not started].
    #[arg(long)]
    threads: Option<usize>,
    /// Keep each run's whole report in its result (without `host`).
    #[arg(long)]
    full_report: bool,
    /// No progress bar or per-run lines on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Flags of `sweep merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result folders (`sweep run --out`).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where the merged results go (JSONL, by id); `-` is stdout.
    #[arg(long, value_name = "RESULTS.jsonl", value_parser = Target::parser())]
    out: Target,
    /// Also write the results as CSV: id, each axis, each headline figure.
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    csv: Option<Target>,
    /// Also write an HTML page: the figures against each axis, SLO-meeting runs marked.
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    html: Option<Target>,
    /// Print the cheapest run meeting the --slo-*-ms limits.
    #[arg(long)]
    best: bool,
    /// TTFT p99 limit, ms (for --best and --html).
    #[arg(long = "slo-ttft-ms", alias = "sla-ttft-ms", value_name = "MS")]
    sla_ttft_ms: Option<f64>,
    /// TPOT p99 limit, ms (for --best and --html).
    #[arg(long = "slo-tpot-ms", alias = "sla-tpot-ms", value_name = "MS")]
    sla_tpot_ms: Option<f64>,
    /// E2E p99 limit, ms (for --best and --html).
    #[arg(long = "slo-e2e-ms", alias = "sla-e2e-ms", value_name = "MS")]
    sla_e2e_ms: Option<f64>,
}

/// A grid's `base_args`, read by `aisim replay`'s own flags.
#[derive(Debug, Parser)]
#[command(name = "base_args", no_binary_name = true)]
struct BaseArgs {
    #[command(flatten)]
    replay: ReplayArgs,
}

/// Runs the command.
pub fn run(args: SweepArgs) -> Result<(), CliError> {
    match args.command {
        SweepCommand::Plan(a) => plan(a),
        SweepCommand::Run(a) => run_plan(a),
        SweepCommand::Merge(a) => merge(a),
        SweepCommand::Saturate(a) => crate::commands::saturate::run(*a),
    }
}

/// A library error: a failed write is exit 1, the rest the user's (exit 2).
fn failed(e: JobError) -> CliError {
    match e.into_boxed().downcast::<SweepError>() {
        Ok(e) if matches!(*e, SweepError::Write { .. }) => CliError::Write(e.to_string()),
        Ok(e) => input(*e),
        Err(other) => input(anyhow::Error::from_boxed(other)),
    }
}

fn plan(args: PlanArgs) -> Result<(), CliError> {
    check_paths(&[("GRID", &args.grid)], &[("--out", Some(&args.out))])?;
    // The grid's `base_args` are this binary's replay flags.
    let base_args = |list: &[String], grid: &Grid| -> Result<ReplaySpec, JobError> {
        let at = || format!("{}: `base_args`", grid.path.display());
        let matches = crate::numbers::with_number_checks(BaseArgs::command())
            .try_get_matches_from(list)
            .map_err(|e| {
                JobError::msg(format!(
                    "{}: {}",
                    at(),
                    e.render()
                        .to_string()
                        .trim_start_matches("error: ")
                        .trim_end()
                ))
            })?;
        let parsed = BaseArgs::from_arg_matches(&matches)
            .map_err(|e| JobError::msg(format!("{}: {e}", at())))?;
        parsed
            .replay
            .spec_in(grid.folder())
            .map_err(|e| JobError::from_boxed(e.into()).context(at()))
    };
    let request = SweepPlanRequest {
        version: Version::CURRENT,
        grid: args.grid.clone(),
    };
    let planned = sweep_plan(&request, Some(&base_args)).map_err(failed)?;
    // The base file and the files the runs read are known once planned.
    let inputs: Vec<(&str, &Path)> = planned
        .inputs
        .iter()
        .map(|(f, p)| (f.as_str(), p.as_path()))
        .collect();
    check_paths(&inputs, &[("--out", Some(&args.out))])?;
    let plan = planned.plan;
    args.out.write("the plan", planned.text.as_bytes())?;
    // Say what was written: a plan is the start of every later command.
    let to = match &args.out {
        Target::File(p) => p.display().to_string(),
        Target::Stdout => "stdout".into(),
    };
    crate::output::note(format_args!(
        "planned {} runs of {} (plan {}) into {to}",
        plan.lines.len(),
        args.grid.display(),
        plan.digest()
    ));
    Ok(())
}

fn run_plan(args: RunArgs) -> Result<(), CliError> {
    let request = SweepRunRequest {
        version: Version::CURRENT,
        plan: args.plan.clone(),
        out: args.out.clone(),
        shard: args.shard.clone(),
        shards: args.shards,
        threads: args.threads,
        full_report: args.full_report,
    };
    let job = SweepRunJob::new(request, &|name| std::env::var_os(name)).map_err(failed)?;
    let (shard, threads, plan) = (job.shard, job.threads, job.plan());
    let pending = job.pending().map_err(failed)?;
    let (todo, done) = (pending.todo.len() as u64, pending.done.len() as u64);
    let mine = todo + done;
    if !args.quiet {
        crate::output::note(format_args!(
            "shard {}/{} of plan {}: {mine} of {} runs, {done} done before, {todo} to run on {threads} threads",
            shard.index,
            shard.count,
            plan.digest(),
            plan.lines.len()
        ));
    }
    let bar = (!args.quiet && std::io::stderr().is_terminal())
        .then(|| crate::progress::SweepBar::new(mine, done));
    let count = std::sync::atomic::AtomicU64::new(done);
    let log = |r: &RunResult| {
        let k = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        match &bar {
            Some(b) => b.tick(),
            None if !args.quiet => crate::output::note(format_args!("{}", run_line(r, k, mine))),
            None => {}
        }
    };
    let summary = job.run(pending, &log).map_err(failed);
    if let Some(b) = &bar {
        b.finish();
    }
    let summary = summary?;
    if !args.quiet {
        match &summary.merged {
            Some(path) => crate::output::note(format_args!(
                "ran {}, skipped {}; every run of the plan is in {}: merged into {}",
                summary.ran,
                summary.skipped,
                args.out.display(),
                path.display()
            )),
            None => crate::output::note(format_args!(
                "ran {}, skipped {}; the plan's other runs are not in {} yet",
                summary.ran,
                summary.skipped,
                args.out.display()
            )),
        }
    }
    Ok(())
}

/// One run's log line (stderr, when it is not a terminal).
fn run_line(r: &RunResult, k: u64, of: u64) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    format!(
        "run {} done ({k}/{of}): {}: ttft p99 {} ms, tpot p99 {} ms, {}/{} completed",
        r.id,
        r.axes
            .0
            .iter()
            .map(|(f, v)| format!("{f} = {}", sweep::cell(v)))
            .collect::<Vec<_>>()
            .join(", "),
        ms(r.metrics.ttft_ms.p99),
        ms(r.metrics.tpot_ms.p99),
        r.outcomes.completed,
        r.outcomes.offered
    )
}

fn merge(args: MergeArgs) -> Result<(), CliError> {
    let request = SweepMergeRequest {
        version: Version::CURRENT,
        dirs: args.dirs.clone(),
        best: args.best,
        sla_ttft_ms: args.sla_ttft_ms,
        sla_tpot_ms: args.sla_tpot_ms,
        sla_e2e_ms: args.sla_e2e_ms,
    };
    let slo = request.slo().map_err(failed)?;
    if slo.is_set() && !args.best && args.html.is_none() {
        return Err(input(anyhow::anyhow!(
            "--slo-*-ms has no effect without --best or --html, which hold the runs to it"
        )));
    }
    let on_stdout: Vec<&str> = [
        ("--out -", args.out.is_stdout()),
        ("--csv -", args.csv.as_ref().is_some_and(Target::is_stdout)),
        (
            "--html -",
            args.html.as_ref().is_some_and(Target::is_stdout),
        ),
        ("--best", args.best),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(flag, _)| *flag)
    .collect();
    if on_stdout.len() > 1 {
        return Err(input(anyhow::anyhow!(
            "{} would all write stdout: give the others a FILE",
            on_stdout.join(" and ")
        )));
    }
    // The result files are the merge's inputs.
    let mut results = Vec::new();
    for dir in &args.dirs {
        results.extend(sweep::result_files(dir).map_err(|e| failed(e.into()))?);
    }
    let inputs: Vec<(&str, &Path)> = results.iter().map(|p| ("DIR", p.as_path())).collect();
    check_paths(
        &inputs,
        &[
            ("--out", Some(&args.out)),
            ("--csv", args.csv.as_ref()),
            ("--html", args.html.as_ref()),
        ],
    )?;
    let merged = sweep_merge(&request).map_err(failed)?;
    let results = merged.results;
    args.out
        .write("the merged results", sweep::to_jsonl(&results).as_bytes())?;
    if let Some(t) = &args.csv {
        t.write("the CSV", sweep::to_csv(&results).as_bytes())?;
    }
    if let Some(t) = &args.html {
        let page = aisim_report::html::render_sweep_html(&results, slo.is_set().then_some(&slo));
        t.write("the HTML page", page.as_bytes())?;
    }
    if let Some((best, basis)) = merged.best {
        let best = best.map(|i| &results[i]);
        Target::Stdout.write(
            "the best run",
            aisim_report::sweep::render_best(&results, best, basis, &slo).as_bytes(),
        )?;
    }
    // Say what was written, on stderr.
    let name = |t: &Target| match t {
        Target::File(p) => p.display().to_string(),
        Target::Stdout => "stdout".into(),
    };
    let mut also: Vec<String> = Vec::new();
    also.extend(
        args.csv
            .as_ref()
            .map(|t| format!(", the CSV to {}", name(t))),
    );
    also.extend(
        args.html
            .as_ref()
            .map(|t| format!(", the page to {}", name(t))),
    );
    crate::output::note(format_args!(
        "merged {} runs of plan {} into {}{}",
        results.len(),
        results[0].plan,
        name(&args.out),
        also.concat()
    ));
    Ok(())
}
