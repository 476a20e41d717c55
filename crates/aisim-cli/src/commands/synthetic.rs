//! Flags of a synthetic workload, shared by `replay --synthetic` and `gen-trace`.

use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec};
use anyhow::Context;
use clap::Args;

/// A generated workload.
#[derive(Debug, Clone, Args)]
pub struct SyntheticArgs {
    /// Replay a generated workload instead of a trace.
    #[arg(long)]
    pub synthetic: bool,
    /// Sessions (first turns) to generate.
    #[arg(long, default_value_t = 1000)]
    pub requests: u64,
    /// Prompt tokens: N, uniform:MIN:MAX or normal:MEAN:STD.
    #[arg(long, default_value = "1024")]
    pub input_tokens: String,
    /// Output tokens: N, uniform:MIN:MAX or normal:MEAN:STD.
    #[arg(long, default_value = "128")]
    pub output_tokens: String,
    /// First-turn arrivals per second.
    #[arg(long, default_value_t = 10.0)]
    pub rate: f64,
    /// Gamma arrivals with this shape (1 = Poisson, below 1 burstier); Poisson when absent.
    #[arg(long)]
    pub burstiness: Option<f64>,
    /// Evenly spaced arrivals instead of Poisson.
    #[arg(long, conflicts_with = "burstiness")]
    pub constant_rate: bool,
    /// Turns per session.
    #[arg(long, default_value_t = 1)]
    pub turns: u32,
    /// Think time between turns, ms.
    #[arg(long, default_value_t = 0.0)]
    pub think_ms: f64,
    /// Shared-prefix groups (0: no sharing).
    #[arg(long, default_value_t = 0)]
    pub prefix_groups: u32,
    /// Tokens of each group's shared prefix.
    #[arg(long, default_value_t = 0)]
    pub prefix_tokens: u32,
}

fn parse_length(flag: &str, s: &str) -> anyhow::Result<LengthSpec> {
    let ctx = || format!("{flag} `{s}`: use N, uniform:MIN:MAX or normal:MEAN:STD");
    let parts: Vec<&str> = s.split(':').collect();
    Ok(match parts.as_slice() {
        [n] => LengthSpec::Fixed {
            tokens: n.parse().with_context(ctx)?,
        },
        ["uniform", a, b] => LengthSpec::Uniform {
            min: a.parse().with_context(ctx)?,
            max: b.parse().with_context(ctx)?,
        },
        ["normal", m, d] => LengthSpec::Normal {
            mean: m.parse().with_context(ctx)?,
            std: d.parse().with_context(ctx)?,
        },
        _ => anyhow::bail!(ctx()),
    })
}

impl SyntheticArgs {
    /// The workload spec (validated with the rest of the replay spec).
    pub fn to_spec(&self) -> anyhow::Result<SyntheticSpec> {
        let arrival = match (self.burstiness, self.constant_rate) {
            (Some(b), _) => ArrivalSpec::Gamma {
                rate: self.rate,
                burstiness: b,
            },
            (None, true) => ArrivalSpec::Constant { rate: self.rate },
            (None, false) => ArrivalSpec::Poisson { rate: self.rate },
        };
        Ok(SyntheticSpec {
            requests: self.requests,
            input: parse_length("--input-tokens", &self.input_tokens)?,
            output: parse_length("--output-tokens", &self.output_tokens)?,
            arrival,
            prefix_groups: self.prefix_groups,
            prefix_tokens: self.prefix_tokens,
            turns: self.turns,
            think_ms: self.think_ms,
            trace_block_size: 512,
            total_cdf: None,
        })
    }
}
