//! `Workers`: the fleet of one runtime, materialised lazily. A worker gets an
//! engine (and so a KV pool) when its first request is placed on it; until
//! then it costs one 4-byte slot, and placement sees it as idle and empty.
//! Per request, placement looks only at the workers in use plus the lowest
//! unused one, never at every idle worker.

use aisim_core::{Engine, RankLoad, Request, SimTime};

use crate::error::ReplayError;
use crate::policy::WorkerView;
use crate::report::WorkerTotals;
use crate::timeseries::WorkerSeries;

const UNUSED: u32 = u32::MAX;

/// Builds a worker's engine.
pub(crate) type EngineFactory = Box<dyn Fn() -> Result<Engine, ReplayError>>;

/// One worker in use.
pub(crate) struct Worker {
    pub(super) id: u32,
    pub(super) engine: Engine,
    pub(super) busy: bool,
    pub(super) dirty: bool,
    /// In a part of a split run: the call-log segment that woke it (marked
    /// it dirty), which orders its passes' segment (see `call_log.rs`).
    pub(super) woke: u128,
    pub(super) pass_start: SimTime,
    pub(super) kv: KvSampler,
}

impl Worker {
    fn in_use(&self) -> u64 {
        (0..self.engine.dp_size())
            .map(|r| self.engine.pool(r).in_use_blocks() as u64)
            .sum()
    }

    /// Samples KV occupancy at `now` (see `KvSampler::sample`).
    pub(super) fn sample_kv(&mut self, now: SimTime) {
        self.sample_kv_emitted(now, 0);
    }

    /// The same, at the end of a pass that emitted `tokens`.
    pub(super) fn sample_kv_emitted(&mut self, now: SimTime, tokens: u64) {
        let level = self.in_use();
        self.kv.sample_emitted(now, level, tokens);
    }
}

fn kv_capacity(engine: &Engine) -> u64 {
    (0..engine.dp_size())
        .map(|r| engine.pool(r).capacity() as u64)
        .sum()
}

/// A worker's KV occupancy over time: peak and time integral, and the
/// same in time bins with the tokens its passes emitted (`series`: only for
/// a pool whose workers the report draws over time).
#[derive(Debug, Default)]
pub(crate) struct KvSampler {
    capacity: u64,
    level: u64,
    peak: u64,
    block_ns: f64,
    last: SimTime,
    series: Option<WorkerSeries>,
}

impl KvSampler {
    /// Integrates the level held since the last sample up to `now`, then takes
    /// `level`. Levels only change when a pass starts or ends, so sampling
    /// right after each suffices.
    #[inline]
    pub(super) fn sample(&mut self, now: SimTime, level: u64) {
        self.sample_emitted(now, level, 0);
    }

    /// The same, at the end of a pass that emitted `tokens`.
    #[inline]
    pub(super) fn sample_emitted(&mut self, now: SimTime, level: u64, tokens: u64) {
        if let Some(series) = &mut self.series {
            series.sample(self.last.0, now.0, self.level, level, tokens);
        }
        self.integrate(now, level);
    }

    /// The samples of `ends.len()` passes in a row from `start`, each
    /// holding `level` and emitting `tokens`: those of each pass's start and
    /// end, with the series taken at once when the run stays within its
    /// open bin (the totals still pass by pass, for the same rounding).
    pub(super) fn sample_passes(
        &mut self,
        start: SimTime,
        ends: &[SimTime],
        level: u64,
        tokens: u64,
    ) {
        let Some(&last_end) = ends.last() else {
            return;
        };
        let series = self.series.as_mut().filter(|s| s.is_open_at(last_end.0));
        if let Some(series) = series {
            series.sample(self.last.0, start.0, self.level, level, 0);
            series.sample(
                start.0,
                last_end.0,
                level,
                level,
                tokens * ends.len() as u64,
            );
            let mut from = start;
            for &end in ends {
                self.integrate(from, level);
                self.integrate(end, level);
                from = end;
            }
        } else {
            let mut from = start;
            for &end in ends {
                self.sample(from, level);
                self.sample_emitted(end, level, tokens);
                from = end;
            }
        }
    }

    /// The totals' part of a sample: integral, level, peak.
    #[inline]
    fn integrate(&mut self, now: SimTime, level: u64) {
        // Through i64 (exact below 2^63): one instruction per conversion
        // instead of a branchy sequence, twice per pass.
        let held_ns = now.since(self.last).0 as i64 as f64;
        self.block_ns += self.level as i64 as f64 * held_ns;
        self.last = now;
        self.level = level;
        self.peak = self.peak.max(level);
    }
}

