//! `disagg`: an analytic prefill/decode split.

use aisim_core::profile::GpuProfile;
use aisim_core::timing::PhysicsCoefficients;
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{
    ArrivalSpec, KvTransferMode, KvTransferSpec, LengthSpec, PoolSpec as ReplayPool, SyntheticSpec,
    TopologySpec, WorkloadSpec,
};
use aisim_replay::{ReplaySpec, Replayer};
use serde::Serialize;

use crate::calibrate::CalibrationMethod;
use crate::cdf::Cdf;
use crate::disagg_batch::SplitModel;
use crate::engine_verify::{engine_check, profile_engine, profile_timing};
use crate::pool_model::{PoolModel, SizingModel};
use crate::sizing::{min_gpus, SizingTargets};
use crate::validate;
use crate::FleetError;

/// Latencies within this factor of each other are the same to the Pareto
/// set (the batch model's figures agree with the engine check to about 5 %).
pub const LATENCY_RESOLUTION: f64 = 1.05;

/// Disagg parameters.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DisaggParams {
    /// Arrival rate, req/s.
    pub lam: f64,
    /// Context window, tokens.
    pub max_ctx: u32,
    /// Mean input tokens.
    pub mean_isl: f64,
    /// Mean output tokens.
    pub mean_osl: f64,
    /// TTFT target, ms.
    pub slo_ttft_ms: f64,
    /// TPOT target, ms.
    pub slo_tpot_ms: f64,
    /// Most prefill GPUs tried.
    pub max_prefill: u64,
    /// Most decode GPUs tried.
    pub max_decode: u64,
    /// Prefill pool efficiency (0.90).
    pub prefill_efficiency: f64,
    /// Decode pool efficiency (0.92).
    pub decode_efficiency: f64,
    /// Effective TTFT multiplier over the prefill compute (1.80).
    pub ttft_multiplier: f64,
    /// The model splits are sized with (the efficiencies and the TTFT
    /// multiplier belong to the slot model; the batch model has none).
    pub model: SizingModel,
}

/// One split.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggPoint {
    /// Prefill GPUs.
    pub n_prefill: u64,
    /// Decode GPUs.
    pub n_decode: u64,
    /// Both.
    pub total_gpus: u64,
    /// Requests per second the split sustains.
    pub system_rps: f64,
    /// TTFT, ms: in the batch model the P99 of the wait for a prefill GPU +
    /// the prompt's chunks + one decode pass; in the slot model the
    /// reference's effective TTFT (a multiple of one prompt's chunks).
    pub ttft_ms: f64,
    /// TPOT, ms: a decode pass at the decode GPUs' operating point (batch
    /// model) or at their full slots (slot model).
    pub tpot_ms: f64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Thousands of dollars per year.
    pub annual_cost_kusd: f64,
    /// SLOs hold and the rate covers λ.
    pub slo_met: bool,
}

/// The disagg report.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggReport {
    /// Schema version.
    pub schema_version: u32,
    /// Parameters.
    pub params: DisaggParams,
    /// Prefill profile key.
    pub gpu_prefill: String,
    /// Decode profile key.
    pub gpu_decode: String,
    /// Cheapest feasible split.
    pub best: Option<DisaggPoint>,
    /// Feasible splits not dominated in (cost, TTFT, TPOT).
    pub points: Vec<DisaggPoint>,
    /// Aggregated baselines: each distinct profile alone serving prefill and decode.
    pub aggregated: Vec<AggregatedBaseline>,
    /// The engine check (`--verify engine`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<DisaggEngineCheck>,
    /// The split to deploy: the cheapest that meets the SLOs by the deepest
    /// check that ran (`recommended_by`); none when no split passed that
    /// check, even if the analytic sweep passed one.
    pub recommended: Option<DisaggPoint>,
    /// The check the recommendation rests on: `engine` or `analytic`.
    pub recommended_by: &'static str,
}

