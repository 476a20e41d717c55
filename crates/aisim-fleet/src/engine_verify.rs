//! `optimize --verify engine`: replays each pool of a candidate through the
//! engine-level replay (token-level continuous batching, chunked prefill, KV
//! paging), with requests drawn from the pool's slice of the workload (a
//! trace's own pairs, or the CDF split 80/20).

use aisim_core::profile::GpuProfile;
use aisim_core::timing::{PhysicsCoefficients, TimingSpec};
use aisim_core::EngineConfig;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{
    ArrivalSpec, LengthSpec, RouterKind, SyntheticSpec, TopologySpec, TotalLengthCdf, WorkloadSpec,
};
use aisim_replay::{ReplaySpec, Replayer};

use crate::plan::{Candidate, Plan, PlannedPool, Planner};
use crate::FleetError;

/// The replay spec that stands for one pool: `n_gpus` workers of the profile's
/// iteration model (or its physics model under `coefficients`) and KV capacity, Poisson arrivals at the pool's rate, the
/// least-loaded router (the DES's shortest queue), the first fifth as warm-up.
pub fn pool_replay_spec(
    pool: &PlannedPool,
    profile: &dyn GpuProfile,
    n_req: u64,
    seed: u64,
    coefficients: Option<PhysicsCoefficients>,
) -> ReplaySpec {
    let spec = ReplaySpec {
        seed,
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: n_req,
            input: LengthSpec::Fixed { tokens: 1 },
            output: LengthSpec::Fixed { tokens: 1 },
            arrival: ArrivalSpec::Poisson {
                rate: pool.size.lam,
            },
            prefix_groups: 0,
            prefix_tokens: 0,
            turns: 1,
            think_ms: 0.0,
            trace_block_size: 512,
            total_cdf: Some(TotalLengthCdf {
                points: pool.cdf.points.clone(),
                min_tokens: pool.lo_clamp,
                max_tokens: pool.pool_max as u64,
                pairs: pool.cdf.pairs.as_deref().map(<[_]>::to_vec),
            }),
        }),
        topology: TopologySpec::Aggregated {
            workers: pool.size.n_gpus.max(1) as u32,
        },
        timing: profile_timing(profile, coefficients),
        engine: profile_engine(profile, pool.model.max_num_seqs()),
        ..ReplaySpec::default()
    };
    engine_check(spec, n_req)
}

/// The engine of a worker of `profile`: the profile's KV capacity (in blocks
/// of the default size) and `slots` running requests at most.
pub(crate) fn profile_engine(profile: &dyn GpuProfile, slots: u64) -> EngineConfig {
    let mut e = EngineConfig::default();
    let block_size = e.effective_block_size();
    let kv_tokens = profile.total_kv_blks() * profile.blk_size() as u64;
    e.num_gpu_blocks = Some(
        u32::try_from(kv_tokens / block_size as u64)
            .unwrap_or(u32::MAX)
            .max(1),
    );
    e.max_num_seqs = u32::try_from(slots).unwrap_or(u32::MAX).max(1);
    e
}

/// The profile's iteration model, or its physics model under `coefficients`.
pub(crate) fn profile_timing(
    profile: &dyn GpuProfile,
    coefficients: Option<PhysicsCoefficients>,
) -> TimingSpec {
    let profile = profile.key().to_string();
    match coefficients {
        None => TimingSpec::Iteration { profile },
        Some(coefficients) => TimingSpec::Physics {
            profile,
            coefficients,
            fitted_on: Vec::new(),
        },
    }
}

/// What every engine check's replay shares: the least-loaded router (the
/// DES's shortest queue) and the first fifth of the `n_req` requests as
/// warm-up.
pub(crate) fn engine_check(mut spec: ReplaySpec, n_req: u64) -> ReplaySpec {
    spec.router.policy = RouterKind::LeastLoaded;
    spec.discipline.warmup_requests = n_req / 5;
    spec
}

/// P99 TTFT (ms) of one pool by engine-level replay; 0 for a pool with no GPUs.
pub fn pool_p99_ttft_ms(
    pool: &PlannedPool,
    profile: &dyn GpuProfile,
    n_req: u64,
    seed: u64,
    coefficients: Option<PhysicsCoefficients>,
) -> Result<f64, FleetError> {
    if pool.size.n_gpus == 0 {
        return Ok(0.0);
    }
    let spec = pool_replay_spec(pool, profile, n_req, seed, coefficients);
    let out = Replayer::new(spec, SpecComposition)?.run()?;
    // Unfinished or rejected requests make the offered view's P99 infinite.
    Ok(out
        .report
        .latency_offered
        .ttft_ms
        .p99
        .unwrap_or(f64::INFINITY))
}

impl Planner {
    /// The candidate with its P99s from the engine-level replay.
    pub fn verify_engine(
        &self,
        plan: &Plan,
        n_req: u64,
        coefficients: Option<PhysicsCoefficients>,
    ) -> Result<Candidate, FleetError> {
        let mut c = plan.candidate.clone();
        c.analytic_p99_ms = Some((c.p99_ttft_short_ms, c.p99_ttft_long_ms));
        let short_profile = if c.gamma.is_none() {
            self.gpu_long.as_ref()
        } else {
            self.gpu_short.as_ref()
        };
        c.p99_ttft_short_ms =
            pool_p99_ttft_ms(&plan.short, short_profile, n_req, self.seed, coefficients)?;
        c.p99_ttft_long_ms = match &plan.long {
            Some(p) => pool_p99_ttft_ms(
                p,
                self.gpu_long.as_ref(),
                n_req,
                self.seed ^ 0x5a5a,
                coefficients,
            )?,
            None => 0.0,
        };
        c.slo_met =
            c.p99_ttft_short_ms <= self.targets.slo_ms && c.p99_ttft_long_ms <= self.targets.slo_ms;
        c.source = "engine";
        Ok(c)
    }
}
