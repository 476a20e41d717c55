//! `Scaler`: a scaling policy connected to one pool. At each tick it gives
//! the policy a settled snapshot of the pool and carries out the decision:
//! a new worker starts (it counts from the decision and accepts requests
//! after the startup delay), a removed one drains (no new request; it stops
//! once it holds none). It keeps the pool's worker count over time, the
//! timeline of the report, and its integral, the worker-seconds.
//!
//! Only a run whose scaling policy ticks has one: without it the runtime does
//! no per-pass or per-request work for scaling.

use aisim_core::{SimDuration, SimTime};

use super::driver::Front;
use super::pool::Pool;
use super::workers::SlotState as State;
use crate::collector::TraceCollector;
use crate::event::EventKind;
use crate::policy::{ScalingPolicy, ScalingSnapshot};
use crate::report::PoolScaling;

/// The recent latencies every pool's policy sees at a tick, read from the
/// collector once per tick (the buffers are kept for their capacity).
#[derive(Debug, Default)]
pub(crate) struct Recent {
    ttft: Vec<u64>,
    tpot: Vec<u64>,
    ttft_p90_ms: Option<f64>,
    tpot_p90_ms: Option<f64>,
}

impl Recent {
    /// Takes the TTFTs and TPOTs since the last read, keeps their p90s.
    pub fn read(&mut self, collector: &mut TraceCollector) {
        collector.take_recent_ttft(&mut self.ttft);
        collector.take_recent_tpot(&mut self.tpot);
        self.ttft_p90_ms = p90(&mut self.ttft).map(|ns| ns as f64 * 1e-6);
        self.tpot_p90_ms = p90(&mut self.tpot).map(|ns| ns as f64 * 1e-6);
    }
}

/// A pool's scaling state.
pub(crate) struct Scaler {
    policy: Box<dyn ScalingPolicy>,
    startup: SimDuration,
    /// Fewest workers the runtime keeps (accepting or starting), at least 1.
    min: u32,
    /// Worker slots (each one's state is the pool's: `Workers::state`).
    slots: u32,
    /// When each starting worker becomes ready (a stale ready event of a
    /// worker cancelled and started again is ignored).
    ready_at: Vec<SimTime>,
    /// Workers counting (starting, accepting or draining), since `since`.
    counting: u32,
    since: SimTime,
    worker_ns: u128,
    /// (time ns, workers counting) at the start and at each change.
    timeline: Vec<(u64, u32)>,
    ticks: u64,
    /// When the policy wants its next tick.
    next_at: Option<SimTime>,
    snapshot: ScalingSnapshot,
}

impl Scaler {
    /// `policy` over pool `pool` of `slots` workers of which the first
    /// `initial` accept from the start; the runtime keeps at least `min`.
    pub fn new(
        pool: &'static str,
        policy: Box<dyn ScalingPolicy>,
        slots: u32,
        initial: u32,
        min: u32,
        startup: SimDuration,
    ) -> Scaler {
        let next_at = policy.first_tick().map(|d| SimTime::ZERO.after(d));
        Scaler {
            policy,
            startup,
            min: min.max(1),
            slots,
            ready_at: vec![SimTime::ZERO; slots as usize],
            counting: initial,
            since: SimTime::ZERO,
            worker_ns: 0,
            timeline: vec![(0, initial)],
            ticks: 0,
            next_at,
            snapshot: ScalingSnapshot {
                pool,
                ..ScalingSnapshot::default()
            },
        }
    }

    /// When the first tick is due, if the policy ticks.
    pub fn first_tick(&self) -> Option<SimDuration> {
        self.policy.first_tick()
    }

    /// When the next tick is due, if the policy wants one.
    pub fn next_tick(&self) -> Option<SimTime> {
        self.next_at
    }

    /// Worker slots of the pool (the most it may reach).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The count of workers changes by `delta` at `now`.
    fn count(&mut self, now: SimTime, delta: i32) {
        self.worker_ns += u128::from(self.counting) * u128::from(now.since(self.since).0);
        self.since = now;
        if delta == 0 {
            return;
        }
        self.counting = self.counting.checked_add_signed(delta).expect("count ≥ 0");
        match self.timeline.last_mut() {
            // Changes at one instant make one entry.
            Some(last) if last.0 == now.0 => last.1 = self.counting,
            _ => self.timeline.push((now.0, self.counting)),
        }
        let n = self.timeline.len();
        if n >= 2 && self.timeline[n - 2].1 == self.counting {
            self.timeline.pop(); // undone at the same instant
        }
    }

    /// Whether any worker of the pool holds a request (or a transfer).
    pub fn holds_any(&self, pool: &Pool) -> bool {
        (0..self.slots).any(|w| !pool.idle(w))
    }