/// A worker slot's state under a scaling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Not running (never started, or stopped): counts for nothing.
    Off,
    /// Started, accepting once its startup delay has passed.
    Starting,
    /// Taking requests.
    Active,
    /// Taking no new request; stops once it holds none.
    Draining,
}

/// Every worker of the topology; only those in use hold an engine.
pub(crate) struct Workers {
    /// Per worker index: its place in `used`, or `UNUSED`.
    slot_of: Vec<u32>,
    used: Vec<Worker>,
    /// Every worker below this one is in use.
    first_unused: u32,
    dp_size: u32,
    kv_capacity: u64,
    /// An engine built ahead (the one that validated the configuration).
    spare: Option<Engine>,
    make: EngineFactory,
    /// Engines record KV events (for a placement policy that asks).
    kv_events: bool,
    /// With a scaling policy: each worker's state (only `Active` ones take
    /// new requests). `None`: every worker accepts.
    states: Option<Vec<SlotState>>,
    /// Whether workers keep their KV and tokens in time bins.
    keep_series: bool,
}

impl Workers {
    /// `count` workers whose engines `make` builds; `first` is one built
    /// already (it gives the per-worker KV capacity and serves the first
    /// worker used).
    pub fn new(count: u32, first: Engine, make: EngineFactory) -> Workers {
        Workers {
            slot_of: vec![UNUSED; count as usize],
            used: Vec::new(),
            first_unused: 0,
            dp_size: first.dp_size() as u32,
            kv_capacity: kv_capacity(&first),
            spare: Some(first),
            make,
            kv_events: false,
            states: None,
            keep_series: true,
        }
    }

    /// Workers keep no time series (a pool the report does not draw over
    /// time: a disaggregated run's prefill pool).
    pub fn without_series(&mut self) {
        self.keep_series = false;
    }

    /// Only workers below `accepting` accept from now on; the others are
    /// off until `set_state` starts them (a scaling policy's pool).
    pub fn limit_accepting(&mut self, accepting: u32) {
        self.states = Some(
            (0..self.count())
                .map(|w| {
                    if w < accepting {
                        SlotState::Active
                    } else {
                        SlotState::Off
                    }
                })
                .collect(),
        );
    }

    /// Worker `w`'s state (`Active` without a scaling policy).
    #[inline]
    pub fn state(&self, w: u32) -> SlotState {
        self.states
            .as_ref()
            .map_or(SlotState::Active, |s| s[w as usize])
    }

    /// Sets worker `w`'s state (with a scaling policy).
    pub fn set_state(&mut self, w: u32, state: SlotState) {
        if let Some(s) = &mut self.states {
            s[w as usize] = state;
        }
    }

    #[inline]
    fn accepts(&self, w: u32) -> bool {
        self.state(w) == SlotState::Active
    }

    /// Requests worker `w` holds (running and waiting, all ranks) and
    /// whether it is running a pass; `(0, false)` when unused.
    pub fn holding(&self, w: u32) -> (u32, bool) {
        self.find(w)
            .map_or((0, false), |x| (x.engine.requests(), x.busy))
    }

    /// Running and waiting requests of worker `w`, all ranks.
    pub fn running_waiting(&self, w: u32) -> (u32, u32) {
        let Some(x) = self.find(w) else {
            return (0, 0);
        };
        let l = x.engine.load();
        (l.running, l.waiting)
    }

    /// Engines record KV events from now on (`on`), or not.
    pub fn capture_kv_events(&mut self, on: bool) {
        self.kv_events = on;
        for w in &mut self.used {
            w.engine.capture_kv_events(on);
        }
    }

    /// Worker `w`, if it is in use.
    pub fn get_used_mut(&mut self, w: u32) -> Option<&mut Worker> {
        let slot = *self.slot_of.get(w as usize)?;
        self.used.get_mut(slot as usize)
    }

    /// Workers in the topology.
    pub fn count(&self) -> u32 {
        self.slot_of.len() as u32
    }

    /// KV blocks of one worker, all ranks.
    pub fn kv_capacity(&self) -> u64 {
        self.kv_capacity
    }

    fn find(&self, w: u32) -> Option<&Worker> {
        let slot = *self.slot_of.get(w as usize)?;
        self.used.get(slot as usize)
    }

    /// Worker `w`, which is in use.
    #[inline]
    pub fn get_mut(&mut self, w: u32) -> &mut Worker {
        let slot = self.slot_of[w as usize];
        &mut self.used[slot as usize]
    }

