//! Flags of a synthetic workload, shared by `replay --synthetic` and `gen-trace`;
//! the library turns them into the workload (`aisim_lab::jobs::synthetic_flags`).
//! Each is optional so that a flag given where it has no effect is an error
//! (docs/errors.md) rather than silently ignored.

use aisim_lab::jobs::synthetic_flags::SyntheticFlags;
use clap::Args;

/// A generated workload.
#[derive(Debug, Clone, Args)]
pub struct SyntheticArgs {
    /// Sessions (first turns) to generate [default: 1000].
    #[arg(long)]
    pub requests: Option<u64>,
    /// Prompt tokens: N, uniform:MIN:MAX or normal:MEAN:STD [default: 1024].
    #[arg(long)]
    pub input_tokens: Option<String>,
    /// Output tokens: N, uniform:MIN:MAX or normal:MEAN:STD [default: 128].
    #[arg(long)]
    pub output_tokens: Option<String>,
    /// First-turn arrivals per second [default: 10].
    #[arg(long)]
    pub rate: Option<f64>,
    /// Gamma arrivals with this shape (1 = Poisson, below 1 burstier); Poisson when absent.
    #[arg(long)]
    pub burstiness: Option<f64>,
    /// Evenly spaced arrivals instead of Poisson.
    #[arg(long, conflicts_with = "burstiness")]
    pub constant_rate: bool,
    /// Turns per session [default: 1].
    #[arg(long)]
    pub turns: Option<u32>,
    /// Think time between turns, ms [default: 0; needs --turns above 1].
    #[arg(long)]
    pub think_ms: Option<f64>,
    /// Shared-prefix groups (0: no sharing) [default: 0].
    #[arg(long)]
    pub prefix_groups: Option<u32>,
    /// Tokens of each group's shared prefix [default: 0; needs --prefix-groups].
    #[arg(long)]
    pub prefix_tokens: Option<u32>,
}

impl SyntheticArgs {
    /// The flags, for the library to build the workload (`SyntheticFlags`).
    pub fn flags(&self) -> SyntheticFlags {
        SyntheticFlags {
            requests: self.requests,
            input_tokens: self.input_tokens.clone(),
            output_tokens: self.output_tokens.clone(),
            rate: self.rate,
            burstiness: self.burstiness,
            constant_rate: self.constant_rate,
            turns: self.turns,
            think_ms: self.think_ms,
            prefix_groups: self.prefix_groups,
            prefix_tokens: self.prefix_tokens,
        }
    }
}
