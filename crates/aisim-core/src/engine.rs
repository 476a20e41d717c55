//! `Engine`: one serving instance (worker). It holds one scheduler core and KV
//! pool per attention-DP rank and a timing model; the runtime drives it pass by
//! pass: `start_pass(now)` picks the work and returns the pass duration,
//! `finish_pass` applies what becomes visible at its end.

use std::sync::Arc;

use crate::config::{Backend, EngineConfig};
use crate::error::CoreError;
use crate::kv::{KvCache, KvEvent};
use crate::outcome::{DecodeSink, EngineEvent, EngineStats, RankLoad, RejectReason};
use crate::request::{Request, RequestId};
use crate::scheduler::{DecodeBatch, Handoff, RankPlan, SchedulerCore, SglangCore, VllmCore};
use crate::time::{SimDuration, SimTime};
use crate::timing::{PassShape, PassTime, TimingModel};

/// What became visible at the end of a pass. Reuse one across passes: its
/// vectors keep their capacity, so steady passes allocate nothing.
#[derive(Debug, Default)]
pub struct PassOutcome {
    /// Events in rank order, each rank's in scheduling order.
    pub events: Vec<EngineEvent>,
    /// KV events of the pass (only while capture is on).
    pub kv_events: Vec<KvEvent>,
    /// While capture is on, per rank in rank order: where its events end in
    /// `kv_events` (rank `r`'s are `kv_events[ends[r - 1]..ends[r]]`).
    pub kv_event_ends: Vec<usize>,
}

impl PassOutcome {
    /// Empties the lists, keeping their capacity.
    pub fn clear(&mut self) {
        self.events.clear();
        self.kv_events.clear();
        self.kv_event_ends.clear();
    }

    /// Rank `rank`'s KV events (empty when capture is off).
    pub fn kv_events_of(&self, rank: usize) -> &[KvEvent] {
        let Some(&end) = self.kv_event_ends.get(rank) else {
            return &[];
        };
        let start = rank.checked_sub(1).map_or(0, |r| self.kv_event_ends[r]);
        &self.kv_events[start..end]
    }
}

/// One serving instance.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    ranks: Vec<Box<dyn SchedulerCore>>,
    plans: Vec<RankPlan>,
    timing: Arc<dyn TimingModel>,
    in_pass: bool,
    /// Whether the pools record KV events (`capture_kv_events`).
    capture_kv: bool,
    passes: u64,
    /// A rank's KV capacity in tokens, for the timing model: worked out once
    /// (the budget's division by the block size), not per pass.
    kv_capacity_tokens: u64,
    /// Scratch for `run_decode_passes`: the requests of a quiet stretch and
    /// when its passes end.
    quiet_ids: Vec<RequestId>,
    quiet_ends: Vec<SimTime>,
    /// Scratch: the model's times of a quiet stretch's passes.
    quiet_times: Vec<PassTime>,
}

