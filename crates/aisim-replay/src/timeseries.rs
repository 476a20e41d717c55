//! The run over time, in fixed bins of simulated time: what the report's
//! charts plot and its `time_series` section holds.
//!
//! Bin width rule: bins start at simulated time 0 and are all as wide as the
//! smallest width of the sequence 1, 2, 10, 20, 100, 200, … ms (1 or 2 × 10^k
//! ms) at which the run ends before `MAX_BINS` bins, so a run has between
//! `MAX_BINS / 5` and `MAX_BINS` bins (one for a run shorter than 1 ms), the
//! last one cut at the run's end. Each width of the sequence divides the next,
//! so bins filled at a fine width fold exactly into coarser ones: every
//! series starts at 1 ms and coarsens as time passes, which bounds its
//! memory at `MAX_BINS` bins whatever the run's length, and gives the width
//! the whole run would have been binned at from the start.
//!
//! Two kinds of series, both exact integers until the report divides:
//! - per request (`RequestSeries`, fed by the tally when a request ends):
//!   arrivals and outcomes per bin, and the time integral of the requests
//!   waiting for their first scheduling and of those running, from ±1 edges
//!   that may come in any time order;
//! - per worker (`WorkerSeries`, fed by the runtime's KV sampler at each pass
//!   start and end): the time integral and peak of the KV blocks in use, and
//!   the output tokens emitted, with a fast path of one comparison per
//!   sample (no per-token work).

use serde::{Deserialize, Serialize};

use crate::record::Outcome;

/// Most bins a series holds.
pub const MAX_BINS: u64 = 500;

const NS_PER_MS: u64 = 1_000_000;

/// A width of the sequence 1, 2, 10, 20, 100, … ms, by its place in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct BinWidth(u32);

impl BinWidth {
    /// The width in nanoseconds (saturating far past any simulated clock).
    pub fn ns(self) -> u64 {
        let decade = 10u64.saturating_pow(self.0 / 2);
        let mantissa = if self.0.is_multiple_of(2) { 1 } else { 2 };
        NS_PER_MS.saturating_mul(decade).saturating_mul(mantissa)
    }

    /// The next width, and how many bins of this one make one of it.
    fn next(self) -> (BinWidth, usize) {
        (
            BinWidth(self.0 + 1),
            if self.0.is_multiple_of(2) { 2 } else { 5 },
        )
    }

    /// The width of a run ending at `end_ns`: the smallest at which
    /// `end_ns < MAX_BINS × width`.
    pub fn for_end(end_ns: u64) -> BinWidth {
        let mut w = BinWidth::default();
        while !w.holds(end_ns) {
            w = w.next().0;
        }
        w
    }

    /// Whether a time falls in one of the first `MAX_BINS` bins.
    fn holds(self, t_ns: u64) -> bool {
        t_ns / self.ns() < MAX_BINS
    }

    /// Bins of this width from 0 to `end_ns` (the last one possibly cut).
    pub fn bins_to(self, end_ns: u64) -> usize {
        end_ns.div_ceil(self.ns()).max(1) as usize
    }
}

/// What one bin holds: folds with the bins after it into a coarser bin.
pub trait BinValue: Default + Clone {
    /// Takes `later` in, a bin that ends `ns_after_later` before the end of
    /// the bin both now form (negative: after it).
    fn absorb(&mut self, later: &Self, ns_after_later: i64);
}

/// Values in bins of one width from time 0, coarsened as later times come.
#[derive(Debug, Clone, PartialEq)]
pub struct Binned<T> {
    width: BinWidth,
    /// The width in ns, and the end of the last bin it allows (cached: a
    /// lookup is then a comparison and a division).
    width_ns: u64,
    limit_ns: u64,
    bins: Vec<T>,
}

impl<T> Default for Binned<T> {
    fn default() -> Binned<T> {
        Binned::of_width(BinWidth::default(), Vec::new())
    }
}

impl<T> Binned<T> {
    fn of_width(width: BinWidth, bins: Vec<T>) -> Binned<T> {
        Binned {
            width,
            width_ns: width.ns(),
            limit_ns: width.ns().saturating_mul(MAX_BINS),
            bins,
        }
    }
}

impl<T: BinValue> Binned<T> {
    /// The width now.
    pub fn width(&self) -> BinWidth {
        self.width
    }

    /// The bins (those after the last one touched are absent).
    pub fn bins(&self) -> &[T] {
        &self.bins
    }