    /// Worker `w`, given its engine if it had none.
    pub fn materialise(&mut self, w: u32) -> Result<&mut Worker, ReplayError> {
        let count = self.count();
        let slot = self.slot_of.get(w as usize).copied().ok_or_else(|| {
            ReplayError::spec("router", format!("placement chose worker {w} of {count}"))
        })?;
        if slot != UNUSED {
            return Ok(&mut self.used[slot as usize]);
        }
        let mut engine = match self.spare.take() {
            Some(e) => e,
            None => (self.make)()?,
        };
        if self.kv_events {
            engine.capture_kv_events(true);
        }
        self.slot_of[w as usize] = self.used.len() as u32;
        self.used.push(Worker {
            id: w,
            kv: KvSampler {
                capacity: kv_capacity(&engine),
                series: self.keep_series.then(WorkerSeries::default),
                ..KvSampler::default()
            },
            engine,
            busy: false,
            dirty: false,
            woke: 0,
            pass_start: SimTime::ZERO,
        });
        // Amortized O(1): the lowest unused worker only moves up.
        while self
            .slot_of
            .get(self.first_unused as usize)
            .is_some_and(|&s| s != UNUSED)
        {
            self.first_unused += 1;
        }
        Ok(self.used.last_mut().expect("just pushed"))
    }

    /// Whether every worker holds at least `threshold` requests (running
    /// and waiting, all ranks); an unused worker holds none.
    pub fn all_hold(&self, threshold: u32) -> bool {
        if self.states.is_some() {
            // Only accepting workers count (an unused one holds nothing).
            return (0..self.count())
                .filter(|&w| self.accepts(w))
                .all(|w| self.holding(w).0 >= threshold);
        }
        self.first_unused >= self.count()
            && self.used.iter().all(|w| w.engine.requests() >= threshold)
    }

    /// What placement sees.
    pub fn view(&self) -> View<'_> {
        View(self)
    }

    /// End-of-run figures of every worker in use, by index, KV sampled at `end`.
    pub fn totals(&mut self, end: SimTime) -> Vec<WorkerTotals> {
        let mut totals: Vec<WorkerTotals> = self
            .used
            .iter_mut()
            .map(|w| {
                w.sample_kv(end);
                WorkerTotals {
                    worker: w.id,
                    stats: w.engine.stats(),
                    passes: w.engine.passes(),
                    kv_capacity: w.kv.capacity,
                    kv_peak: w.kv.peak,
                    kv_block_ns: w.kv.block_ns,
                    series: w.kv.series.take().unwrap_or_default(),
                }
            })
            .collect();
        totals.sort_unstable_by_key(|t| t.worker);
        totals
    }
}

/// Placement's view of the workers: an unused worker has no load and no cache.
pub(crate) struct View<'a>(&'a Workers);

impl WorkerView for View<'_> {
    fn workers(&self) -> u32 {
        self.0.count()
    }
    fn dp_size(&self) -> u32 {
        self.0.dp_size
    }
    fn accepting(&self, worker: u32) -> bool {
        self.0.accepts(worker)
    }
    fn accepting_count(&self) -> u32 {
        match &self.0.states {
            None => self.0.count(),
            Some(s) => s.iter().filter(|&&s| s == SlotState::Active).count() as u32,
        }
    }
    fn nth_accepting(&self, n: u32) -> Option<u32> {
        match &self.0.states {
            None => (n < self.0.count()).then_some(n),
            Some(_) => (0..self.0.count())
                .filter(|&w| self.0.accepts(w))
                .nth(n as usize),
        }
    }
    fn load(&self, worker: u32, rank: u32) -> RankLoad {
        self.0
            .find(worker)
            .map_or_else(RankLoad::default, |w| w.engine.rank_load(rank as usize))
    }
    fn cached_prefix_tokens(&self, worker: u32, rank: u32, req: &Request) -> u32 {
        self.0
            .find(worker)
            .map_or(0, |w| w.engine.cached_prefix_tokens(req, rank as usize))
    }
    fn visit_used(&self, visit: &mut dyn FnMut(u32)) {
        for w in &self.0.used {
            if self.0.accepts(w.id) {
                visit(w.id);
            }
        }
    }
    fn first_unused(&self) -> Option<u32> {
        match &self.0.states {
            None => (self.0.first_unused < self.0.count()).then_some(self.0.first_unused),
            Some(_) => (self.0.first_unused..self.0.count())
                .find(|&w| self.0.accepts(w) && self.0.find(w).is_none()),
        }
    }
}
