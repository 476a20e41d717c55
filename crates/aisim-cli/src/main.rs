//! `aisim`: replay LLM serving traces and plan GPU fleets, on a virtual clock.
//!
//! This binary only parses arguments, sets up logging and progress, runs the
//! library crates and maps failures to exit codes (docs/errors.md: 0 ok, 1 a
//! failed write or an internal error, 2 bad usage, configuration or input).

mod commands;
mod deferred;
mod exit;
mod numbers;
mod output;
mod progress;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use deferred::Deferred;
use exit::CliError;
use output::Target;

/// Deterministic simulator of LLM inference serving.
#[derive(Debug, Parser)]
#[command(name = "aisim", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// More log detail (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a trace (or the built-in demo) through simulated serving engines.
    ///
    /// With no TRACE and no --synthetic, replays the built-in multi-turn demo
    /// trace on 4 workers. Every flag left out keeps its default (or, with
    /// --spec, the file's value).
    ///
    /// Examples:
    ///   aisim replay
    ///   aisim replay mooncake_trace.jsonl --workers 8
    ///   aisim replay trace.jsonl --backend sglang --timing fixed:20,5 --format json
    ///   aisim replay --synthetic --requests 10000 --rate 50 --workers 4
    #[command(verbatim_doc_comment)]
    Replay(Deferred<Box<commands::replay::ReplayArgs>>),
    /// Write a synthetic workload as a Mooncake JSONL trace.
    ///
    /// Multi-turn sessions (--turns > 1) carry `session_id`, and later turns a
    /// `delay_ms` think time; their timestamps assume each turn is answered
    /// instantly (the replay's dispatch mode decides when they are really sent).
    ///
    /// Example:
    ///   aisim gen-trace --requests 200 --rate 5 --turns 3 --think-ms 2000 --out trace.jsonl
    #[command(verbatim_doc_comment)]
    GenTrace(Deferred<commands::gen_trace::GenTraceArgs>),
    /// Two-pool fleet sizing: a compression-band sweep, verified by simulation.
    ///
    /// Example:
    ///   aisim optimize --cdf azure --lam 200 --slo-ttft-ms 500 --b-short 4096
    #[command(verbatim_doc_comment)]
    Optimize(Deferred<commands::fleet::OptimizeArgs>),
    /// Request-level fleet simulation for given pool sizes.
    ///
    /// Example:
    ///   aisim simulate --cdf azure --lam 200 --n-s 9 --n-l 27 --seeds 5
    #[command(verbatim_doc_comment)]
    Simulate(Deferred<commands::fleet::SimulateArgs>),
    /// Pool-threshold Pareto sweep: cost against the worst pool's P99 TTFT.
    ///
    /// Example:
    ///   aisim pareto --cdf lmsys --lam 100
    #[command(verbatim_doc_comment)]
    Pareto(Deferred<commands::fleet::ParetoArgs>),
    /// Analytic prefill/decode split.
    ///
    /// Example:
    ///   aisim disagg --cdf azure --lam 100 --gpu-prefill h100 --gpu-decode h100
    #[command(verbatim_doc_comment)]
    Disagg(Deferred<commands::fleet::DisaggArgs>),
    /// Routers on identical arrivals (length, compress_route, random).
    ///
    /// Example:
    ///   aisim compare-routers --cdf azure --lam 200 --n-s 9 --n-l 27
    #[command(verbatim_doc_comment)]
    CompareRouters(Deferred<commands::fleet::CompareRoutersArgs>),
    /// The cheapest SLO-meeting configuration per arrival rate; GPU comparison.
    ///
    /// Example:
    ///   aisim whatif --cdf azure --lam-range 50,100,200 --gpu-compare a100 h100 a10g
    #[command(verbatim_doc_comment)]
    Whatif(Deferred<commands::fleet::WhatIfArgs>),
    /// A multi-pool fleet file through the request-level simulation.
    ///
    /// Example:
    ///   aisim simulate-fleet fixtures/fleet.json --lam 150
    #[command(verbatim_doc_comment)]
    SimulateFleet(Deferred<commands::fleet::SimulateFleetArgs>),
    /// Tokens per watt and dollars per million tokens per GPU type.
    ///
    /// Example:
    ///   aisim tok-per-watt --cdf azure --lam 100
    #[command(verbatim_doc_comment)]
    TokPerWatt(Deferred<commands::fleet::TokPerWattArgs>),
    /// Demand response: batch caps for power cuts and the P99 they cost.
    ///
    /// Example:
    ///   aisim grid-flex --cdf azure --lam 200 --n-gpus 40 --gpu h100
    #[command(verbatim_doc_comment)]
    GridFlex(Deferred<commands::fleet::GridFlexArgs>),
    /// Replay measured runs and compare: per metric and statistic, the error in %.
    ///
    /// Each RUN.json is a measured run (docs/fidelity.md): a replay spec and
    /// what a real server measured. --timing replaces every run's timing.
    ///
    /// Examples:
    ///   aisim validate rtx4090.json
    ///   aisim validate rtx4090.json --timing fitted:fitted.json --format json
    #[command(verbatim_doc_comment)]
    Validate(Deferred<commands::validate::ValidateArgs>),
    /// Fit the physics timing model's coefficients to measured runs.
    ///
    /// Replays the runs inside a bounded, deterministic search (Nelder-Mead,
    /// then Levenberg-Marquardt) whose score is the runs' misfit plus priors
    /// that keep each coefficient near the physics; fits only the terms that
    /// are a material share of the runs' time; refuses a fit under which a
    /// run's load could not be carried; writes the coefficients --timing
    /// fitted:FILE reads (docs/fidelity.md).
    ///
    /// Examples:
    ///   aisim calibrate rtx4090.json pro6000.json --out fitted.json
    ///   aisim calibrate stage0.json --holdout stage1.json --out fitted.json
    ///   aisim calibrate a.json b.json c.json --cross-validate --out fitted.json
    #[command(verbatim_doc_comment)]
    Calibrate(Deferred<commands::calibrate::CalibrateArgs>),
    /// Two replay reports side by side: what differs in their specs, and the figures with their deltas.
    ///
    /// A.json and B.json are JSON reports of `aisim replay` (--out FILE). The
    /// table leads with the spec fields that differ between the runs, then
    /// the headline figures of both runs with B - A and the change in %
    /// (--all: every figure outside `host`, `spec` and `workers`; JSON has
    /// them all); a warning says when the runs' disciplines or workloads
    /// differ. --html FILE names each run by its spec differences and draws
    /// both runs on the same charts (their CDFs through each report's
    /// percentiles) around the same tables.
    ///
    /// Example:
    ///   aisim replay --out a.json && aisim replay --workers 8 --out b.json
    ///   aisim compare a.json b.json --html compare.html
    #[command(verbatim_doc_comment)]
    Compare(Deferred<commands::compare::CompareArgs>),
    /// Sweeps: plan a grid of replays, run it in shards, merge the results;
    /// or search the highest rate that holds the SLOs.
    ///
    /// Examples:
    ///   aisim sweep plan grid.toml --out plan.jsonl
    ///   aisim sweep run plan.jsonl --out results/
    ///   aisim sweep merge results/ --out results.jsonl --csv results.csv
    ///   aisim sweep saturate trace.jsonl --workers 4 --speedup-range 0.5..8 --slo-ttft-ms 2000
    #[command(verbatim_doc_comment)]
    Sweep(Deferred<commands::sweep::SweepArgs>),
    /// Measured runs: import them from per-request measurements.
    Measured(Deferred<commands::measured::MeasuredArgs>),
    /// The deterministic prefix-cache lab: hits of an LRU cache, no clock.
    ///
    /// Request i (0-based) reads the one-block prefix of session i mod S from
    /// the engines' own LRU prefix cache (a KV pool of C one-block prefixes);
    /// it hits when that prefix is resident. Every run starts from an empty
    /// cache; playback stops at 4096 requests.
    ///
    /// Examples:
    ///   aisim cache-lab -C 4 -s 4 --steps 2
    ///   aisim cache-lab -C 3 -s 4 --requests 100 --format json
    #[command(verbatim_doc_comment)]
    CacheLab(Deferred<commands::cache_lab::CacheLabArgs>),
    /// List hardware, models and GPU profiles with their derived numbers.
    ///
    /// Profiles are named elsewhere by key: a manual profile (a100, h100, a10g)
    /// or HARDWARE/MODEL[/tpN][/fp8|int4], e.g. h200/llama-3.1-70b/tp8.
    ///
    /// Example:
    ///   aisim profiles --format json
    #[command(verbatim_doc_comment)]
    Profiles(Deferred<commands::profiles::ProfilesArgs>),
    /// A job service: upload traces, submit jobs, read reports over HTTP or
    /// from the web page at / (docs/service.md).
    ///
    /// Prints `listening on http://ADDR:PORT` once it accepts connections;
    /// SIGTERM or Ctrl-C stops it, and jobs it was running run again on the
    /// next start on the same --data. Binding an address other than
    /// loopback needs a token (--token-file or AISIM_TOKEN).
    ///
    /// Examples:
    ///   aisim serve
    ///   aisim serve --bind 0.0.0.0:8000 --token-file token.txt --data /srv/aisim
    #[command(verbatim_doc_comment)]
    Serve(Deferred<commands::serve::ServeArgs>),
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A log line that cannot be written is dropped: complaining about it
        // on the same stderr would panic.
        .log_internal_errors(false)
        .try_init();
}

