//! The request-level fleet DES: pools of identical instances, a router that
//! picks the pool, shortest-queue instances, KV admission and preemption.
//!
//! Decisions where fleet.md leaves room (see docs/fleet.md):
//! - an admitted request holds its slot for the full-slot service time
//!   `prefill + l_out × iter(n_slots, L)`, the `S` the analytic model uses, so
//!   the DES checks the analytic sizing; its tokens follow the physical
//!   estimate `prefill + l_out × iter(n, L)` with `n` the requests running;
//! - when the queue head needs more KV than is free, the longest running
//!   request is preempted only if it is longer than the head and releasing it
//!   lets the head in; it restarts from scratch at the head of the queue.

mod pool;
mod request;
mod router;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use aisim_core::profile::GpuProfile;
use aisim_replay::curves::Cdf as LatencyCdf;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;

pub use aisim_core::student_t::{interval, Interval};
pub use aisim_core::thread_pool::{run_seeds, run_seeds_on};
pub use pool::InstancePick;
use pool::{Active, Instance, PoolState};
pub use request::FleetRequest;
pub use router::{build_router, PoolView, Route, Router, RouterSpec};

use crate::cdf::Cdf;
use crate::validate::{self, MAX_GPUS};
use crate::workload::{exponential, gamma, sample_category};
use crate::{percentile, FleetError};

/// Arrival process of a generated workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// Poisson at the rate.
    Poisson,
    /// Gamma gaps with this shape (1 = Poisson).
    Gamma(f64),
    /// These timestamps (s), rescaled to the rate when one is given.
    Times(Vec<f64>),
}

/// `n` requests from `cdf` at rate `lam` (fresh and identical for the same seed).
pub fn generate(
    cdf: &Cdf,
    lam: f64,
    n: u64,
    arrivals: &Arrivals,
    seed: u64,
) -> Result<Vec<FleetRequest>, FleetError> {
    validate::stream(lam, n)?;
    if let Arrivals::Gamma(b) = arrivals {
        validate::gamma_shape(*b)?;
    }
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut t = 0.0;
    let times: Option<Vec<f64>> = match arrivals {
        Arrivals::Times(ts) if !ts.is_empty() => {
            let t0 = ts[0];
            let span = ts[ts.len() - 1] - t0;
            // Rescale so the trace's mean rate becomes `lam`.
            let scale = if span > 0.0 && lam > 0.0 {
                (ts.len() as f64 - 1.0) / lam / span
            } else {
                1.0
            };
            Some(ts.iter().map(|x| (x - t0) * scale).collect())
        }
        _ => None,
    };
    let count = times.as_ref().map_or(n, |v| n.min(v.len() as u64));
    Ok((0..count)
        .map(|i| {
            t = match (&times, arrivals) {
                (Some(v), _) => v[i as usize],
                (None, Arrivals::Gamma(b)) => t + gamma(&mut rng, *b, 1.0 / (lam * b)),
                _ => t + exponential(&mut rng, lam),
            };
            let (l_in, l_out) = cdf.sample_lengths(1, cdf.max_len(), &mut rng);
            FleetRequest {
                arrival_s: t,
                l_in,
                l_out,
                category: sample_category(&mut rng),
                model: None,
            }
        })
        .collect())
}

/// A pool of the fleet.
#[derive(Debug, Clone)]
pub struct PoolSpec {
    /// Name.
    pub id: String,
    /// Profile of each instance.
    pub profile: Arc<dyn GpuProfile>,
    /// Instances (GPUs of the profile's unit).
    pub n_gpus: u64,
    /// Longest total length it serves.
    pub max_ctx: u32,
}

/// DES settings.
#[derive(Debug, Clone)]
pub struct DesConfig {
    /// Pools.
    pub pools: Vec<PoolSpec>,
    /// Router.
    pub router: RouterSpec,
    /// Instance choice.
    pub pick: InstancePick,
    /// A full instance queue rejects (512).
    pub queue_cap: usize,
    /// Fraction of requests (by arrival) excluded from metrics (0.1).
    pub warmup_frac: f64,
    /// TTFT target, ms.
    pub slo_ms: f64,
    /// Seed of the router.
    pub seed: u64,
}

/// Most pools of one fleet: the router looks at every pool per request.
pub const MAX_POOLS: usize = 1000;

impl DesConfig {
    /// Checks the pools, the router's parameters and pool names, the queue
    /// cap, the warm-up fraction and the target.
    pub fn validate(&self) -> Result<(), FleetError> {
        self.validate_pools()?;
        let ids: Vec<&str> = self.pools.iter().map(|p| p.id.as_str()).collect();
        self.router.validate(&ids)
    }