/// Settings of `disagg --verify engine`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DisaggVerifyParams {
    /// Cheapest feasible splits replayed, whatever their prefill count (`--verify-top`).
    pub top: usize,
    /// Requests per replay (`--n-sim-req`); the first fifth is warm-up.
    pub n_req: u64,
    /// Seed of the replays (`--seed`).
    pub seed: u64,
    /// KV bytes of one token (`--kv-bytes-per-token`); from the profile's
    /// model when absent.
    pub kv_bytes_per_token: Option<u64>,
    /// Link bandwidth, GB/s (`--kv-transfer-gb-s`).
    pub kv_transfer_gb_s: f64,
    /// Fixed cost of a transfer, ms (`--kv-transfer-latency-ms`).
    pub kv_transfer_latency_ms: f64,
    /// The replay's timing: the profile's physics model with these
    /// coefficients (`--timing`), or its iteration model when absent.
    pub coefficients: Option<PhysicsCoefficients>,
}

/// Most splits one engine check replays.
pub const MAX_VERIFY_TOP: u64 = 100;

/// The engine check of the cheapest splits.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggEngineCheck {
    /// Its settings.
    pub params: DisaggVerifyParams,
    /// KV bytes of one token the transfers used.
    pub kv_bytes_per_token: u64,
    /// The percentile held against the SLOs (`p99`).
    pub percentile: &'static str,
    /// Each replayed split, cheapest first.
    pub verified: Vec<DisaggVerified>,
}

/// One split replayed through the disaggregated runtime.
#[derive(Debug, Clone, Serialize)]
pub struct DisaggVerified {
    /// The analytic split.
    pub split: DisaggPoint,
    /// Requests measured (after warm-up).
    pub offered: u64,
    /// Of which completed.
    pub completed: u64,
    /// TTFT median over the offered requests, ms (unfinished ones count as
    /// infinitely slow; `null`: infinite).
    pub ttft_p50_ms: Option<f64>,
    /// TTFT P99, ms, the same way.
    pub ttft_p99_ms: Option<f64>,
    /// TPOT median of the completed requests, ms.
    pub tpot_p50_ms: Option<f64>,
    /// TPOT P99, ms.
    pub tpot_p99_ms: Option<f64>,
    /// Mean KV transfer time, ms.
    pub kv_transfer_mean_ms: f64,
    /// TTFT P99 within `slo_ttft_ms`.
    pub meets_ttft: bool,
    /// TPOT P99 within `slo_tpot_ms`.
    pub meets_tpot: bool,
    /// Both.
    pub meets: bool,
}

/// An aggregated fleet of one profile for comparison.
#[derive(Debug, Clone, Serialize)]
pub struct AggregatedBaseline {
    /// Profile key.
    pub gpu: String,
    /// GPUs: the fewest meeting the TTFT target (batch model; the stable
    /// count when none does), or those covering λ at the decode efficiency
    /// (slot model).
    pub n_gpus: u64,
    /// Dollars per hour.
    pub cost_per_hr: f64,
    /// Per-GPU throughput, req/s.
    pub per_gpu_rps: f64,
    /// Whether its P99 TTFT meets the target (the batch model; `null` under
    /// the slot model, which sizes the baseline by rate alone).
    pub ttft_met: Option<bool>,
}

impl DisaggParams {
    /// The mean prompt and output lengths in whole tokens (at least 1 each),
    /// as both models and the engine check use them.
    pub fn lengths(&self) -> (u32, u32) {
        let whole = |x: f64| x.round().clamp(1.0, f64::from(u32::MAX)) as u32;
        (whole(self.mean_isl), whole(self.mean_osl))
    }

