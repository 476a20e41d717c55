//! The flags of a generated workload (`aisim replay --synthetic`, `aisim
//! gen-trace`, `aisim.replay(synthetic=True, ...)`), turned into its spec.
//! Each is optional so that a flag given where it has no effect is an error
//! (docs/errors.md) rather than silently ignored.

use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec};
use serde::{Deserialize, Serialize};

use super::count::whole;
use super::JobError;

/// A spec field, the flag that sets it, and whether that flag was given
/// (for an error to lead with the flag the user typed).
pub type FieldFlag = (&'static str, &'static str, bool);

/// A generated workload's flags, named as the CLI's in snake case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyntheticFlags {
    /// Sessions (first turns) to generate [default: 1000].
    pub requests: Option<u64>,
    /// Prompt tokens: N, uniform:MIN:MAX or normal:MEAN:STD [default: 1024].
    pub input_tokens: Option<String>,
    /// Output tokens: N, uniform:MIN:MAX or normal:MEAN:STD [default: 128].
    pub output_tokens: Option<String>,
    /// First-turn arrivals per second [default: 10].
    pub rate: Option<f64>,
    /// Gamma arrivals with this shape (1 = Poisson, below 1 burstier); Poisson when absent.
    pub burstiness: Option<f64>,
    /// Evenly spaced arrivals instead of Poisson.
    pub constant_rate: bool,
    /// Turns per session [default: 1].
    pub turns: Option<u32>,
    /// Think time between turns, ms [default: 0; needs --turns above 1].
    pub think_ms: Option<f64>,
    /// Shared-prefix groups (0: no sharing) [default: 0].
    pub prefix_groups: Option<u32>,
    /// Tokens of each group's shared prefix [default: 0; needs --prefix-groups].
    pub prefix_tokens: Option<u32>,
}

/// A length form: N, uniform:MIN:MAX or normal:MEAN:STD.
pub fn parse_length(flag: &str, s: &str) -> Result<LengthSpec, JobError> {
    let ctx = || format!("{flag} `{s}`: use N, uniform:MIN:MAX or normal:MEAN:STD");
    // Token counts by the readers' whole-number rule, as every integer flag.
    let tokens = |n: &str| whole::<u32>(n).map_err(|e| JobError::msg(e).context(ctx()));
    let float = |n: &str| {
        n.parse::<f64>()
            .map_err(|e| JobError::from(e).context(ctx()))
    };
    let parts: Vec<&str> = s.split(':').collect();
    Ok(match parts.as_slice() {
        [n] => LengthSpec::Fixed { tokens: tokens(n)? },
        ["uniform", a, b] => LengthSpec::Uniform {
            min: tokens(a)?,
            max: tokens(b)?,
        },
        ["normal", m, d] => LengthSpec::Normal {
            mean: float(m)?,
            std: float(d)?,
        },
        _ => return Err(JobError::msg(ctx())),
    })
}

impl SyntheticFlags {
    /// The flags given, as typed on the command line: they shape a
    /// generated workload and nothing else.
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
    pub fn field_flags(&self) -> [FieldFlag; 8] {
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
    pub fn to_spec(&self) -> Result<SyntheticSpec, JobError> {
        let mut spec = SyntheticSpec::default();
        self.apply(&mut spec)?;
        Ok(spec)
    }

    /// The workload over `base` (a spec file's, or the defaults): each flag
    /// given replaces its field. A flag that the result would ignore is an
    /// error naming it and the flag it needs.
    pub fn apply(&self, base: &mut SyntheticSpec) -> Result<(), JobError> {
        if self.burstiness.is_some() && self.constant_rate {
            return Err(JobError::msg(
                "--constant-rate cannot be used with --burstiness: evenly spaced arrivals have no shape",
            ));
        }
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
        if self.think_ms.is_some() && s.turns <= 1 {
            return Err(JobError::msg(
                "--think-ms has no effect with 1 turn per session: give --turns N with N above 1",
            ));
        }
        if self.prefix_tokens.is_some() && s.prefix_groups == 0 {
            return Err(JobError::msg(
                "--prefix-tokens has no effect without shared-prefix groups: give --prefix-groups N with N above 0",
            ));
        }
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
            let e = parse_length("--input-tokens", s).unwrap_err();
            let text = e.to_string();
            assert!(text.starts_with(&format!("--input-tokens `{s}`")), "{text}");
            let cause = std::error::Error::source(&*e.into_boxed())
                .map(|c| c.to_string())
                .unwrap_or_default();
            assert!(cause.ends_with(why), "{cause}");
        }
    }
}
