//! Flags of a synthetic workload, shared by `replay --synthetic` and `gen-trace`.
//! Each is optional so that a flag given where it has no effect is an error
//! (docs/errors.md) rather than silently ignored.

use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec};
use anyhow::Context;
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

fn parse_length(flag: &str, s: &str) -> anyhow::Result<LengthSpec> {
    let ctx = || format!("{flag} `{s}`: use N, uniform:MIN:MAX or normal:MEAN:STD");
    // Token counts by the readers' whole-number rule, as every integer flag.
    let tokens = |n: &str| {
        crate::numbers::whole::<u32>(n)
            .map_err(anyhow::Error::msg)
            .with_context(ctx)
    };
    let parts: Vec<&str> = s.split(':').collect();
    Ok(match parts.as_slice() {
        [n] => LengthSpec::Fixed { tokens: tokens(n)? },
        ["uniform", a, b] => LengthSpec::Uniform {
            min: tokens(a)?,
            max: tokens(b)?,
        },
        ["normal", m, d] => LengthSpec::Normal {
            mean: m.parse().with_context(ctx)?,
            std: d.parse().with_context(ctx)?,
        },
        _ => anyhow::bail!(ctx()),
    })
}

impl SyntheticArgs {
    /// The flags given on the command line, as typed: they shape a generated
    /// workload and nothing else.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("--requests", self.requests.is_some()),
            ("--input-tokens", self.input_tokens.is_some()),
            ("--output-tokens", self.output_tokens.is_some()),
            ("--turns", self.turns.is_some()),
            ("--think-ms", self.think_ms.is_some()),
            ("--prefix-groups", self.prefix_groups.is_some()),
            ("--prefix-tokens", self.prefix_tokens.is_some()),
        ]
        .into_iter()
        .chain(self.arrival_flags())
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }

    /// The spec fields these flags set, for errors to name the flag.
    pub fn field_flags(&self) -> [super::blame::FieldFlag; 8] {
        [
            ("workload.requests", "--requests", self.requests.is_some()),
            (
                "workload.input",
                "--input-tokens",
                self.input_tokens.is_some(),
            ),
            (
                "workload.output",
                "--output-tokens",
                self.output_tokens.is_some(),
            ),
            ("workload.arrival.rate", "--rate", self.rate.is_some()),
            (
                "workload.arrival.burstiness",
                "--burstiness",
                self.burstiness.is_some(),
            ),
            ("workload.turns", "--turns", self.turns.is_some()),
            ("workload.think_ms", "--think-ms", self.think_ms.is_some()),
            (
                "workload.prefix_tokens",
                "--prefix-tokens",
                self.prefix_tokens.is_some(),
            ),
        ]
    }

    /// The arrival-process flags and whether each was given.
    fn arrival_flags(&self) -> [(&'static str, bool); 3] {
        [
            ("--rate", self.rate.is_some()),
            ("--burstiness", self.burstiness.is_some()),
            ("--constant-rate", self.constant_rate),
        ]
    }

    /// The first arrival-process flag given, if any.
    pub fn arrival_flag(&self) -> Option<&'static str> {
        self.arrival_flags()
            .into_iter()
            .find_map(|(flag, given)| given.then_some(flag))
    }

    /// The workload over the defaults.
    pub fn to_spec(&self) -> anyhow::Result<SyntheticSpec> {
        let mut spec = SyntheticSpec::default();
        self.apply(&mut spec)?;
        Ok(spec)
    }

    /// The workload over `base` (a spec file's, or the defaults): each flag
    /// given replaces its field. A flag that the result would ignore is an
    /// error naming it and the flag it needs.
    pub fn apply(&self, base: &mut SyntheticSpec) -> anyhow::Result<()> {
        let s = base;
        if let Some(n) = self.requests {
            s.requests = n;
        }
        if let Some(t) = &self.input_tokens {
            s.input = parse_length("--input-tokens", t)?;
        }
        if let Some(t) = &self.output_tokens {
            s.output = parse_length("--output-tokens", t)?;
        }
        let rate = self.rate.unwrap_or(s.arrival.rate());
        s.arrival = match (self.burstiness, self.constant_rate, s.arrival) {
            (Some(burstiness), _, _) => ArrivalSpec::Gamma { rate, burstiness },
            (None, true, _) => ArrivalSpec::Constant { rate },
            (None, false, ArrivalSpec::Constant { .. }) => ArrivalSpec::Constant { rate },
            (None, false, ArrivalSpec::Poisson { .. }) => ArrivalSpec::Poisson { rate },
            (None, false, ArrivalSpec::Gamma { burstiness, .. }) => {
                ArrivalSpec::Gamma { rate, burstiness }
            }
        };
        if let Some(n) = self.turns {
            s.turns = n;
        }
        if let Some(ms) = self.think_ms {
            s.think_ms = ms;
        }
        if let Some(n) = self.prefix_groups {
            s.prefix_groups = n;
        }
        if let Some(n) = self.prefix_tokens {
            s.prefix_tokens = n;
        }
        anyhow::ensure!(
            self.think_ms.is_none() || s.turns > 1,
            "--think-ms has no effect with 1 turn per session: give --turns N with N above 1"
        );
        anyhow::ensure!(
            self.prefix_tokens.is_none() || s.prefix_groups > 0,
            "--prefix-tokens has no effect without shared-prefix groups: give --prefix-groups N with N above 0"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_follow_the_whole_number_rule() {
        assert_eq!(
            parse_length("--input-tokens", "3e2").unwrap(),
            LengthSpec::Fixed { tokens: 300 }
        );
        assert_eq!(
            parse_length("--input-tokens", "uniform:1e2:256.0").unwrap(),
            LengthSpec::Uniform { min: 100, max: 256 }
        );
        for (s, why) in [
            (
                "uniform:1:1e300",
                "`1e300` is out of range (at most 4294967295)",
            ),
            ("2.5", "`2.5` is not a whole number"),
            ("-4", "`-4` is negative: a count is expected"),
        ] {
            let e = format!("{:#}", parse_length("--input-tokens", s).unwrap_err());
            assert!(e.starts_with(&format!("--input-tokens `{s}`")), "{e}");
            assert!(e.ends_with(why), "{e}");
        }
    }
}