    /// Checks every parameter; the grid of splits is bounded by [`validate::MAX_SWEEP`].
    pub fn validate(
        &self,
        prefill: &dyn GpuProfile,
        decode: &dyn GpuProfile,
    ) -> Result<(), FleetError> {
        validate::rate("--lam", self.lam)?;
        validate::context("--max-ctx", self.max_ctx, prefill)?;
        validate::context("--max-ctx", self.max_ctx, decode)?;
        validate::tokens("--mean-isl", self.mean_isl)?;
        validate::tokens("--mean-osl", self.mean_osl)?;
        validate::positive("--slo-ttft-ms", self.slo_ttft_ms)?;
        validate::positive("--slo-tpot-ms", self.slo_tpot_ms)?;
        let (isl, osl) = self.lengths();
        // The batch model serves the mean request; the context must hold it
        // (the slot model only counts slots of `max_ctx` tokens).
        if self.model == SizingModel::Batch
            && u64::from(isl) + u64::from(osl) > u64::from(self.max_ctx)
        {
            return Err(FleetError::invalid(
                "--max-ctx",
                self.max_ctx,
                format!(
                    "is shorter than the mean request ({isl} prompt + {osl} output tokens): raise it to {} or more",
                    u64::from(isl) + u64::from(osl)
                ),
            ));
        }
        validate::count("--max-prefill", self.max_prefill, validate::MAX_SWEEP)?;
        validate::count(
            "--max-decode",
            self.max_decode,
            validate::MAX_SWEEP / self.max_prefill,
        )?;
        validate::share("--prefill-efficiency", self.prefill_efficiency)?;
        validate::share("--decode-efficiency", self.decode_efficiency)?;
        validate::positive("--ttft-multiplier", self.ttft_multiplier)
    }
}

/// Sweeps every split up to the limits.
pub fn disagg(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
) -> Result<DisaggReport, FleetError> {
    Ok(sweep(prefill, decode, p)?.0)
}

/// The report and every feasible split, cheapest first (then the faster).
fn sweep(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
) -> Result<(DisaggReport, Vec<DisaggPoint>), FleetError> {
    p.validate(prefill, decode)?;
    let all = match p.model {
        SizingModel::Slots => slot_splits(prefill, decode, p),
        SizingModel::Batch => batch_splits(prefill, decode, p)?,
    };
    let feasible: Vec<&DisaggPoint> = all.iter().filter(|d| d.slo_met).collect();
    let best = feasible
        .iter()
        .min_by(|a, b| {
            a.cost_per_hr
                .total_cmp(&b.cost_per_hr)
                .then(b.system_rps.total_cmp(&a.system_rps))
        })
        .map(|d| (*d).clone());
    // Pareto set over (cost, TTFT, TPOT): no other feasible split is no
    // dearer, no slower in either, and better in one, latencies compared to
    // LATENCY_RESOLUTION (a split 2 % faster for a GPU more is not a
    // choice; the batch model's latencies fall a little with every GPU).
    // A split's spare rate is not a goal once it covers λ: with the slot
    // model's TTFT and TPOT the same for every split, the set is the
    // cheapest ones.
    let r = LATENCY_RESOLUTION;
    let dominates = |o: &DisaggPoint, d: &DisaggPoint| {
        let no_worse = o.cost_per_hr <= d.cost_per_hr
            && o.ttft_ms <= d.ttft_ms * r
            && o.tpot_ms <= d.tpot_ms * r;
        let better =
            o.cost_per_hr < d.cost_per_hr || o.ttft_ms * r < d.ttft_ms || o.tpot_ms * r < d.tpot_ms;
        no_worse && better
    };
    let points = feasible
        .iter()
        .filter(|d| !feasible.iter().any(|o| dominates(o, d)))
        .map(|d| (*d).clone())
        .collect();
    // One row per distinct profile (the same profile on both sides is one baseline).
    let profiles: &[&dyn GpuProfile] = if prefill.key() == decode.key() {
        &[prefill]
    } else {
        &[prefill, decode]
    };
    let aggregated = profiles
        .iter()
        .map(|g| aggregated_baseline(*g, p))
        .collect::<Result<_, _>>()?;
    let mut cheapest: Vec<DisaggPoint> = feasible.into_iter().cloned().collect();
    cheapest.sort_by(|a, b| {
        a.cost_per_hr
            .total_cmp(&b.cost_per_hr)
            .then(b.system_rps.total_cmp(&a.system_rps))
    });
    let report = DisaggReport {
        schema_version: crate::SCHEMA_VERSION,
        params: *p,
        gpu_prefill: prefill.key().to_string(),
        gpu_decode: decode.key().to_string(),
        recommended: best.clone(),
        recommended_by: "analytic",
        best,
        points,
        aggregated,
        engine: None,
    };
    Ok((report, cheapest))
}

