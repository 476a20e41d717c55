//! `aisim gen-trace`.

use aisim_replay::spec::{ReplaySpec, WorkloadSpec};
use aisim_replay::trace::write_mooncake_row;
use aisim_replay::workload::{SyntheticWorkload, Workload};
use clap::Args;

use super::synthetic::SyntheticArgs;
use crate::exit::{input, job, CliError};
use crate::output::{check_paths, Target};
use aisim_lab::jobs::replay_flags::blame_flag;

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct GenTraceArgs {
    #[command(flatten)]
    workload: SyntheticArgs,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Write to FILE instead of stdout (`-` is stdout).
    #[arg(long, value_name = "FILE", value_parser = Target::parser())]
    out: Option<Target>,
}

/// Runs the command.
pub fn run(args: GenTraceArgs) -> Result<(), CliError> {
    check_paths(&[], &[("--out", args.out.as_ref())])?;
    let flags = args.workload.flags();
    let synthetic = flags.to_spec().map_err(job)?;
    // Validate through the replay spec, which knows the rules.
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(synthetic.clone()),
        seed: args.seed,
        ..Default::default()
    };
    spec.validate()
        .map_err(|e| job(blame_flag(e, &flags.field_flags())))?;
    let target = args.out.unwrap_or(Target::Stdout);
    let mut w = SyntheticWorkload::new(synthetic, args.seed, 1.0);
    let mut failure = None;
    let (mut rows, mut sessions) = (0u64, 0u64);
    let written = target.stream("the trace", |mut sink| {
        let mut write = |o: &aisim_replay::workload::Offer, ts_ms: f64| {
            rows += 1;
            let r = &o.request;
            write_mooncake_row(
                &mut sink,
                ts_ms,
                r.input_length,
                r.output_length,
                &r.hash_ids,
                r.session.map(|s| s.0),
                o.think.map(|t| t.as_ms_f64()),
            )
        };
        while let Some(root) = w.next_root() {
            sessions += 1;
            let mut ts = root.request.arrival.as_ms_f64();
            write(&root, ts)?;
            let mut prev = root;
            while let Some(next) = w.next_turn(prev) {
                ts += next.think.map_or(0.0, |t| t.as_ms_f64());
                write(&next, ts)?;
                prev = next;
            }
        }
        // Arrivals beyond the clock, or a turn too long, stop the trace
        // early: an error, and no file (it is never renamed into place).
        failure = w.take_failure();
        match failure {
            Some(_) => Err(std::io::Error::other("the workload stopped early")),
            None => Ok(()),
        }
    });
    match failure {
        Some(e) => Err(input(e)),
        None => {
            written?;
            // Say what was written, on stderr (stdout may be the trace).
            let to = match &target {
                Target::File(p) => p.display().to_string(),
                Target::Stdout => "stdout".into(),
            };
            let turns = if rows > sessions {
                format!(" in {sessions} sessions")
            } else {
                String::new()
            };
            crate::output::note(format_args!("wrote {rows} requests{turns} to {to}"));
            Ok(())
        }
    }
}
