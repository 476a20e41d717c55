//! Which runs of a plan a process does (docs/sweeps.md, "Sharding"): shard
//! `I` of `N`, 0-based, holds the runs whose index `k` has `k % N == I`,
//! from `--shard I/N`, else from a scheduler's variables (a Slurm job
//! array, a Kubernetes Indexed Job with `--shards N`), else the whole plan.

use aisim_core::number::Number;

use super::SweepError;

/// Slurm's index of this array task.
pub const SLURM_ID: &str = "SLURM_ARRAY_TASK_ID";
/// Slurm's count of array tasks.
pub const SLURM_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
/// Slurm's lowest index of the array (0 when unset).
pub const SLURM_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// A Kubernetes Indexed Job's index of this pod.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based.
    pub index: u64,
    /// Shards in all (1 or more).
    pub count: u64,
}

impl Shard {
    /// The whole plan.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether run `k` (0-based) is this shard's.
    pub fn holds(&self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// `I/N` as `--shard` takes it.
    pub fn parse(text: &str) -> Result<Shard, SweepError> {
        let bad = |reason: String| SweepError::Shard {
            name: format!("--shard {text}"),
            reason,
        };
        let Some((i, n)) = text.split_once('/') else {
            return Err(bad("write I/N: shard I (0-based) of N".into()));
        };
        let i = whole(i).map_err(|e| bad(format!("I: {e}")))?;
        let n = whole(n).map_err(|e| bad(format!("N: {e}")))?;
        Shard::new(i, n).map_err(bad)
    }

    fn new(index: u64, count: u64) -> Result<Shard, String> {
        if count == 0 {
            return Err("0 shards: N is at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count}: shards are numbered 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard of this process: `flag` (`--shard`) when given, else
    /// Slurm's array variables, else `JOB_COMPLETION_INDEX` with `shards`
    /// (`--shards`), else the whole plan. `env` reads a variable (the
    /// process's environment, or a test's); a set variable that is not
    /// unicode is refused, not taken as unset (which would run the whole
    /// plan in every task).
    pub fn select(
        flag: Option<Shard>,
        shards: Option<u64>,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Shard, SweepError> {
        let no_effect = |why: &str| SweepError::Shard {
            name: format!("--shards {}", shards.unwrap_or_default()),
            reason: format!("has no effect {why}"),
        };
        if let Some(shard) = flag {
            if shards.is_some() {
                return Err(no_effect("with --shard, which gives the count"));
            }
            return Ok(shard);
        }
        let var = |name: &str| -> Result<Option<u64>, SweepError> {
            env(name)
                .map(|v| {
                    let v = v.into_string().map_err(|v| SweepError::Shard {
                        name: format!("{name}={}", v.to_string_lossy()),
                        reason: "not unicode: a shard index is a whole number".into(),
                    })?;
                    whole(&v).map_err(|e| SweepError::Shard {
                        name: format!("{name}={v}"),
                        reason: e,
                    })
                })
                .transpose()
        };
        if let Some(id) = var(SLURM_ID)? {
            if shards.is_some() {
                return Err(no_effect(&format!(
                    "in a Slurm job array ({SLURM_ID} is set): {SLURM_COUNT} gives the count"
                )));
            }
            let count = var(SLURM_COUNT)?.ok_or_else(|| SweepError::Shard {
                name: SLURM_COUNT.into(),
                reason: format!("not set, but {SLURM_ID} is: the shard count comes from it"),
            })?;
            let min = var(SLURM_MIN)?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or_else(|| SweepError::Shard {
                name: format!("{SLURM_ID}={id}"),
                reason: format!("below {SLURM_MIN}={min}"),
            })?;
            return Shard::new(index, count).map_err(|reason| SweepError::Shard {
                name: format!("{SLURM_ID}={id} ({SLURM_MIN}={min}, {SLURM_COUNT}={count})"),
                reason: format!("{reason}; give the array as --array=0-{}", count.max(1) - 1),
            });
        }
        if let Some(index) = var(K8S_INDEX)? {
            let count = shards.ok_or_else(|| SweepError::Shard {
                name: "--shards".into(),
                reason: format!(
                    "missing: with {K8S_INDEX} set (a Kubernetes Indexed Job), --shards N gives the shard count (the Job's completions)"
                ),
            })?;
            return Shard::new(index, count).map_err(|reason| SweepError::Shard {
                name: format!("{K8S_INDEX}={index} (--shards {count})"),
                reason,
            });
        }
        if shards.is_some() {
            return Err(no_effect(&format!(
                "without {K8S_INDEX} (a Kubernetes Indexed Job's index); use --shard I/N"
            )));
        }
        Ok(Shard::WHOLE)
    }
}

/// A whole number, 0 or more, by the readers' rule.
fn whole(text: &str) -> Result<u64, String> {
    Number::of_text(text.trim())
        .ok_or_else(|| format!("`{text}` is not a whole number"))?
        .to_u64()
        .map_err(|e| format!("`{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.into())
    }

    fn pick(
        flag: Option<&str>,
        shards: Option<u64>,
        vars: &[(&str, &str)],
    ) -> Result<Shard, String> {
        let flag = flag.map(|f| Shard::parse(f).unwrap());
        Shard::select(flag, shards, env(vars)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_flag_wins_then_slurm_then_kubernetes_then_the_whole_plan() {
        let slurm = [(SLURM_ID, "5"), (SLURM_COUNT, "4"), (SLURM_MIN, "3")];
        assert_eq!(
            pick(Some("1/3"), None, &slurm),
            Ok(Shard { index: 1, count: 3 })
        );
        assert_eq!(pick(None, None, &slurm), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(
            pick(None, None, &[(SLURM_ID, "3"), (SLURM_COUNT, "4")]),
            Ok(Shard { index: 3, count: 4 })
        );
        assert_eq!(
            pick(None, Some(6), &[(K8S_INDEX, "5")]),
            Ok(Shard { index: 5, count: 6 })
        );
        assert_eq!(pick(None, None, &[]), Ok(Shard::WHOLE));
    }

    #[test]
    fn malformed_or_missing_values_name_the_variable() {
        let e = pick(None, None, &[(SLURM_ID, "x"), (SLURM_COUNT, "4")]).unwrap_err();
        assert!(e.starts_with("SLURM_ARRAY_TASK_ID=x: "), "{e}");
        let e = pick(None, None, &[(SLURM_ID, "1")]).unwrap_err();
        assert!(e.starts_with("SLURM_ARRAY_TASK_COUNT: not set"), "{e}");
        let e = pick(None, None, &[(SLURM_ID, "4"), (SLURM_COUNT, "4")]).unwrap_err();
        assert!(e.contains("shards are numbered 0 to 3"), "{e}");
        let e = pick(
            None,
            None,
            &[(SLURM_ID, "1"), (SLURM_COUNT, "4"), (SLURM_MIN, "2")],
        )
        .unwrap_err();
        assert!(e.contains("below SLURM_ARRAY_TASK_MIN=2"), "{e}");
        let e = pick(None, None, &[(K8S_INDEX, "1")]).unwrap_err();
        assert!(e.starts_with("--shards: missing"), "{e}");
        let e = pick(None, Some(2), &[(K8S_INDEX, "-1")]).unwrap_err();
        assert!(e.starts_with("JOB_COMPLETION_INDEX=-1: "), "{e}");
        let e = pick(None, Some(2), &[]).unwrap_err();
        assert!(
            e.contains("has no effect without JOB_COMPLETION_INDEX"),
            "{e}"
        );
        assert!(pick(Some("0/2"), Some(2), &[])
            .unwrap_err()
            .contains("with --shard"));
        for bad in ["3", "2/2", "0/0", "a/2", "1.5/2"] {
            assert!(Shard::parse(bad)
                .unwrap_err()
                .to_string()
                .starts_with(&format!("--shard {bad}: ")));
        }
        assert_eq!(
            Shard::parse("1e0/2e0").unwrap(),
            Shard { index: 1, count: 2 }
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_variable_that_is_not_unicode_is_refused_not_taken_as_unset() {
        use std::os::unix::ffi::OsStringExt;
        for name in [SLURM_ID, SLURM_COUNT, SLURM_MIN, K8S_INDEX] {
            let env = |n: &str| -> Option<std::ffi::OsString> {
                let slurm = name != K8S_INDEX;
                match n {
                    _ if n == name => Some(std::ffi::OsString::from_vec(vec![b'1', 0xff])),
                    SLURM_ID if slurm => Some("1".into()),
                    SLURM_COUNT if slurm => Some("4".into()),
                    _ => None,
                }
            };
            let shards = (name == K8S_INDEX).then_some(4);
            let e = Shard::select(None, shards, env).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{name}=1")), "{e}");
            assert!(e.contains("not unicode"), "{e}");
        }
    }

    proptest! {
        #[test]
        fn shards_cover_every_run_once(runs in 0u64..200, n in 1u64..8) {
            for k in 0..runs {
                let holders = (0..n).filter(|&i| Shard { index: i, count: n }.holds(k)).count();
                prop_assert_eq!(holders, 1);
            }
        }
    }
}