/// A split of `n_p` prefill and `n_d` decode GPUs.
fn split(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
    (n_p, n_d): (u64, u64),
    (rps, ttft_ms, tpot_ms): (f64, f64, f64),
) -> DisaggPoint {
    let cost = n_p as f64 * prefill.cost_per_hr() + n_d as f64 * decode.cost_per_hr();
    DisaggPoint {
        n_prefill: n_p,
        n_decode: n_d,
        total_gpus: n_p + n_d,
        system_rps: rps,
        ttft_ms,
        tpot_ms,
        cost_per_hr: cost,
        annual_cost_kusd: cost * 8.76,
        slo_met: ttft_ms <= p.slo_ttft_ms && tpot_ms <= p.slo_tpot_ms && rps >= p.lam,
    }
}

/// Every split in the reference's slot model: a pool's rate is its slots'
/// (each slot prefilling or decoding on its own) times an efficiency, the
/// TTFT a multiple of one prompt's chunks at the full batch's iteration,
/// the same for every split.
fn slot_splits(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
) -> Vec<DisaggPoint> {
    let (isl, osl) = p.lengths();
    let slots_p = prefill.n_slots(p.max_ctx);
    let slots_d = decode.n_slots(p.max_ctx);
    let prefill_ttft_ms = (isl as u64).div_ceil(prefill.chunk().max(1) as u64) as f64
        * prefill.iter_n_s(slots_p as f64)
        * 1e3;
    let ttft_ms = p.ttft_multiplier * prefill_ttft_ms;
    let tpot_ms = decode.iter_n_s(slots_d as f64) * 1e3;
    let prefill_rate = prefill.throughput_rps(p.max_ctx, isl, 1);
    let decode_rate = decode.throughput_rps(p.max_ctx, 1, osl);
    let mut all = Vec::new();
    for n_p in 1..=p.max_prefill {
        for n_d in 1..=p.max_decode {
            let rps = (p.prefill_efficiency * n_p as f64 * prefill_rate)
                .min(p.decode_efficiency * n_d as f64 * decode_rate);
            all.push(split(
                prefill,
                decode,
                p,
                (n_p, n_d),
                (rps, ttft_ms, tpot_ms),
            ));
        }
    }
    all
}

/// Every split in the batch model ([`SplitModel`]): the TTFT falls as
/// prefill GPUs are added and the TPOT as decode GPUs are.
fn batch_splits(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
) -> Result<Vec<DisaggPoint>, FleetError> {
    let m = SplitModel::new(
        prefill,
        decode,
        p.lengths(),
        p.max_ctx,
        p.model.max_num_seqs(prefill, p.max_ctx),
    )?;
    let prefill_s: Vec<f64> = (1..=p.max_prefill)
        .map(|n| m.prefill_p99_s(n, p.lam))
        .collect();
    let pass_s: Vec<f64> = (1..=p.max_decode)
        .map(|n| m.decode_pass_s(n, p.lam))
        .collect();
    let mut all = Vec::new();
    for (n_p, &pre) in (1..).zip(&prefill_s) {
        for (n_d, &pass) in (1..).zip(&pass_s) {
            let f = m.figures(n_p, n_d, pre, pass);
            all.push(split(
                prefill,
                decode,
                p,
                (n_p, n_d),
                (f.capacity_rps, f.ttft_ms, f.tpot_ms),
            ));
        }
    }
    Ok(all)
}