    /// The bin holding `t_ns` (coarsening first if `t_ns` lies beyond
    /// `MAX_BINS` bins), with the time its bin ends.
    #[inline]
    pub fn at(&mut self, t_ns: u64) -> (&mut T, u64) {
        // (A limit saturated at the end of the clock holds every time.)
        while t_ns >= self.limit_ns && self.limit_ns < u64::MAX {
            self.coarsen();
        }
        let w = self.width_ns;
        let i = (t_ns / w) as usize;
        if i >= self.bins.len() {
            self.bins.resize(i + 1, T::default());
        }
        (&mut self.bins[i], (i as u64 + 1).saturating_mul(w))
    }

    fn coarsen(&mut self) {
        let (next, factor) = self.width.next();
        let w = self.width_ns;
        let bins = self
            .bins
            .chunks(factor)
            .map(|group| {
                let mut merged = T::default();
                for (k, b) in group.iter().enumerate() {
                    merged.absorb(b, ((factor - 1 - k) as u64 * w) as i64);
                }
                merged
            })
            .collect();
        *self = Binned::of_width(next, bins);
    }

    /// The bins at width `w` (at least the current one), padded with empty
    /// bins to `len`; a bin past `len` (events exactly at the end of a run
    /// whose end is a multiple of `w`) folds into the last.
    pub fn into_bins(mut self, w: BinWidth, len: usize) -> Vec<T> {
        while self.width < w {
            self.coarsen();
        }
        let width_ns = self.width_ns as i64;
        let mut bins = self.bins;
        while bins.len() > len.max(1) {
            let extra = bins.pop().expect("longer than len");
            // It starts where the last ends, one width later.
            bins.last_mut().expect("len >= 1").absorb(&extra, -width_ns);
        }
        bins.resize(len.max(1), T::default());
        bins
    }
}

/// A count of requests at a level over time, from +1 / −1 edges: `delta` is
/// the net change within the bin, `tail` Σ sign × (bin end − edge time). The
/// integral over bin i is (level at its start) × width + tail, the level at
/// its start the sum of the deltas before it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelEdges {
    delta: i64,
    tail_ns: i128,
}

impl LevelEdges {
    fn edge(&mut self, sign: i64, ns_to_bin_end: u64) {
        self.delta += sign;
        self.tail_ns += sign as i128 * ns_to_bin_end as i128;
    }
}

/// The per-request bin.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RequestBin {
    arrivals: u64,
    completed: u64,
    timed_out: u64,
    rejected: u64,
    waiting: LevelEdges,
    running: LevelEdges,
}

impl BinValue for RequestBin {
    fn absorb(&mut self, later: &Self, ns_after: i64) {
        self.arrivals += later.arrivals;
        self.completed += later.completed;
        self.timed_out += later.timed_out;
        self.rejected += later.rejected;
        for (mine, theirs) in [
            (&mut self.waiting, later.waiting),
            (&mut self.running, later.running),
        ] {
            mine.delta += theirs.delta;
            mine.tail_ns += theirs.tail_ns + theirs.delta as i128 * ns_after as i128;
        }
    }
}

/// Arrivals, outcomes, waiting and running requests over time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSeries(Binned<RequestBin>);

impl RequestSeries {
    /// A request that was dispatched at `dispatch_ns`, first scheduled at
    /// `first_admit_ns` (if ever) and ended at `end_ns`: waiting from its
    /// dispatch to its first scheduling, running from then to its end (a
    /// preempted request counts as running).
    pub fn request(
        &mut self,
        dispatch_ns: u64,
        first_admit_ns: Option<u64>,
        end_ns: u64,
        outcome: Outcome,
    ) {
        // One lookup per instant (a lookup may coarsen: none is held).
        let (bin, end) = self.0.at(dispatch_ns);
        bin.arrivals += 1;
        bin.waiting.edge(1, end - dispatch_ns);
        let admitted = first_admit_ns.map(|a| a.min(end_ns));
        let at = admitted.unwrap_or(end_ns);
        let (bin, end) = self.0.at(at);
        bin.waiting.edge(-1, end - at);
        if admitted.is_some() {
            bin.running.edge(1, end - at);
        }
        let (bin, end) = self.0.at(end_ns);
        if admitted.is_some() {
            bin.running.edge(-1, end - end_ns);
        }
        match outcome {
            Outcome::Completed => bin.completed += 1,
            Outcome::TimedOut => bin.timed_out += 1,
            Outcome::Rejected => bin.rejected += 1,
            Outcome::Incomplete => {}
        }
    }