    /// [`DesConfig::validate`] without the router (for a router of your own).
    pub fn validate_pools(&self) -> Result<(), FleetError> {
        if self.pools.is_empty() || self.pools.len() > MAX_POOLS {
            return Err(FleetError::invalid(
                "pools",
                self.pools.len(),
                format!("a fleet has 1 to {MAX_POOLS} pools"),
            ));
        }
        for (k, p) in self.pools.iter().enumerate() {
            let bad = |field, value: String, reason: String| FleetError::Pool {
                index: k,
                id: p.id.clone(),
                field,
                value,
                reason,
            };
            if self.pools[..k].iter().any(|o| o.id == p.id) {
                return Err(bad("id", p.id.clone(), "is used by an earlier pool".into()));
            }
            if p.n_gpus > MAX_GPUS {
                return Err(bad(
                    "n_gpus",
                    p.n_gpus.to_string(),
                    format!("must be at most {MAX_GPUS}"),
                ));
            }
            if let Err(FleetError::Invalid { reason, .. }) =
                validate::context("max_ctx", p.max_ctx, p.profile.as_ref())
            {
                return Err(bad("max_ctx", p.max_ctx.to_string(), reason));
            }
        }
        if self.pools.iter().all(|p| p.n_gpus == 0) {
            return Err(FleetError::invalid(
                "n_gpus",
                0,
                "every pool has 0 GPUs: a fleet needs at least one",
            ));
        }
        if self.queue_cap == 0 {
            return Err(FleetError::invalid("queue_cap", 0, "must be at least 1"));
        }
        if !(0.0..1.0).contains(&self.warmup_frac) {
            return Err(FleetError::invalid(
                "--warmup",
                self.warmup_frac,
                "must be in [0, 1)",
            ));
        }
        validate::positive("--slo-ttft-ms", self.slo_ms)
    }
}

/// Metrics of one pool, or the fleet.
#[derive(Debug, Clone, Serialize, Default)]
pub struct DesMetrics {
    /// Name.
    pub pool: String,
    /// Offered (after warm-up).
    pub offered: u64,
    /// Completed.
    pub completed: u64,
    /// Rejected: longer than every pool.
    pub rejected_too_long: u64,
    /// Rejected: instance queue full.
    pub rejected_queue_full: u64,
    /// Rejected: routed to a pool with no GPUs.
    pub rejected_no_gpus: u64,
    /// Not finished when the simulation ended (a request no instance can hold).
    pub incomplete: u64,
    /// Preemptions.
    pub preemptions: u64,
    /// P50 TTFT, ms.
    pub p50_ttft_ms: f64,
    /// P99 TTFT, ms.
    pub p99_ttft_ms: f64,
    /// P99 queue wait, ms.
    pub p99_queue_wait_ms: f64,
    /// Completed requests per second over this scope's own span (`span_s`).
    pub throughput_rps: f64,
    /// Span the rate divides by, s: for a pool, its first measured arrival to
    /// its last completion; for the fleet, the first measured arrival to the
    /// end of the run.
    pub span_s: f64,
    /// Completed within the SLO / offered (rejections and unfinished count as misses).
    pub slo_compliance: f64,
    /// Instances that received a request (the rest stayed idle and cost nothing).
    pub instances_used: u64,
    /// Mean slot utilization over this scope's own time in use (first
    /// arrival, warm-up included, to last completion).
    pub utilization: f64,
    /// CDF of the TTFT of the completed requests, ms (for the HTML page;
    /// not in the JSON).
    #[serde(skip)]
    pub ttft_cdf_ms: LatencyCdf,
    /// CDF of their queue wait, ms (the same).
    #[serde(skip)]
    pub queue_wait_cdf_ms: LatencyCdf,
}

