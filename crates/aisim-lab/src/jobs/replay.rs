//! The replay jobs: one run of a spec (`aisim replay`, whose request is the
//! spec `--print-spec` writes) and the same run under several seeds
//! (`aisim replay --seeds N`).

use aisim_replay::policy::SpecComposition;
use aisim_replay::report::ReplayReport;
use aisim_replay::runtime::{ReplayObserver, Silent};
use aisim_replay::{ReplayOutput, ReplaySpec, Replayer};
use serde::{Deserialize, Serialize};

use super::{JobError, Version};
use crate::seeds;

/// `aisim replay --seeds N`: a spec and the seeds to run it under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedsRequest {
    /// Request version.
    #[serde(default)]
    pub version: Version,
    /// The run (the spec `aisim replay --print-spec` writes); its `seed` is the first.
    pub spec: ReplaySpec,
    /// Seeds, 1 to 10,000: `seed`, `seed + 1`, ...
    pub seeds: u64,
}

/// What a replay keeps besides its report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayOutputs {
    /// The latency curves the HTML page draws.
    pub cdfs: bool,
    /// Every request's record, handed to the observer as the run goes.
    pub stream_records: bool,
}

/// A replay checked and ready to run: [`ReplayJob::new`] refuses a bad spec
/// before any output is opened, [`ReplayJob::run`] runs it (and the other
/// seeds, when asked for).
pub struct ReplayJob {
    replayer: Replayer<SpecComposition>,
    seeds: Option<u64>,
}

impl ReplayJob {
    /// Checks the seed count, then the spec (as the replay reads it).
    pub fn new(
        spec: ReplaySpec,
        seeds: Option<u64>,
        outputs: ReplayOutputs,
    ) -> Result<ReplayJob, JobError> {
        if let Some(n) = seeds {
            seeds::check_count(n)?;
        }
        let mut replayer = Replayer::new(spec, SpecComposition)?.with_cdfs(outputs.cdfs);
        if outputs.stream_records {
            replayer = replayer.stream_records();
        }
        Ok(ReplayJob { replayer, seeds })
    }

    /// Runs the spec, telling `observer` of progress (and of each request's
    /// record when streamed), then the other seeds into the report's `seeds`.
    pub fn run(&self, observer: &mut dyn ReplayObserver) -> Result<ReplayOutput, JobError> {
        let mut output = self.replayer.run_observed(observer)?;
        if let Some(n) = self.seeds {
            let started = std::time::Instant::now();
            let summary = seeds::replay_seeds(
                seeds::available_threads(),
                &output.report,
                n,
                &SpecComposition,
            )?;
            tracing::info!(
                seeds = n,
                wall_ms = started.elapsed().as_millis() as u64,
                "seeds finished"
            );
            output.report.seeds = Some(summary);
        }
        Ok(output)
    }
}

/// Runs `aisim replay`: the report of one run of `spec`.
pub fn replay(spec: &ReplaySpec) -> Result<ReplayReport, JobError> {
    let job = ReplayJob::new(spec.clone(), None, ReplayOutputs::default())?;
    Ok(job.run(&mut Silent)?.report)
}

/// Runs `aisim replay --seeds N`: the first seed's report with the summary
/// over every seed in its `seeds` section.
pub fn replay_seeds(r: &SeedsRequest) -> Result<ReplayReport, JobError> {
    let job = ReplayJob::new(r.spec.clone(), Some(r.seeds), ReplayOutputs::default())?;
    Ok(job.run(&mut Silent)?.report)
}