/// One profile serving both phases: in the slot model, the GPUs covering
/// λ at the decode efficiency; in the batch model, the fewest whose P99
/// TTFT meets the target ([`min_gpus`], which says when none does).
fn aggregated_baseline(
    g: &dyn GpuProfile,
    p: &DisaggParams,
) -> Result<AggregatedBaseline, FleetError> {
    let (isl, osl) = p.lengths();
    let (n, rate, ttft_met) = match p.model {
        SizingModel::Slots => {
            let rate = g.throughput_rps(p.max_ctx, isl, osl);
            let n = (p.lam / (p.decode_efficiency * rate)).ceil().max(1.0) as u64;
            (n, rate, None)
        }
        SizingModel::Batch => {
            let cdf = Cdf::from_pairs("disagg means".into(), vec![(isl, osl)])?;
            let m = PoolModel::new(
                SizingModel::Batch,
                &cdf,
                1,
                p.max_ctx,
                g,
                CalibrationMethod::Exact,
                0,
            );
            let targets = SizingTargets {
                slo_ms: p.slo_ttft_ms,
                util_cap: None,
                availability: None,
            };
            let s = min_gpus(p.lam, &m, &targets);
            (s.n_gpus, m.mu_gpu(), Some(s.slo_met))
        }
    };
    Ok(AggregatedBaseline {
        gpu: g.key().to_string(),
        n_gpus: n,
        cost_per_hr: n as f64 * g.cost_per_hr(),
        per_gpu_rps: rate,
        ttft_met,
    })
}

impl DisaggVerifyParams {
    /// Checks the settings against the profiles; the KV bytes of one token
    /// the transfers use (the flag's, or the profile model's).
    pub fn validate(
        &self,
        prefill: &dyn GpuProfile,
        decode: &dyn GpuProfile,
    ) -> Result<u64, FleetError> {
        validate::count("--verify-top", self.top as u64, MAX_VERIFY_TOP)?;
        validate::count("--n-sim-req", self.n_req, validate::MAX_REQUESTS)?;
        validate::positive("--kv-transfer-gb-s", self.kv_transfer_gb_s)?;
        validate::non_negative("--kv-transfer-latency-ms", self.kv_transfer_latency_ms)?;
        if let (Some(pm), Some(dm)) = (prefill.model_name(), decode.model_name()) {
            if pm != dm {
                return Err(FleetError::invalid(
                    "--gpu-decode",
                    decode.key(),
                    format!(
                        "serves {dm}, but --gpu-prefill {} serves {pm}: --verify engine hands each prompt's KV from a prefill to a decode worker, so both serve one model",
                        prefill.key()
                    ),
                ));
            }
        }
        match self.kv_bytes_per_token {
            Some(0) => Err(FleetError::invalid(
                "--kv-bytes-per-token",
                0u64,
                "must be at least 1",
            )),
            Some(b) => Ok(b),
            // The prefill profile's first: it computes what is sent.
            None => [prefill, decode]
                .iter()
                .find_map(|p| p.kv_bytes_per_token())
                .filter(|b| b.is_finite() && *b >= 1.0)
                .map(|b| b.round() as u64)
                .ok_or_else(|| {
                    FleetError::invalid(
                        "--kv-bytes-per-token",
                        "absent",
                        format!(
                            "{} has no model to take it from: give it, or a profile GPU/MODEL/tpN",
                            prefill.key()
                        ),
                    )
                }),
        }
    }
}