    /// The width now.
    pub fn width(&self) -> BinWidth {
        self.0.width()
    }
}

/// One worker's bin: KV blocks in use integrated over time, their peak, and
/// the output tokens its passes emitted.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerBin {
    block_ns: u128,
    peak_blocks: u64,
    tokens: u64,
}

impl BinValue for WorkerBin {
    fn absorb(&mut self, later: &Self, _: i64) {
        self.block_ns += later.block_ns;
        self.peak_blocks = self.peak_blocks.max(later.peak_blocks);
        self.tokens += later.tokens;
    }
}

/// One worker over time. The bin being filled is kept apart (`open`), so a
/// sample within it costs a comparison and three additions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerSeries {
    bins: Binned<WorkerBin>,
    open: WorkerBin,
    open_start: u64,
    open_end: u64,
    /// Index of the open bin among `bins` (when it is one of their width).
    open_index: usize,
}

impl WorkerSeries {
    /// The level `held` was in use from `last_ns` to `now_ns`; from `now_ns`
    /// it is `level`, and the pass ending at `now_ns` emitted `tokens`.
    #[inline]
    pub fn sample(&mut self, last_ns: u64, now_ns: u64, held: u64, level: u64, tokens: u64) {
        if now_ns < self.open_end {
            self.open.block_ns += held as u128 * now_ns.saturating_sub(last_ns) as u128;
        } else {
            self.roll(last_ns, now_ns, held);
        }
        self.open.peak_blocks = self.open.peak_blocks.max(level);
        self.open.tokens += tokens;
    }

    /// Whether `t_ns` falls in the bin being filled (a sample there takes
    /// the fast path).
    #[inline]
    pub fn is_open_at(&self, t_ns: u64) -> bool {
        t_ns < self.open_end
    }

    /// Closes the open bin at its end, fills the bins `held` spans whole,
    /// and opens the one holding `now_ns`.
    #[cold]
    fn roll(&mut self, last_ns: u64, now_ns: u64, held: u64) {
        let w = self.bins.width_ns;
        let next_end = self.open_end.saturating_add(w);
        if self.open_end == self.open_start + w
            && now_ns < next_end
            && next_end <= self.bins.limit_ns
        {
            // The usual step: into the next bin, at the same width.
            let from = last_ns.max(self.open_start);
            self.open.block_ns += held as u128 * (self.open_end - from) as u128;
            let bins = &mut self.bins.bins;
            if self.open_index >= bins.len() {
                bins.resize(self.open_index + 1, WorkerBin::default());
            }
            bins[self.open_index].absorb(&self.open, 0);
            self.open_index += 1;
            self.open_start = self.open_end;
            self.open_end = next_end;
            self.open = WorkerBin {
                block_ns: held as u128 * (now_ns - self.open_start) as u128,
                peak_blocks: if now_ns > self.open_start { held } else { 0 },
                tokens: 0,
            };
            return;
        }
        let t = last_ns.max(self.open_start);
        if self.open_end > t {
            self.open.block_ns += held as u128 * (self.open_end - t) as u128;
        }
        let mut t = t.max(self.open_end);
        self.close();
        if held == 0 {
            t = t.max(now_ns); // nothing to fill
        }
        loop {
            let (bin, end) = self.bins.at(t);
            if now_ns < end {
                // The bin holding `now_ns` opens; `held` filled it from `t`.
                self.open_start = end - self.bins.width_ns;
                self.open_end = end;
                self.open_index = (end / self.bins.width_ns) as usize - 1;
                self.open = WorkerBin {
                    block_ns: held as u128 * (now_ns.max(t) - t) as u128,
                    peak_blocks: if t < now_ns { held } else { 0 },
                    tokens: 0,
                };
                return;
            }
            bin.block_ns += held as u128 * (end - t) as u128;
            bin.peak_blocks = bin.peak_blocks.max(held);
            t = end;
        }
    }

    fn close(&mut self) {
        if self.open != WorkerBin::default() {
            self.bins.at(self.open_start).0.absorb(&self.open, 0);
        }
        self.open = WorkerBin::default();
    }

    /// The bins at width `w` up to `len` (after the last sample, at the run's end).
    pub fn into_bins(mut self, w: BinWidth, len: usize) -> Vec<WorkerBin> {
        self.close();
        self.bins.into_bins(w, len)
    }

    /// The width now.
    pub fn width(&self) -> BinWidth {
        self.bins.width()
    }
}