impl Engine {
    /// Builds an engine; the configuration is validated first.
    pub fn new(config: EngineConfig, timing: Arc<dyn TimingModel>) -> Result<Engine, CoreError> {
        config.validate()?;
        let ranks = (0..config.dp_size)
            .map(|_| -> Box<dyn SchedulerCore> {
                match config.backend {
                    Backend::Vllm => Box::new(VllmCore::new(&config, None)),
                    Backend::Trtllm => {
                        Box::new(VllmCore::new(&config, Some(config.capacity_policy)))
                    }
                    Backend::Sglang => Box::new(SglangCore::new(&config)),
                }
            })
            .collect();
        Ok(Engine {
            plans: vec![RankPlan::default(); config.dp_size as usize],
            kv_capacity_tokens: config.kv_capacity_tokens(),
            config,
            ranks,
            timing,
            in_pass: false,
            capture_kv: false,
            passes: 0,
            quiet_ids: Vec::new(),
            quiet_ends: Vec::new(),
            quiet_times: Vec::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Attention-DP ranks.
    pub fn dp_size(&self) -> usize {
        self.ranks.len()
    }

    /// Queues a request on `rank`, or says why it can never be served.
    ///
    /// # Panics
    /// When `rank` is not below `dp_size` (a programming error, not user input).
    pub fn add_request(&mut self, req: &Request, rank: usize) -> Result<(), RejectReason> {
        self.ranks[rank].enqueue(req)
    }

    /// Queues `req` on `rank` as a disaggregated prefill worker runs it: a
    /// hidden job that computes the prompt and emits one token (the output
    /// is not the request's), whose KV blocks stay held once it completes,
    /// until `release_held` (when the transfer to the decode worker ends).
    /// The outer error: this backend does not model the handoff.
    ///
    /// # Panics
    /// When `rank` is not below `dp_size`.
    pub fn add_prefill_job(
        &mut self,
        req: &Request,
        rank: usize,
    ) -> Result<Result<(), RejectReason>, CoreError> {
        self.check_handoff()?;
        Ok(self.ranks[rank].enqueue_handoff(req, Handoff::PrefillJob))
    }

    /// Queues `req` on `rank` as a disaggregated decode worker receives it:
    /// its prompt's KV is transferred in, so at admission it takes its
    /// blocks (its own prefix hits, the rest allocated for the transfer)
    /// and only the prompt's last token is computed, with the first decode
    /// pass, as vLLM's KV connector does. It then decodes all its output.
    ///
    /// # Panics
    /// When `rank` is not below `dp_size`.
    pub fn add_transferred(
        &mut self,
        req: &Request,
        rank: usize,
    ) -> Result<Result<(), RejectReason>, CoreError> {
        self.check_handoff()?;
        Ok(self.ranks[rank].enqueue_handoff(req, Handoff::Transferred))
    }

    /// Frees the blocks a completed prefill job held; false when none were.
    pub fn release_held(&mut self, id: RequestId) -> bool {
        self.ranks.iter_mut().any(|r| r.release_held(id))
    }

    fn check_handoff(&self) -> Result<(), CoreError> {
        match self.config.backend {
            Backend::Vllm | Backend::Trtllm => Ok(()),
            Backend::Sglang => Err(CoreError::InvalidConfig {
                field: "backend",
                value: "sglang".into(),
                reason: "a disaggregated handoff (a held prefill job, a transferred request) is modelled on the vLLM and TensorRT-LLM schedulers".into(),
            }),
        }
    }

    /// Whether any rank has waiting or running requests.
    pub fn has_work(&self) -> bool {
        self.ranks.iter().any(|r| r.has_work())
    }

    /// Whether a pass is under way.
    pub fn in_pass(&self) -> bool {
        self.in_pass
    }

    /// When a pass of `d` started at `at` ends: an error, naming the timing
    /// model, when that is past the clock's limit (the run would never end).
    pub fn pass_end(&self, at: SimTime, d: SimDuration) -> Result<SimTime, CoreError> {
        pass_end(self.timing.as_ref(), at, d)
    }

    /// Starts a pass at `now`: every rank with work schedules, and the pass lasts
    /// as long as its slowest rank (empty ranks wait at the barrier). `None` when
    /// no rank has anything to do.
    pub fn start_pass(&mut self, now: SimTime) -> Result<Option<SimDuration>, CoreError> {
        debug_assert!(!self.in_pass, "start_pass during a pass");
        let kv_capacity_tokens = self.kv_capacity_tokens;
        let mut longest: Option<SimDuration> = None;
        for (rank, plan) in self.ranks.iter_mut().zip(self.plans.iter_mut()) {
            plan.clear();
            if !rank.has_work() {
                continue;
            }
            rank.schedule(plan);
            if plan.is_empty() {
                continue;
            }
            let shape = PassShape {
                prefill: &plan.prefill,
                decode_requests: plan.decode_requests,
                decode_context_tokens: plan.decode_context_tokens,
                kv_capacity_tokens,
            };
            let d = pass_duration(&self.config, self.timing.as_ref(), &shape)?;
            longest = Some(longest.map_or(d, |l| l.max(d)));
        }
        if longest.is_some() {
            self.in_pass = true;
            self.passes += 1;
            tracing::trace!(at_ns = now.0, passes = self.passes, "pass started");
        }
        Ok(longest)
    }

    /// Runs pure decode passes back to back from `start`, as long as each one
    /// ends before `horizon` (`None`: no limit), and returns when the last one
    /// ended (`start` when none ran). The results are exactly those of
    /// `start_pass` / `finish_pass` at the same times, at a fraction of the
    /// cost: a worker serving one or two requests runs a pass per token, and
    /// most of a replay's passes are of this kind.
    ///
    /// It stops before any pass that would do something else (a prefill, an
    /// admission, a preemption or retraction), and runs nothing on engines
    /// with several DP ranks; the caller then goes on with `start_pass`.
    pub fn run_decode_passes(
        &mut self,
        start: SimTime,
        horizon: Option<SimTime>,
        sink: &mut dyn DecodeSink,
    ) -> Result<SimTime, CoreError> {
        debug_assert!(!self.in_pass, "run_decode_passes during a pass");
        let [rank] = self.ranks.as_mut_slice() else {
            return Ok(start);
        };
        let kv_capacity_tokens = self.kv_capacity_tokens;
        let duration = |batch: &DecodeBatch| {
            let shape = PassShape {
                prefill: &[],
                decode_requests: batch.requests,
                decode_context_tokens: batch.context_tokens,
                kv_capacity_tokens,
            };
            pass_duration(&self.config, self.timing.as_ref(), &shape)
        };
        let before_horizon = |end: SimTime| horizon.is_none_or(|h| end < h);
        let mut at = start;
        let mut next = rank.steady_decode();
        while let Some(mut batch) = next {
            // Quiet passes first: only their ends are worked out one by one;
            // the requests and the sink take the stretch in one go.
            if batch.quiet > 0 {
                let want = batch.quiet.min(QUIET_STRETCH);
                self.quiet_ends.clear();
                // The model's times for the whole stretch in one call (they
                // depend on nothing the passes change but the context);
                // those past the horizon go unused.
                self.quiet_times.clear();
                self.timing.decode_pass_times(
                    batch.requests,
                    batch.context_tokens,
                    kv_capacity_tokens,
                    want,
                    &mut self.quiet_times,
                );
                let mut end = at;
                for &t in self.quiet_times.iter().take(want as usize) {
                    let Some(d) = scaled_duration(&self.config, t) else {
                        let shape = PassShape {
                            prefill: &[],
                            decode_requests: batch.requests,
                            decode_context_tokens: batch.context_tokens,
                            kv_capacity_tokens,
                        };
                        return Err(invalid_duration(self.timing.as_ref(), t, &shape));
                    };
                    let e = pass_end(self.timing.as_ref(), end, d)?;
                    if !before_horizon(e) {
                        break;
                    }
                    self.quiet_ends.push(e);
                    end = e;
                    batch.context_tokens += batch.requests as u64;
                }
                // A model answering fewer times than asked ends the stretch
                // there, as the horizon would.
                let n = self.quiet_ends.len() as u32;
                if n > 0 {
                    rank.advance_quiet(n, &mut self.quiet_ids);
                    let kv = rank.pool().in_use_blocks();
                    sink.quiet(&self.quiet_ids, at, &self.quiet_ends, kv);
                    self.passes += n as u64;
                    at = end;
                }
                if n < want {
                    break; // the horizon came first
                }
                batch.quiet -= n;
                if batch.quiet > 0 {
                    next = Some(batch);
                    continue;
                }
            }
            let end = pass_end(self.timing.as_ref(), at, duration(&batch)?)?;
            if !before_horizon(end) {
                break;
            }
            self.passes += 1;
            next = rank.run_decode_pass(at, end, sink);
            at = end;
        }
        if at != start {
            tracing::trace!(
                from_ns = start.0,
                to_ns = at.0,
                passes = self.passes,
                "decode run"
            );
        }
        Ok(at)
    }

    /// Applies the pass's results into `out` (appending).
    pub fn finish_pass(&mut self, out: &mut PassOutcome) {
        debug_assert!(self.in_pass, "finish_pass without a pass");
        for rank in self.ranks.iter_mut() {
            rank.finish(&mut out.events);
        }
        self.drain_kv_events(out);
        self.in_pass = false;
    }

    /// Moves the KV events recorded since the last drain into `out` with
    /// their rank boundaries (nothing while capture is off). `finish_pass`
    /// does it; call it after `run_decode_passes`, whose passes may evict.
    pub fn drain_kv_events(&mut self, out: &mut PassOutcome) {
        if !self.capture_kv {
            return;
        }
        for rank in self.ranks.iter_mut() {
            rank.pool_mut().drain_events(&mut out.kv_events);
            out.kv_event_ends.push(out.kv_events.len());
        }
    }

    /// Removes a request wherever it is (used for timeouts); true when found.
    pub fn abort(&mut self, id: RequestId) -> bool {
        self.ranks.iter_mut().any(|r| r.abort(id))
    }

    /// Load of one rank.
    pub fn rank_load(&self, rank: usize) -> RankLoad {
        self.ranks[rank].load()
    }

    /// Requests running and waiting over the ranks (cheaper than `load`).
    pub fn requests(&self) -> u32 {
        self.ranks.iter().map(|r| r.requests()).sum()
    }

    /// Load summed over the ranks.
    pub fn load(&self) -> RankLoad {
        let mut l = RankLoad::default();
        for r in &self.ranks {
            l += r.load();
        }
        l
    }

    /// The KV pool of one rank.
    pub fn pool(&self, rank: usize) -> &dyn KvCache {
        self.ranks[rank].pool()
    }

    /// Counters summed over the ranks.
    pub fn stats(&self) -> EngineStats {
        let mut s = EngineStats::default();
        for r in &self.ranks {
            s += r.stats();
        }
        s
    }

    /// Passes started so far.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Records KV events from now on (off by default).
    pub fn capture_kv_events(&mut self, on: bool) {
        self.capture_kv = on;
        for r in &mut self.ranks {
            r.pool_mut().capture_events(on);
        }
    }

    /// Prompt tokens of `req` that `rank` would serve from its cache now.
    pub fn cached_prefix_tokens(&self, req: &Request, rank: usize) -> u32 {
        self.ranks[rank].cached_prefix_tokens(req)
    }
}

/// The most quiet passes taken in one go: bounds the scratch buffers (a
/// request may decode for millions of tokens), long enough that the
/// per-stretch work is spread thin.
const QUIET_STRETCH: u32 = 1024;

/// One rank's pass duration from the timing model, with the speedup ratios
/// applied; NaN, infinite or negative model output is an error.
#[inline]
fn pass_duration(
    config: &EngineConfig,
    timing: &dyn TimingModel,
    shape: &PassShape<'_>,
) -> Result<SimDuration, CoreError> {
    let t = timing.pass_time(shape);
    scaled_duration(config, t).ok_or_else(|| invalid_duration(timing, t, shape))
}

/// A model's pass time with the speedup ratios applied, as a duration;
/// `None` for NaN, infinite or negative model output.
#[inline]
fn scaled_duration(config: &EngineConfig, t: PassTime) -> Option<SimDuration> {
    // Dividing by 1 changes nothing, so the usual case skips two dependent
    // divisions: this runs once per pass.
    let scale = |x: f64, ratio: f64| if ratio == 1.0 { x } else { x / ratio };
    let secs = scale(t.prefill_s, config.speedup_ratio)
        + scale(
            t.decode_s,
            config.speedup_ratio * config.decode_speedup_ratio,
        );
    let valid = t.prefill_s.is_finite()
        && t.decode_s.is_finite()
        && t.prefill_s >= 0.0
        && t.decode_s >= 0.0;
    SimDuration::from_secs_f64(secs).filter(|_| valid)
}

/// When a pass of `d` from `at` ends, or the error that the run's clock
/// would pass its limit.
#[inline]
pub(crate) fn pass_end(
    timing: &dyn TimingModel,
    at: SimTime,
    d: SimDuration,
) -> Result<SimTime, CoreError> {
    at.checked_after(d).ok_or_else(|| CoreError::ClockLimit {
        model: timing.name().to_string(),
        pass_s: d.as_secs_f64(),
        at_s: at.as_secs_f64(),
    })
}

#[cold]
#[inline(never)]
fn invalid_duration(timing: &dyn TimingModel, t: PassTime, shape: &PassShape<'_>) -> CoreError {
    CoreError::InvalidDuration {
        model: timing.name().to_string(),
        value: t.prefill_s + t.decode_s,
        prefill_tokens: shape.prefill_tokens(),
        decode_requests: shape.decode_requests,
    }
}
