//! The checks a replay makes before its first event, made at plan time so a
//! bad run is named there and not on a cluster node: the spec's own
//! validation, each pool's timing model (its own, else the spec's) and
//! engine built, its trace read and laid on the clock. Each distinct model,
//! engine and trace is checked once.

use std::collections::HashSet;
use std::sync::Arc;

use aisim_core::timing::TimingModel;
use aisim_core::Engine;

use super::traces::Traces;
use aisim_replay::workload::build_workload_with;
use aisim_replay::{ReplayError, ReplaySpec};

/// What has been checked already.
#[derive(Default)]
pub(crate) struct Preflight {
    timings: Vec<(String, Arc<dyn TimingModel>)>,
    engines: HashSet<String>,
    workloads: HashSet<String>,
    traces: Traces,
}

impl Preflight {
    /// Checks one run's spec.
    pub(crate) fn check(&mut self, spec: &ReplaySpec) -> Result<(), ReplayError> {
        let mut spec = spec.clone();
        spec.apply_profile()?;
        spec.validate()?;
        // Each pool's engine against the timing it runs: its own when it has
        // one (a disaggregated pool's `timing`, a `table:` file of its own),
        // else the spec's, as `Replayer::run` builds them.
        for pool in spec.pools() {
            let timing_key = serde_json::to_string(pool.timing).expect("specs serialize");
            let timing = match self.timings.iter().find(|(k, _)| *k == timing_key) {
                Some((_, t)) => t.clone(),
                None => {
                    let t = pool.timing.build()?;
                    self.timings.push((timing_key.clone(), t.clone()));
                    t
                }
            };
            let key = format!(
                "{timing_key}{}",
                serde_json::to_string(pool.engine).expect("engines serialize")
            );
            if !self.engines.contains(&key) {
                Engine::new(pool.engine.clone(), timing)?;
                self.engines.insert(key);
            }
        }
        // The trace at this speedup: a time it stretches beyond the clock
        // is refused when the workload is built.
        let key = format!(
            "{}{}",
            serde_json::to_string(&spec.workload).expect("specs serialize"),
            spec.admission.speedup
        );
        if !self.workloads.contains(&key) {
            let trace = self.traces.get(&spec.workload)?;
            build_workload_with(&spec, trace.as_deref())?;
            self.workloads.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aisim_core::timing::TimingSpec;
    use aisim_replay::spec::{KvTransferSpec, PoolSpec, TopologySpec, WorkloadSpec};

    /// A disaggregated demo with `decode`'s own timing.
    fn disagg(decode: TimingSpec) -> ReplaySpec {
        ReplaySpec {
            workload: WorkloadSpec::Demo,
            timing: TimingSpec::Fixed {
                prefill_ms: 5.0,
                decode_ms: 1.0,
            },
            topology: TopologySpec::Disaggregated {
                prefill: PoolSpec::new(1),
                decode: PoolSpec {
                    timing: Some(Box::new(decode)),
                    ..PoolSpec::new(1)
                },
                kv_transfer: KvTransferSpec {
                    bytes_per_token: Some(1000),
                    ..KvTransferSpec::default()
                },
            },
            ..ReplaySpec::default()
        }
    }

    #[test]
    fn each_pools_own_timing_is_built_at_plan_time() {
        let fixed = TimingSpec::Fixed {
            prefill_ms: 9.0,
            decode_ms: 2.0,
        };
        Preflight::default().check(&disagg(fixed)).unwrap();
        let missing = TimingSpec::Table {
            path: "/no/such/decode-table.json".into(),
        };
        let e = Preflight::default()
            .check(&disagg(missing))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/no/such/decode-table.json"), "{e}");
    }
}