/// The result of one DES run.
#[derive(Debug, Clone, Serialize)]
pub struct DesResult {
    /// Fleet-wide.
    pub fleet: DesMetrics,
    /// Per pool.
    pub pools: Vec<DesMetrics>,
    /// Simulated duration, s.
    pub duration_s: f64,
    /// Every offered request, warm-up included.
    pub total_offered: u64,
    /// Every completed request, warm-up included.
    pub total_completed: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct ReqState {
    pool: usize,
    l_in: u32,
    extra_ttft_s: f64,
    epoch: u32,
    first_token_s: f64,
    admitted_s: f64,
    done: bool,
    measured: bool,
    outcome_rejected: u8, // 0 none, 1 too long, 2 queue full, 3 pool without GPUs
    preemptions: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Ev {
    at: f64,
    seq: u64,
    kind: EvKind,
}
#[derive(Debug, Clone, Copy, PartialEq)]
enum EvKind {
    Arrival(usize),
    Release {
        pool: usize,
        inst: usize,
        req: usize,
        epoch: u32,
    },
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.at.total_cmp(&o.at).then(self.seq.cmp(&o.seq))
    }
}

struct Fleet<'a> {
    cfg: &'a DesConfig,
    reqs: &'a [FleetRequest],
    state: Vec<ReqState>,
    pools: Vec<PoolState>,
    slots: Vec<u64>,
    heap: BinaryHeap<Reverse<Ev>>,
    seq: u64,
    now: f64,
}

impl Fleet<'_> {
    fn push(&mut self, at: f64, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Reverse(Ev {
            at,
            seq: self.seq,
            kind,
        }));
    }

    fn touch(inst: &mut Instance, now: f64) {
        inst.busy_slot_s += inst.active.len() as f64 * (now - inst.last_change);
        inst.last_change = now;
    }

    fn view(&self) -> Vec<PoolView> {
        self.pools
            .iter()
            .enumerate()
            .map(|(p, pool)| PoolView {
                max_ctx: self.cfg.pools[p].max_ctx,
                instances: pool.n,
                slots: self.slots[p],
                active: pool.active,
                queued: pool.queued,
            })
            .collect()
    }

    fn total(&self, r: usize) -> u64 {
        self.state[r].l_in as u64 + self.reqs[r].l_out as u64
    }

    /// Admits from the queue while a slot and KV are free.
    fn admit(&mut self, p: usize, i: usize) {
        let profile = Arc::clone(&self.cfg.pools[p].profile);
        let blk = profile.blk_size().max(1) as u64;
        let n_slots = self.slots[p];
        loop {
            let inst = &mut self.pools[p].insts[i];
            let Some(&head) = inst.queue.front() else {
                break;
            };
            if inst.active.len() as u64 >= n_slots {
                break;
            }
            let total = self.state[head].l_in as u64 + self.reqs[head].l_out as u64;
            let need = total.div_ceil(blk);
            if need > inst.kv_free {
                // Preempt the longest running request if that lets a shorter head in.
                let Some((vi, v)) = inst
                    .active
                    .iter()
                    .enumerate()
                    .max_by_key(|(k, a)| (a.total, Reverse(*k)))
                    .map(|(k, a)| (k, *a))
                else {
                    break;
                };
                if v.total <= total || inst.kv_free + v.blocks < need {
                    break;
                }
                Self::touch(inst, self.now);
                inst.active.swap_remove(vi);
                inst.kv_free += v.blocks;
                let vs = &mut self.state[v.req];
                vs.epoch += 1; // its pending release is now stale
                vs.preemptions += 1;
                inst.queue.pop_front();
                inst.queue.push_front(v.req);
                inst.queue.push_front(head);
                continue;
            }
            inst.queue.pop_front();
            Self::touch(inst, self.now);
            inst.kv_free -= need;
            let epoch = self.state[head].epoch;
            inst.active.push(Active {
                req: head,
                blocks: need,
                total,
                epoch,
            });
            let n = inst.active.len() as f64;
            let mean_len = inst.active.iter().map(|a| a.total as f64).sum::<f64>() / n;
            let l_in = self.state[head].l_in;
            let l_out = self.reqs[head].l_out as f64;
            let chunk = profile.chunk().max(1);
            let iters = (l_in as u64).div_ceil(chunk as u64);
            let it = profile.iter_s(n, mean_len);
            let prefill_s: f64 = (0..iters)
                .map(|k| {
                    let c = chunk.min(l_in - (k as u32) * chunk);
                    it.max(
                        profile
                            .prefill_roofline_s(c, k as u32 * chunk)
                            .unwrap_or(0.0),
                    )
                })
                .sum();
            let hold = prefill_s + l_out * profile.iter_s(n_slots as f64, mean_len);
            let st = &mut self.state[head];
            if st.admitted_s < 0.0 {
                st.admitted_s = self.now;
            }
            st.first_token_s = self.now + prefill_s + st.extra_ttft_s;
            let at = self.now + hold;
            self.push(
                at,
                EvKind::Release {
                    pool: p,
                    inst: i,
                    req: head,
                    epoch,
                },
            );
        }
    }

    /// Routes arrival `k`; a rejection is recorded in its state.
    fn arrive(&mut self, k: usize, router: &mut dyn Router) {
        let cfg = self.cfg;
        let total = self.total(k);
        let fits_some = cfg.pools.iter().any(|p| total <= p.max_ctx as u64);
        let route = if fits_some {
            router.route(&self.reqs[k], &self.view())
        } else {
            None
        };
        let p = match route {
            None => {
                self.state[k].outcome_rejected = 1;
                return;
            }
            Some(Route::Pool(p)) => p,
            Some(Route::Compressed {
                pool,
                l_in,
                latency_s,
            }) => {
                self.state[k].l_in = l_in;
                self.state[k].extra_ttft_s = latency_s;
                pool
            }
        };
        // A request longer than its pool is rejected, never truncated.
        if self.total(k) > cfg.pools[p].max_ctx as u64 {
            self.state[k].outcome_rejected = 1;
            return;
        }
        self.state[k].pool = p;
        if cfg.pools[p].n_gpus == 0 {
            self.state[k].outcome_rejected = 3;
            return;
        }
        let (now, measured) = (self.now, self.state[k].measured);
        let pool = &mut self.pools[p];
        pool.first_arrival_s.get_or_insert(now);
        if measured {
            pool.first_measured_s.get_or_insert(now);
        }
        let i = pool.pick(cfg.pick);
        pool.materialize(cfg.pick, i);
        if pool.insts[i].queue.len() >= cfg.queue_cap {
            self.state[k].outcome_rejected = 2;
            return;
        }
        pool.detach(cfg.pick, i);
        pool.insts[i].queue.push_back(k);
        self.admit(p, i);
        self.pools[p].attach(cfg.pick, i);
    }

    /// Frees the slot of `req` on instance `i` of pool `p` (unless stale);
    /// true when the request completed.
    fn release(&mut self, p: usize, i: usize, req: usize, epoch: u32) -> bool {
        if self.state[req].epoch != epoch || self.state[req].done {
            return false; // stale: the request was preempted after this was scheduled
        }
        let (now, pick) = (self.now, self.cfg.pick);
        let pool = &mut self.pools[p];
        pool.detach(pick, i);
        pool.last_done_s = now;
        let ins = &mut pool.insts[i];
        Fleet::touch(ins, now);
        if let Some(pos) = ins
            .active
            .iter()
            .position(|a| a.req == req && a.epoch == epoch)
        {
            let a = ins.active.swap_remove(pos);
            ins.kv_free += a.blocks;
        }
        self.state[req].done = true;
        self.admit(p, i);
        self.pools[p].attach(pick, i);
        true
    }
}

