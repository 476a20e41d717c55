//! Several seeds of one replay (`--seeds N`): the same spec under seeds
//! `seed`, `seed + 1`, ..., `seed + N − 1` on a bounded thread pool, and the
//! mean and 95 % Student-t interval of every figure of the report over them.
//!
//! Only the first seed's report is kept whole (it is the one the command
//! prints); every other run is folded into its figures (a few hundred
//! numbers) as soon as it ends, so memory does not grow with the requests of
//! N runs. The runs are deterministic and the figures are merged in seed
//! order, so the summary does not depend on the threads.

mod leaves;

pub use aisim_core::student_t::{interval, t975, Interval};
pub use aisim_core::thread_pool::{available_threads, run_seeds, run_seeds_on};
pub use aisim_replay::seeds_summary::{SeedMetric, SeedMetrics, SeedsReport, MAX_SEEDS};
pub use leaves::{figures, SECTIONS};

use aisim_replay::policy::ReplayComposition;
use aisim_replay::report::ReplayReport;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, ReplaySpec, WorkloadSpec};
use aisim_replay::{ReplayError, Replayer};

/// Why several seeds could not be summarized.
#[derive(Debug, thiserror::Error)]
pub enum SeedsError {
    /// A seed count out of range.
    #[error("--seeds {n}: {reason}")]
    Count {
        /// The count given.
        n: u64,
        /// What is allowed.
        reason: String,
    },
    /// The run of one seed failed (the first failing seed, in seed order).
    #[error("--seeds: the run of seed {seed} failed: {source}")]
    Run {
        /// The seed.
        seed: u64,
        /// Its error.
        source: ReplayError,
    },
}

impl SeedsError {
    /// Whether this is aisim's bug rather than the user's input.
    pub fn is_internal(&self) -> bool {
        match self {
            SeedsError::Count { .. } => false,
            SeedsError::Run { source, .. } => source.is_internal(),
        }
    }
}

/// Whether the seed changes anything in a run of `spec`: a random placement
/// draws from it (the random router, kv at a temperature above 0, sticky
/// over either), and so does a generated workload unless nothing in it is
/// drawn (constant arrivals, fixed lengths, at most one prefix group).
pub fn seed_matters(spec: &ReplaySpec) -> bool {
    let workload = match &spec.workload {
        WorkloadSpec::Synthetic(s) => {
            let fixed = |l: &LengthSpec| matches!(l, LengthSpec::Fixed { .. });
            !matches!(s.arrival, ArrivalSpec::Constant { .. })
                || s.total_cdf.is_some()
                || !fixed(&s.input)
                || !fixed(&s.output)
                || s.prefix_groups > 1
        }
        WorkloadSpec::Demo | WorkloadSpec::Trace { .. } => false,
    };
    // A random placement: random, or kv sampling at a temperature above 0
    // (sticky's first turns by either count too).
    workload || spec.router.is_random()
}

/// Refuses a seed count outside `1 ..= MAX_SEEDS` (before anything runs).
pub fn check_count(n: u64) -> Result<(), SeedsError> {
    if (1..=MAX_SEEDS).contains(&n) {
        return Ok(());
    }
    Err(SeedsError::Count {
        n,
        reason: format!("allowed: 1 ..= {MAX_SEEDS}"),
    })
}

/// The summary of `first` (the report of the first seed) and `n − 1` more
/// seeds of its spec, on at most `threads` threads ([`available_threads`]
/// for as many as the machine runs at once).
pub fn replay_seeds<C>(
    threads: usize,
    first: &ReplayReport,
    n: u64,
    composition: &C,
) -> Result<SeedsReport, SeedsError>
where
    C: ReplayComposition + Clone + Sync,
{
    check_count(n)?;
    let keyed = figures_of(first);
    let keys: Vec<&str> = keyed.iter().map(|(k, _)| k.as_str()).collect();
    let first_seed = first.spec.seed;
    // Each later seed's figures in the first one's order; a figure it lacks
    // counts as null.
    let later = run_seeds_on(threads, n - 1, first_seed.wrapping_add(1), |seed| {
        let spec = ReplaySpec {
            seed,
            ..first.spec.clone()
        };
        let report = Replayer::new(spec, composition.clone())
            .and_then(|r| r.run())
            .map_err(|source| SeedsError::Run { seed, source })?
            .report;
        let mine = figures_of(&report);
        Ok(keys
            .iter()
            .map(|k| mine.iter().find(|(m, _)| m == k).and_then(|(_, v)| *v))
            .collect::<Vec<Option<f64>>>())
    });
    let later = later.into_iter().collect::<Result<Vec<_>, SeedsError>>()?;
    let metrics = keyed
        .iter()
        .enumerate()
        .map(|(i, (key, v))| {
            let values: Option<Vec<f64>> = std::iter::once(*v)
                .chain(later.iter().map(|seed| seed[i]))
                .collect();
            (key.clone(), summarize(values.as_deref()))
        })
        .collect();
    Ok(SeedsReport {
        n,
        first_seed,
        metrics: SeedMetrics(metrics),
    })
}

/// The figures of one report.
fn figures_of(report: &ReplayReport) -> Vec<(String, Option<f64>)> {
    let json = serde_json::to_string(report).expect("reports serialize");
    figures(&json).expect("a serialized report reads back")
}

/// Mean and interval of one figure's values over the seeds (`None`: null in one).
fn summarize(values: Option<&[f64]>) -> SeedMetric {
    match values {
        Some(xs) => {
            let iv = interval(xs).within(0.0, f64::INFINITY);
            SeedMetric {
                mean: Some(iv.mean),
                ci95_low: Some(iv.lo),
                ci95_high: Some(iv.hi),
            }
        }
        None => SeedMetric {
            mean: None,
            ci95_low: None,
            ci95_high: None,
        },
    }
}