/// The report's `time_series`: every array has one value per bin, bin `i`
/// covering [i × `bin_width_s`, (i + 1) × `bin_width_s`) of simulated time,
/// the last one cut at `end_s`. Counts cover every request, warm-up included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TimeSeries {
    /// Width of every bin but possibly the last, s.
    pub bin_width_s: f64,
    /// Number of bins.
    pub bins: u64,
    /// End of the run (and of the last bin), s.
    pub end_s: f64,
    /// Requests dispatched in the bin.
    pub arrivals: Vec<u64>,
    /// Requests that completed in the bin.
    pub completed: Vec<u64>,
    /// Requests that timed out in the bin.
    pub timed_out: Vec<u64>,
    /// Requests rejected in the bin.
    pub rejected: Vec<u64>,
    /// Output tokens emitted in the bin (by passes that ended in it).
    pub output_tokens: Vec<u64>,
    /// Mean requests waiting for their first scheduling (dispatched, not yet
    /// scheduled by an engine: the queue depth).
    pub waiting_mean: Vec<f64>,
    /// Mean requests scheduled at least once and not ended (preempted ones
    /// included).
    pub running_mean: Vec<f64>,
    /// KV cache occupancy.
    pub kv: KvSeries,
}

/// KV occupancy over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct KvSeries {
    /// KV blocks of one worker (all its ranks).
    pub capacity_blocks: u64,
    /// Workers in the topology.
    pub workers: u32,
    /// Mean fraction of the KV blocks of every worker of the topology in use
    /// (idle workers hold none).
    pub mean_occupancy: Vec<f64>,
    /// Highest blocks in use on any one worker in the bin.
    pub peak_blocks_max: Vec<u64>,
    /// The workers shown one by one: at most `KV_WORKERS_SHOWN`, the
    /// highest by mean occupancy over the run (ties: the lower index), by
    /// index.
    pub shown: Vec<WorkerKv>,
}

/// Most workers whose KV occupancy the series shows one by one.
pub const KV_WORKERS_SHOWN: usize = 8;

/// One worker's KV occupancy over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct WorkerKv {
    /// Worker index.
    pub worker: u32,
    /// Mean fraction of its KV blocks in use.
    pub mean_occupancy: Vec<f64>,
    /// Highest blocks in use.
    pub peak_blocks: Vec<u64>,
}

/// A level's mean over each bin, from its edges. An edge's tail counts to
/// its bin's uncut end (`width_ns`); the last bin ends with the run.
fn level_means(
    bins: &[RequestBin],
    level: fn(&RequestBin) -> LevelEdges,
    lengths: &[u64],
    width_ns: u64,
) -> Vec<f64> {
    let w = width_ns as i128;
    let mut at_start: i128 = 0;
    bins.iter()
        .zip(lengths)
        .map(|(b, &len)| {
            let e = level(b);
            let (len, delta) = (len as i128, e.delta as i128);
            // Over [start, start + len): the part past `len` of each edge's
            // tail, and of the level before them, is cut off.
            let integral = at_start * len + e.tail_ns - (w - len) * delta;
            at_start += delta;
            integral as f64 / len.max(1) as f64
        })
        .collect()
}