/// The replay spec that stands for one split: `n_prefill` prefill and
/// `n_decode` decode workers, each pool's engine (KV capacity, slots at
/// `max_ctx`) and timing from its own profile (the decode pool's its own
/// model only when the profiles differ), Poisson arrivals at `lam` of
/// `mean_isl` prompt and `mean_osl` output tokens, the least-loaded router
/// in both pools, the whole prompt sent over the link, the first fifth as
/// warm-up.
pub fn disagg_replay_spec(
    split: &DisaggPoint,
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
    v: &DisaggVerifyParams,
    kv_bytes_per_token: u64,
) -> ReplaySpec {
    let (isl, osl) = p.lengths();
    let pool = |workers: u64, profile: &dyn GpuProfile| ReplayPool {
        workers: u32::try_from(workers).unwrap_or(u32::MAX).max(1),
        engine: Some(Box::new(profile_engine(
            profile,
            p.model.max_num_seqs(profile, p.max_ctx),
        ))),
        timing: (profile.key() != prefill.key())
            .then(|| Box::new(profile_timing(profile, v.coefficients))),
    };
    let spec = ReplaySpec {
        seed: v.seed,
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: v.n_req,
            input: LengthSpec::Fixed { tokens: isl },
            output: LengthSpec::Fixed { tokens: osl },
            arrival: ArrivalSpec::Poisson { rate: p.lam },
            prefix_groups: 0,
            prefix_tokens: 0,
            turns: 1,
            think_ms: 0.0,
            trace_block_size: 512,
            total_cdf: None,
        }),
        topology: TopologySpec::Disaggregated {
            prefill: pool(split.n_prefill, prefill),
            decode: pool(split.n_decode, decode),
            kv_transfer: KvTransferSpec {
                gb_s: v.kv_transfer_gb_s,
                latency_ms: v.kv_transfer_latency_ms,
                bytes_per_token: Some(kv_bytes_per_token),
                mode: KvTransferMode::FullPrompt,
            },
        },
        timing: profile_timing(prefill, v.coefficients),
        ..ReplaySpec::default()
    };
    engine_check(spec, v.n_req)
}

/// Replays one split and holds its P99s against the SLOs.
pub fn verify_split(
    split: &DisaggPoint,
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
    v: &DisaggVerifyParams,
    kv_bytes_per_token: u64,
) -> Result<DisaggVerified, FleetError> {
    let spec = disagg_replay_spec(split, prefill, decode, p, v, kv_bytes_per_token);
    let r = Replayer::new(spec, SpecComposition)?.run()?.report;
    let ttft = &r.latency_offered.ttft_ms;
    let tpot = &r.latency.tpot_ms;
    let meets_ttft = ttft.p99.is_some_and(|t| t <= p.slo_ttft_ms);
    // No request with two tokens: no TPOT to miss.
    let meets_tpot = tpot.p99.is_none_or(|t| t <= p.slo_tpot_ms) && r.outcomes.completed > 0;
    Ok(DisaggVerified {
        split: split.clone(),
        offered: r.outcomes.offered,
        completed: r.outcomes.completed,
        ttft_p50_ms: ttft.p50,
        ttft_p99_ms: ttft.p99,
        tpot_p50_ms: tpot.p50,
        tpot_p99_ms: tpot.p99,
        kv_transfer_mean_ms: r.kv_transfer.map_or(0.0, |t| t.mean_ms),
        meets_ttft,
        meets_tpot,
        meets: meets_ttft && meets_tpot,
    })
}

/// `disagg --verify engine`: the sweep, then its cheapest `v.top` feasible
/// splits replayed through the disaggregated runtime; the recommendation is
/// the cheapest replayed split that meets both SLOs at P99 (none when none
/// does).
pub fn disagg_verified(
    prefill: &dyn GpuProfile,
    decode: &dyn GpuProfile,
    p: &DisaggParams,
    v: &DisaggVerifyParams,
) -> Result<DisaggReport, FleetError> {
    // `disagg` validates `p`; the sweep is bounded, so it may run first.
    let (mut r, cheapest) = sweep(prefill, decode, p)?;
    let kv_bytes_per_token = v.validate(prefill, decode)?;
    let verified = cheapest
        .iter()
        .take(v.top)
        .map(|s| verify_split(s, prefill, decode, p, v, kv_bytes_per_token))
        .collect::<Result<Vec<_>, _>>()?;
    // Replayed cheapest first, so the first that meets is the cheapest.
    r.recommended = verified.iter().find(|c| c.meets).map(|c| c.split.clone());
    r.recommended_by = "engine";
    r.engine = Some(DisaggEngineCheck {
        params: *v,
        kv_bytes_per_token,
        percentile: "p99",
        verified,
    });
    Ok(r)
}