/// Runs the DES on `reqs` (sorted by arrival) with the router of `cfg`.
pub fn run_des(cfg: &DesConfig, reqs: &[FleetRequest]) -> Result<DesResult, FleetError> {
    cfg.validate()?;
    let ids: Vec<String> = cfg.pools.iter().map(|p| p.id.clone()).collect();
    run_des_with(cfg, reqs, build_router(&cfg.router, &ids, cfg.seed))
}

/// Runs the DES with a router of your own (a semantic classifier, say);
/// `cfg.router` is not used, but the rest of `cfg` is validated.
pub fn run_des_with(
    cfg: &DesConfig,
    reqs: &[FleetRequest],
    mut router: Box<dyn Router>,
) -> Result<DesResult, FleetError> {
    cfg.validate_pools()?;
    let slots: Vec<u64> = cfg
        .pools
        .iter()
        .map(|p| p.profile.n_slots(p.max_ctx).max(1))
        .collect();
    let pools = cfg
        .pools
        .iter()
        .map(|p| PoolState::new(p.n_gpus, p.profile.total_kv_blks()))
        .collect();
    let warm = (cfg.warmup_frac * reqs.len() as f64).floor() as usize;
    let state = reqs
        .iter()
        .enumerate()
        .map(|(k, r)| ReqState {
            l_in: r.l_in,
            admitted_s: -1.0,
            first_token_s: -1.0,
            measured: k >= warm,
            ..Default::default()
        })
        .collect();
    let mut f = Fleet {
        cfg,
        reqs,
        state,
        pools,
        slots,
        heap: BinaryHeap::new(),
        seq: 0,
        now: 0.0,
    };
    for (k, r) in reqs.iter().enumerate() {
        f.push(r.arrival_s, EvKind::Arrival(k));
    }
    let mut completed_all = 0u64;
    // A caller's cancel flag (aisim_core::cancel), checked between events.
    let cancel = aisim_core::cancel::current();
    while let Some(Reverse(ev)) = f.heap.pop() {
        if aisim_core::cancel::is_set(&cancel) {
            return Err(FleetError::Cancelled);
        }
        f.now = ev.at;
        match ev.kind {
            EvKind::Arrival(k) => f.arrive(k, router.as_mut()),
            EvKind::Release {
                pool,
                inst,
                req,
                epoch,
            } => {
                if f.release(pool, inst, req, epoch) {
                    completed_all += 1;
                }
            }
        }
    }
    let end = f.now.max(reqs.last().map_or(0.0, |r| r.arrival_s));
    let fleet_span = Span {
        first_arrival_s: reqs.first().map_or(0.0, |r| r.arrival_s),
        first_measured_s: reqs.get(warm).map_or(0.0, |r| r.arrival_s),
        end_s: end,
    };
    let metrics = |name: &str,
                   filter: &dyn Fn(&ReqState) -> bool,
                   busy: f64,
                   slots: u64,
                   used: u64,
                   span: Span| {
        let mut m = DesMetrics {
            pool: name.to_string(),
            ..Default::default()
        };
        let mut ttft = Vec::new();
        let mut wait = Vec::new();
        let mut ok = 0u64;
        for (k, s) in f.state.iter().enumerate() {
            if !s.measured || !filter(s) {
                continue;
            }
            m.offered += 1;
            m.preemptions += s.preemptions as u64;
            match s.outcome_rejected {
                1 => m.rejected_too_long += 1,
                2 => m.rejected_queue_full += 1,
                3 => m.rejected_no_gpus += 1,
                _ if s.done => {
                    m.completed += 1;
                    let t = (s.first_token_s - reqs[k].arrival_s) * 1e3;
                    ttft.push(t);
                    wait.push((s.admitted_s - reqs[k].arrival_s) * 1e3);
                    if t <= cfg.slo_ms {
                        ok += 1;
                    }
                }
                _ => m.incomplete += 1,
            }
        }
        m.p50_ttft_ms = percentile(&mut ttft, 50.0);
        m.p99_ttft_ms = percentile(&mut ttft, 99.0);
        m.p99_queue_wait_ms = percentile(&mut wait, 99.0);
        // Both sorted by `percentile`.
        m.ttft_cdf_ms = LatencyCdf::of_sorted(&ttft);
        m.queue_wait_cdf_ms = LatencyCdf::of_sorted(&wait);
        m.throughput_rps = m.completed as f64 / (span.end_s - span.first_measured_s).max(1e-9);
        m.slo_compliance = if m.offered == 0 {
            1.0
        } else {
            ok as f64 / m.offered as f64
        };
        m.utilization =
            busy / (slots.max(1) as f64 * (span.end_s - span.first_arrival_s).max(1e-9));
        m.span_s = (span.end_s - span.first_measured_s).max(0.0);
        m.instances_used = used;
        m
    };
    let busy = |p: &PoolState| p.insts.iter().map(|i| i.busy_slot_s).sum::<f64>();
    let slot_total = |p: usize| f.pools[p].n.saturating_mul(f.slots[p]);
    let total_slots: u64 = (0..f.pools.len()).map(slot_total).sum();
    let all_busy: f64 = f.pools.iter().map(busy).sum();
    let all_used = f.pools.iter().map(|p| p.insts.len() as u64).sum();
    let fleet = metrics(
        "fleet",
        &|_| true,
        all_busy,
        total_slots,
        all_used,
        fleet_span,
    );
    let pools_m = (0..cfg.pools.len())
        .map(|p| {
            let ps = &f.pools[p];
            let first = ps.first_arrival_s.unwrap_or(0.0);
            let span = Span {
                first_arrival_s: first,
                first_measured_s: ps.first_measured_s.unwrap_or(first),
                end_s: ps.last_done_s.max(first),
            };
            metrics(
                &cfg.pools[p].id,
                &|s: &ReqState| s.outcome_rejected != 1 && s.pool == p,
                busy(ps),
                slot_total(p),
                ps.insts.len() as u64,
                span,
            )
        })
        .collect();
    Ok(DesResult {
        fleet,
        pools: pools_m,
        duration_s: end,
        total_offered: reqs.len() as u64,
        total_completed: completed_all,
    })
}

/// The time a scope (the fleet or one pool) was in use: its rates divide by
/// it, not by the whole run.
#[derive(Debug, Clone, Copy)]
struct Span {
    first_arrival_s: f64,
    first_measured_s: f64,
    end_s: f64,
}