impl TimeSeries {
    /// The series of a run that ended at `end_ns`, from its requests and
    /// its workers (index and series, each worker in use once).
    pub fn derive(
        requests: RequestSeries,
        workers: Vec<(u32, WorkerSeries)>,
        end_ns: u64,
        capacity_blocks: u64,
        worker_count: u32,
    ) -> TimeSeries {
        let width = BinWidth::for_end(end_ns).max(requests.width()).max(
            workers
                .iter()
                .map(|(_, s)| s.width())
                .max()
                .unwrap_or_default(),
        );
        let len = width.bins_to(end_ns);
        let w = width.ns();
        // Each bin's length: the last one ends with the run.
        let lengths: Vec<u64> = (0..len as u64)
            .map(|i| end_ns.saturating_sub(i * w).clamp(1, w))
            .collect();
        let rb = requests.0.into_bins(width, len);
        let col = |f: fn(&RequestBin) -> u64| rb.iter().map(f).collect::<Vec<u64>>();
        let mut output_tokens = vec![0u64; len];
        let mut kv_block_ns = vec![0u128; len];
        let mut peak_blocks_max = vec![0u64; len];
        let capacity = capacity_blocks.max(1) as f64;
        let mut per_worker: Vec<(u32, u128, WorkerKv)> = workers
            .into_iter()
            .map(|(worker, series)| {
                let bins = series.into_bins(width, len);
                let mut total = 0u128;
                for (i, b) in bins.iter().enumerate() {
                    output_tokens[i] += b.tokens;
                    kv_block_ns[i] += b.block_ns;
                    peak_blocks_max[i] = peak_blocks_max[i].max(b.peak_blocks);
                    total += b.block_ns;
                }
                let kv = WorkerKv {
                    worker,
                    mean_occupancy: bins
                        .iter()
                        .zip(&lengths)
                        .map(|(b, &l)| b.block_ns as f64 / (capacity * l as f64))
                        .collect(),
                    peak_blocks: bins.iter().map(|b| b.peak_blocks).collect(),
                };
                (worker, total, kv)
            })
            .collect();
        per_worker.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        per_worker.truncate(KV_WORKERS_SHOWN);
        per_worker.sort_by_key(|w| w.0);
        let all_capacity = capacity * worker_count.max(1) as f64;
        TimeSeries {
            bin_width_s: w as f64 * 1e-9,
            bins: len as u64,
            end_s: end_ns as f64 * 1e-9,
            arrivals: col(|b| b.arrivals),
            completed: col(|b| b.completed),
            timed_out: col(|b| b.timed_out),
            rejected: col(|b| b.rejected),
            output_tokens,
            waiting_mean: level_means(&rb, |b| b.waiting, &lengths, w),
            running_mean: level_means(&rb, |b| b.running, &lengths, w),
            kv: KvSeries {
                capacity_blocks,
                workers: worker_count,
                mean_occupancy: kv_block_ns
                    .iter()
                    .zip(&lengths)
                    .map(|(&b, &l)| b as f64 / (all_capacity * l as f64))
                    .collect(),
                peak_blocks_max,
                shown: per_worker.into_iter().map(|w| w.2).collect(),
            },
        }
    }