/// Parses the arguments; `--help` and `--version` go through the one stdout
/// path, usage errors to stderr with clap's exit code (2). Gives the
/// subcommand's name too, for the logs.
fn parse() -> Result<(Cli, String), ExitCode> {
    // `args_os`: `args` would panic on an argument that is not UTF-8
    // (clap reports it instead).
    let first = std::env::args_os().nth(1);
    if let Some(name) = first.as_ref().and_then(|a| a.to_str()) {
        if Command::has_subcommand(name) {
            deferred::only_build(name);
        }
    }
    let parsed = numbers::with_number_checks(Cli::command())
        .try_get_matches()
        .and_then(|m| {
            let name = m.subcommand_name().unwrap_or_default().to_string();
            Ok((Cli::from_arg_matches(&m)?, name))
        });
    parsed.map_err(|e| {
        if e.use_stderr() {
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        } else {
            let what = match e.kind() {
                clap::error::ErrorKind::DisplayVersion => "the version",
                _ => "the help",
            };
            match Target::Stdout.write(what, e.render().to_string().as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => e.report(),
            }
        }
    })
}

fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Replay(Deferred(args)) => commands::replay::run(*args),
        Command::GenTrace(Deferred(args)) => commands::gen_trace::run(args),
        Command::Optimize(Deferred(a)) => commands::fleet::run_optimize(a),
        Command::Simulate(Deferred(a)) => commands::fleet::run_simulate(a),
        Command::Pareto(Deferred(a)) => commands::fleet::run_pareto(a),
        Command::Disagg(Deferred(a)) => commands::fleet::run_disagg(a),
        Command::CompareRouters(Deferred(a)) => commands::fleet::run_compare_routers(a),
        Command::Whatif(Deferred(a)) => commands::fleet::run_whatif(a),
        Command::SimulateFleet(Deferred(a)) => commands::fleet::run_simulate_fleet(a),
        Command::TokPerWatt(Deferred(a)) => commands::fleet::run_tok_per_watt(a),
        Command::GridFlex(Deferred(a)) => commands::fleet::run_grid_flex(a),
        Command::Profiles(Deferred(args)) => commands::profiles::run(args),
        Command::CacheLab(Deferred(args)) => commands::cache_lab::run(args),
        Command::Validate(Deferred(args)) => commands::validate::run(args),
        Command::Calibrate(Deferred(args)) => commands::calibrate::run(args),
        Command::Measured(Deferred(args)) => commands::measured::run(args),
        Command::Compare(Deferred(args)) => commands::compare::run(args),
        Command::Sweep(Deferred(args)) => commands::sweep::run(args),
        Command::Serve(Deferred(args)) => commands::serve::run(args),
    }
}

fn main() -> ExitCode {
    let (cli, name) = match parse() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    init_logging(cli.verbose);
    let started = Instant::now();
    let span = tracing::info_span!("command", name = %name).entered();
    exit::report_panics();
    let Ok(result) = std::panic::catch_unwind(|| run(cli.command)) else {
        return ExitCode::from(1); // the hook has reported it
    };
    tracing::info!(
        ok = result.is_ok(),
        wall_ms = started.elapsed().as_millis() as u64,
        "command finished"
    );
    drop(span);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}
