//! `aisim gen-trace`.

use std::io::Write;
use std::path::PathBuf;

use aisim_replay::spec::{ReplaySpec, WorkloadSpec};
use aisim_replay::trace::write_mooncake_row;
use aisim_replay::workload::{SyntheticWorkload, Workload};
use anyhow::Context;
use clap::Args;

use super::synthetic::SyntheticArgs;
use crate::exit::{input, CliError};

/// Flags of the subcommand (documented on `Command` in main.rs).
#[derive(Debug, Args)]
pub struct GenTraceArgs {
    #[command(flatten)]
    workload: SyntheticArgs,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: GenTraceArgs) -> Result<(), CliError> {
    let synthetic = args.workload.to_spec().map_err(input)?;
    // Validate through the replay spec, which knows the rules.
    let spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(synthetic.clone()),
        seed: args.seed,
        ..Default::default()
    };
    spec.validate().map_err(input)?;
    let mut sink: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .with_context(|| format!("cannot write {}", p.display()))
                .map_err(input)?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut w = SyntheticWorkload::new(synthetic, args.seed, 1.0);
    let mut write = |o: &aisim_replay::workload::Offer, ts_ms: f64| -> std::io::Result<()> {
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
        let mut ts = root.request.arrival.as_ms_f64();
        write(&root, ts)
            .context("writing the trace")
            .map_err(input)?;
        let mut prev = root;
        while let Some(next) = w.next_turn(prev) {
            ts += next.think.map_or(0.0, |t| t.as_ms_f64());
            write(&next, ts)
                .context("writing the trace")
                .map_err(input)?;
            prev = next;
        }
    }
    sink.flush().context("writing the trace").map_err(input)?;
    Ok(())
}