    /// Length of bin `i`, s (the last one ends with the run).
    pub fn bin_length_s(&self, i: usize) -> f64 {
        let start = i as f64 * self.bin_width_s;
        (self.end_s - start).clamp(0.0, self.bin_width_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The integral of a ±1 level over [a, b) by brute force.
    fn overlap(a: u64, b: u64, lo: u64, hi: u64) -> u64 {
        b.min(hi).saturating_sub(a.max(lo))
    }

    #[test]
    fn the_width_is_the_smallest_of_the_sequence_that_fits() {
        let ms = |v: u64| v * NS_PER_MS;
        let widths: Vec<u64> = (0..8).map(|k| BinWidth(k).ns() / NS_PER_MS).collect();
        assert_eq!(widths, [1, 2, 10, 20, 100, 200, 1000, 2000]);
        assert_eq!(BinWidth::for_end(0).ns(), ms(1));
        assert_eq!(BinWidth::for_end(ms(499)).ns(), ms(1));
        assert_eq!(BinWidth::for_end(ms(500)).ns(), ms(2));
        assert_eq!(BinWidth::for_end(ms(1000)).ns(), ms(10));
        // A Mooncake-length run (1,023 s): 1,023 bins of 1 s would not fit.
        let w = BinWidth::for_end(ms(1_022_800));
        assert_eq!((w.ns(), w.bins_to(ms(1_022_800))), (ms(10_000), 103));
        for end in [
            1u64,
            7,
            999_999,
            10u64.pow(9),
            3 * 10u64.pow(12),
            u64::MAX / 4,
        ] {
            let n = BinWidth::for_end(end).bins_to(end) as u64;
            assert!(n <= MAX_BINS, "{end}: {n} bins");
            assert!(end < ms(MAX_BINS) || n >= MAX_BINS / 5, "{end}: {n} bins");
        }
    }

    proptest! {
        #[test]
        fn request_series_equal_a_direct_count_at_the_final_width(
            reqs in prop::collection::vec((0u64..3_000_000_000, 0u64..400_000_000, 0u64..2_000_000_000, any::<bool>(), 0u8..4), 1..60),
        ) {
            let outcome = |k: u8| [Outcome::Completed, Outcome::TimedOut, Outcome::Rejected, Outcome::Incomplete][k as usize];
            let reqs: Vec<(u64, Option<u64>, u64, Outcome)> = reqs
                .into_iter()
                .map(|(d, q, run, admitted, o)| (d, admitted.then_some(d + q), d + q + run, outcome(o)))
                .collect();
            let end = reqs.iter().map(|r| r.2).max().unwrap();
            let mut s = RequestSeries::default();
            for &(d, a, e, o) in &reqs {
                s.request(d, a, e, o);
            }
            let ts = TimeSeries::derive(s, Vec::new(), end, 1, 1);
            let w = BinWidth::for_end(end).ns();
            prop_assert_eq!(ts.bin_width_s, w as f64 * 1e-9);
            prop_assert_eq!(ts.bins as usize, BinWidth::for_end(end).bins_to(end));
            for i in 0..ts.bins as usize {
                let (lo, hi) = (i as u64 * w, ((i as u64 + 1) * w).min(end));
                let last = i + 1 == ts.bins as usize;
                let inside = |t: u64| t >= lo && (t < hi || (last && t == end));
                let mut waiting = 0u64;
                let mut running = 0u64;
                let mut arrivals = 0;
                let mut completed = 0;
                for &(d, a, e, o) in &reqs {
                    arrivals += u64::from(inside(d));
                    completed += u64::from(inside(e) && o == Outcome::Completed);
                    waiting += overlap(d, a.unwrap_or(e), lo, hi);
                    if let Some(a) = a {
                        running += overlap(a, e, lo, hi);
                    }
                }
                let len = (hi - lo).max(1) as f64;
                prop_assert_eq!(ts.arrivals[i], arrivals);
                prop_assert_eq!(ts.completed[i], completed);
                prop_assert_eq!(ts.waiting_mean[i], waiting as f64 / len);
                prop_assert_eq!(ts.running_mean[i], running as f64 / len);
            }
        }

        #[test]
        fn worker_series_equal_a_direct_integral_at_the_final_width(
            steps in prop::collection::vec((0u64..300_000_000, 0u64..50, 0u64..5), 1..80),
        ) {
            // (time to the next sample, level from then on, tokens)
            let mut s = WorkerSeries::default();
            let (mut t, mut level) = (0u64, 0u64);
            let mut samples = Vec::new();
            for &(dt, next, tokens) in &steps {
                let now = t + dt;
                s.sample(t, now, level, next, tokens);
                samples.push((now, next, tokens));
                (t, level) = (now, next);
            }
            let end = t;
            let ts = TimeSeries::derive(RequestSeries::default(), vec![(3, s)], end, 50, 2);
            let w = BinWidth::for_end(end).ns();
            let worker = &ts.kv.shown[0];
            prop_assert_eq!(worker.worker, 3);
            for i in 0..ts.bins as usize {
                let (lo, hi) = (i as u64 * w, ((i as u64 + 1) * w).min(end));
                let last = i + 1 == ts.bins as usize;
                let (mut block_ns, mut peak, mut tokens, mut from, mut held) = (0u64, 0u64, 0u64, 0u64, 0u64);
                for &(now, next, tk) in &samples {
                    if overlap(from, now, lo, hi) > 0 {
                        block_ns += held * overlap(from, now, lo, hi);
                        peak = peak.max(held);
                    }
                    if now >= lo && (now < hi || (last && now == end)) {
                        peak = peak.max(next);
                        tokens += tk;
                    }
                    (from, held) = (now, next);
                }
                let len = (hi - lo).max(1) as f64;
                prop_assert_eq!(worker.peak_blocks[i], peak, "bin {}", i);
                prop_assert_eq!(ts.output_tokens[i], tokens);
                prop_assert_eq!(worker.mean_occupancy[i], block_ns as f64 / (50.0 * len));
                prop_assert_eq!(ts.kv.mean_occupancy[i], block_ns as f64 / (100.0 * len));
                prop_assert!(worker.peak_blocks[i] <= 50);
            }
        }
    }

    #[test]
    fn a_long_run_holds_at_most_max_bins() {
        let mut s = WorkerSeries::default();
        let mut r = RequestSeries::default();
        let mut t = 0u64;
        for k in 0..200_000u64 {
            let now = t + 7_000_000 + k % 13 * 1_000_000;
            s.sample(t, now, k % 17, (k + 1) % 17, 1);
            r.request(t, Some(t + 1), now, Outcome::Completed);
            t = now;
            assert!(s.bins.bins().len() as u64 <= MAX_BINS);
            assert!(r.0.bins().len() as u64 <= MAX_BINS);
        }
        let ts = TimeSeries::derive(r, vec![(0, s)], t, 17, 1);
        assert_eq!(ts.output_tokens.iter().sum::<u64>(), 200_000);
        assert_eq!(ts.completed.iter().sum::<u64>(), 200_000);
        assert!(ts.bins <= MAX_BINS && ts.bins >= MAX_BINS / 5);
    }
}