    /// A tick at `front.now` if one is due: the policy's decision carried
    /// out on `recent` latencies.
    pub fn tick_if_due(&mut self, front: &mut Front<'_>, pool: &mut Pool, recent: &Recent) {
        if self.next_at.is_none_or(|t| t > front.now) {
            return;
        }
        let now = front.now;
        self.ticks += 1;
        let s = &mut self.snapshot;
        s.now = now;
        s.running.clear();
        s.waiting.clear();
        s.workers = 0;
        s.starting = 0;
        s.draining = 0;
        for w in 0..self.slots {
            match pool.workers.state(w) {
                State::Active => {
                    let (r, q) = pool.workers.running_waiting(w);
                    s.workers += 1;
                    s.running.push(r);
                    s.waiting.push(q);
                }
                State::Starting => s.starting += 1,
                State::Draining => s.draining += 1,
                State::Off => {}
            }
        }
        s.recent_ttft_p90_ms = recent.ttft_p90_ms;
        s.recent_tpot_p90_ms = recent.tpot_p90_ms;
        let decision = self.policy.tick(&self.snapshot);
        self.apply(front, pool, decision.target_workers);
        self.next_at = decision.next_tick.map(|d| now.after(d));
    }

    /// Starts or drains workers until `target` accept or start.
    fn apply(&mut self, front: &mut Front<'_>, pool: &mut Pool, target: u32) {
        let now = front.now;
        let target = target.clamp(self.min.min(self.slots), self.slots);
        let slots = 0..self.slots;
        let first = |pool: &Pool, state| slots.clone().find(|&w| pool.workers.state(w) == state);
        let mut cur = slots
            .clone()
            .filter(|&w| matches!(pool.workers.state(w), State::Active | State::Starting))
            .count() as u32;
        // Up: a draining worker takes requests again at once; then the lowest
        // stopped slot starts.
        while cur < target {
            cur += 1;
            if let Some(w) = first(pool, State::Draining) {
                pool.workers.set_state(w, State::Active);
                continue;
            }
            let w = first(pool, State::Off).expect("fewer live workers than slots");
            self.count(now, 1);
            if self.startup == SimDuration::ZERO {
                pool.workers.set_state(w, State::Active);
                continue;
            }
            pool.workers.set_state(w, State::Starting);
            let at = now.after(self.startup);
            self.ready_at[w as usize] = at;
            let worker = pool.event_index(w);
            front.schedule(at, EventKind::WorkerReady { worker });
        }
        // Down: the newest starting worker is cancelled; then the accepting
        // worker holding the fewest requests (the highest on ties) drains.
        while cur > target {
            cur -= 1;
            let starting = slots
                .clone()
                .rev()
                .find(|&w| pool.workers.state(w) == State::Starting);
            if let Some(w) = starting {
                pool.workers.set_state(w, State::Off);
                self.count(now, -1);
                continue;
            }
            let w = slots
                .clone()
                .filter(|&w| pool.workers.state(w) == State::Active)
                .min_by_key(|&w| (pool.held(w), std::cmp::Reverse(w)))
                .expect("an accepting worker");
            pool.workers.set_state(w, State::Draining);
            self.stop_if_empty(now, pool, w);
        }
    }

    /// Worker `w` became ready at `now` (if it is still starting).
    pub fn ready(&mut self, now: SimTime, pool: &mut Pool, w: u32) {
        if pool.workers.state(w) == State::Starting && self.ready_at[w as usize] == now {
            pool.workers.set_state(w, State::Active);
        }
    }

    /// A draining worker `w` that holds nothing, runs no pass and has no
    /// transfer under way stops.
    #[inline]
    pub fn stop_if_empty(&mut self, now: SimTime, pool: &mut Pool, w: u32) {
        if pool.workers.state(w) == State::Draining && pool.idle(w) {
            pool.workers.set_state(w, State::Off);
            self.count(now, -1);
        }
    }

    /// The pool's scaling figures, counted up to `end`.
    pub fn finish(&mut self, end: SimTime) -> PoolScaling {
        self.count(end.max(self.since), 0);
        PoolScaling {
            timeline: std::mem::take(&mut self.timeline),
            worker_ns: self.worker_ns,
            ticks: self.ticks,
        }
    }
}

/// The 90th percentile (nearest rank) of `v`, which it reorders.
fn p90(v: &mut [u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let rank = aisim_core::summary::rank_index_permille(900, v.len() as u64) as usize;
    Some(*v.select_nth_unstable(rank).1)
}

#[cfg(test)]
mod tests {
    use super::p90;

    #[test]
    fn p90_is_the_nearest_rank() {
        assert_eq!(p90(&mut []), None);
        assert_eq!(p90(&mut [5]), Some(5));
        let mut v: Vec<u64> = (1..=10).rev().collect();
        assert_eq!(p90(&mut v), Some(9));
        let mut v: Vec<u64> = (1..=11).collect();
        assert_eq!(p90(&mut v), Some(10));
    }
}
