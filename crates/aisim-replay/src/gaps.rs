//! `GapCounts`: the pooled inter-token gaps, exact (a count per distinct gap)
//! while they hold at most `EXACT_LIMIT` distinct values, in a `LogSketch`
//! beyond.

use crate::distribution::EXACT_LIMIT;
use crate::gap_table::{GapTable, SortBuffers};
use aisim_core::sketch::LogSketch;
use aisim_core::summary::{ms, Summary};
use aisim_core::SimTime;
use std::sync::mpsc::{Receiver, Sender};

/// Exact distribution of inter-token gaps: appended to a buffer (cheap, in
/// order), counted by distinct value (`GapTable`) and folded into sorted
/// (gap, count) runs when the buffer fills, so memory stays bounded by the
/// distinct gaps rather than the token count. Gaps under 4.3 s (nearly all)
/// are buffered as `u32` nanoseconds: half the memory. When the runs pass
/// `limit`, they move into a sketch (of milliseconds), and so does every
/// later buffer. A gap many tokens share (one decode pass's, for every
/// request in it) is buffered once with its count (`add_n`), and counts as
/// that many gaps towards the buffer's size, so that folds happen where they
/// would one gap at a time.
///
/// The buffer is filled in chunks of `CHUNK` entries. A full chunk is
/// counted into the buffer's table (`Folds::take_chunk`) by a helper thread
/// while the replay goes on, and folds are queued behind it: the helper
/// takes them in order, so the runs, the sketch and its float sums are what
/// one thread sorting the whole buffer at each fold gets (a buffer's runs
/// are its table's, sorted). Without a thread (none could be started) the
/// same work is done in place.
#[derive(Debug)]
pub struct GapCounts {
    /// The chunk being filled.
    chunk: Chunk,
    /// Gaps buffered since the last fold, counted (chunks sent on included).
    buffered: usize,
    /// Gaps that can be added before the buffer may fold or the chunk may
    /// fill (at least 1): one countdown instead of two tests a gap.
    until_check: usize,
    /// Emptied chunks, kept for their capacity.
    spare: Vec<Chunk>,
    /// Everything behind the chunk, when no helper holds it.
    folds: Option<Box<Folds>>,
    helper: Option<Helper>,
    /// Whether a helper thread may be started (tests compare without).
    may_help: bool,
}

/// Gaps (entries) of one chunk: buffered as they come, then counted at once.
#[derive(Debug, Default)]
struct Chunk {
    short: Vec<u32>,
    long: Vec<u64>,
    /// Gaps added many at a time (under 4.3 s): the gap in the high 32 bits,
    /// the count in the low ones.
    shared: Vec<u64>,
}

impl Chunk {
    fn entries(&self) -> usize {
        self.short.len() + self.long.len() + self.shared.len()
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
        self.shared.clear();
    }
}

/// The counted side: the buffer's chunks so far, and what earlier folds
/// left (exact runs or a sketch).
#[derive(Debug)]
struct Folds {
    /// The buffer's gaps under 4.3 s, counted (a count fits 32 bits: a
    /// buffer holds at most `GAP_BUFFER` gaps).
    table: GapTable,
    /// The table's runs sorted, packed `gap << 32 | count`, when read, and
    /// the sort's buffers.
    window: Vec<u64>,
    sort: SortBuffers,
    /// The buffer's gaps of 4.3 s and more, sorted.
    window_long: Vec<u64>,
    runs: Vec<(u64, u64)>,
    /// The previous `runs`, kept for its capacity.
    spare_runs: Vec<(u64, u64)>,
    sketch: Option<LogSketch>,
    limit: usize,
}

/// The helper thread's two queues: work in order, emptied chunks back.
/// The jobs' queue is unbounded, so that the last job (`summary_aside`)
/// never waits; chunks are bounded by counting them instead.
#[derive(Debug)]
struct Helper {
    jobs: Sender<Job>,
    back: Receiver<Back>,
    /// Chunks sent and not yet back.
    away: usize,
}

enum Job {
    /// The folds to work on: the first job.
    Start(Box<Folds>),
    Chunk(Chunk),
    Fold,
    /// Hand the folds back and stop.
    Finish,
    /// Take this last chunk, send the summary back and stop.
    Summarize(Chunk),
}

enum Back {
    Emptied(Chunk),
    Finished(Box<Folds>),
    /// The summary, and whether it is sketched.
    Summary(Summary, bool),
}

/// The summary of every gap (`GapCounts::summary_aside`): worked out by
/// the helper thread while the caller does other work, or already here.
#[derive(Debug)]
pub struct PendingSummary(Pending);

#[derive(Debug)]
enum Pending {
    Done(Summary, bool),
    Helper(Receiver<Back>),
}

impl PendingSummary {
    /// The summary, in milliseconds, and whether it is sketched
    /// (approximate); waits for the helper.
    pub fn wait(self) -> (Summary, bool) {
        match self.0 {
            Pending::Done(s, sketched) => (s, sketched),
            Pending::Helper(back) => loop {
                match back.recv() {
                    Ok(Back::Summary(s, sketched)) => return (s, sketched),
                    Ok(_) => {}
                    Err(_) => panic!("the gaps' helper thread stopped"),
                }
            },
        }
    }
}

impl Default for GapCounts {
    fn default() -> GapCounts {
        GapCounts::with_limit(EXACT_LIMIT)
    }
}

/// Gaps buffered before folding.
const GAP_BUFFER: usize = 1 << 20;
/// Entries of a chunk (512 KiB of short gaps).
const CHUNK: usize = 1 << 17;
/// Chunks with the helper (queued, or in its hands) before the replay
/// waits for one back: bounds memory however far behind it falls.
const CHUNKS_AWAY: usize = 3;

impl GapCounts {
    /// An empty distribution with room for a whole chunk (untouched pages
    /// cost nothing; growing by doubling would copy and fault them again).
    /// It is exact while at most `limit` distinct gaps.
    pub fn with_buffer(limit: usize) -> GapCounts {
        let mut g = GapCounts::with_limit(limit);
        g.chunk.short.reserve(CHUNK);
        g
    }

    /// Exact while at most `limit` distinct gaps (the default is `EXACT_LIMIT`).
    pub fn with_limit(limit: usize) -> GapCounts {
        GapCounts {
            chunk: Chunk::default(),
            buffered: 0,
            until_check: CHUNK,
            spare: Vec::new(),
            folds: Some(Box::new(Folds {
                table: GapTable::default(),
                window: Vec::new(),
                sort: SortBuffers::default(),
                window_long: Vec::new(),
                runs: Vec::new(),
                spare_runs: Vec::new(),
                sketch: None,
                limit,
            })),
            helper: None,
            may_help: true,
        }
    }

    /// Adds one gap (buffered either way: the sketch takes the buffer's
    /// runs at each fold, which costs less than a logarithm per gap).
    #[inline]
    pub fn add(&mut self, gap_ns: u64) {
        self.push(gap_ns);
        self.counted(1);
    }

    #[inline]
    fn push(&mut self, gap_ns: u64) {
        match u32::try_from(gap_ns) {
            Ok(g) => self.chunk.short.push(g),
            Err(_) => self.chunk.long.push(gap_ns),
        }
    }

    /// Adds the gaps between `prev` and `ends[0]`, then between each end
    /// and the next (times in nanoseconds, in order): `add` for each, in a
    /// tighter loop.
    #[inline]
    pub fn add_steps(&mut self, mut prev: u64, ends: &[SimTime]) {
        let mut rest = ends;
        while !rest.is_empty() {
            let n = rest.len().min(self.until_check);
            for &SimTime(at) in &rest[..n] {
                self.push(at - prev);
                prev = at;
            }
            self.counted(n);
            rest = &rest[n..];
        }
    }

    /// Counts `n` gaps just added (at most `until_check` past a single
    /// entry: see `add_n`).
    #[inline]
    fn counted(&mut self, n: usize) {
        self.buffered += n;
        if n < self.until_check {
            self.until_check -= n;
        } else {
            self.check();
        }
    }

    /// Folds when the buffer is full, else sends the chunk on when it is;
    /// then counts down to the next time either may be.
    fn check(&mut self) {
        if self.buffered >= GAP_BUFFER {
            self.fold();
        } else if self.chunk.entries() >= CHUNK {
            self.send_chunk();
        }
        // Each gap adds at most one entry, so neither can happen sooner.
        self.until_check = (GAP_BUFFER - self.buffered).min(CHUNK - self.chunk.entries());
    }

    /// How many gaps can be added before the buffer folds: adding at most
    /// that many, in any order and grouping, folds (at the end) exactly
    /// where adding them one at a time in any order would.
    #[inline]
    pub fn room(&self) -> usize {
        GAP_BUFFER - self.buffered
    }

    /// Adds `count` gaps of `gap_ns` each, which must fit in `room`.
    #[inline(always)]
    pub fn add_n(&mut self, gap_ns: u64, count: u64) {
        debug_assert!(count as usize <= self.room(), "add_n past the buffer");
        match (u32::try_from(gap_ns), u32::try_from(count)) {
            (Ok(g), Ok(c)) if c > 1 => {
                let packed = u64::from(g) << 32 | u64::from(c);
                match self.chunk.shared.last_mut() {
                    // The same gap again (a steady batch): one entry.
                    Some(last) if *last >> 32 == u64::from(g) && (*last as u32) < u32::MAX - c => {
                        *last += u64::from(c);
                    }
                    _ => self.chunk.shared.push(packed),
                }
                self.counted(c as usize);
            }
            _ if count == 1 => self.add(gap_ns),
            _ => self.add_each(gap_ns, count),
        }
    }

    /// `add_n` for a gap of 4.3 s or more: one at a time.
    #[cold]
    fn add_each(&mut self, gap_ns: u64, count: u64) {
        for _ in 0..count {
            self.add(gap_ns);
        }
    }

    /// Hands the chunk over to be counted into the buffer's table.
    fn send_chunk(&mut self) {
        if self.chunk.entries() == 0 {
            return;
        }
        if self.helper.is_none() {
            self.start_helper();
        }
        let next = self.spare_chunk();
        let full = std::mem::replace(&mut self.chunk, next);
        match &mut self.helper {
            Some(h) => {
                h.send(Job::Chunk(full));
                h.away += 1;
            }
            None => {
                let mut full = full;
                self.folds_here().take_chunk(&mut full);
                self.spare.push(full);
            }
        }
    }

    /// An emptied chunk: one the helper gave back (waiting for one when
    /// `CHUNKS_AWAY` are with it), else a new one.
    fn spare_chunk(&mut self) -> Chunk {
        if let Some(h) = &mut self.helper {
            // The chunks already back; then, while too many are away, the
            // next ones as they come.
            loop {
                let back = if h.away >= CHUNKS_AWAY {
                    h.back
                        .recv()
                        .unwrap_or_else(|_| panic!("the gaps' helper thread stopped"))
                } else {
                    match h.back.try_recv() {
                        Ok(back) => back,
                        Err(_) => break,
                    }
                };
                if let Back::Emptied(c) = back {
                    self.spare.push(c);
                    h.away -= 1;
                }
            }
        }
        self.spare.pop().unwrap_or_else(|| Chunk {
            short: Vec::with_capacity(CHUNK),
            ..Chunk::default()
        })
    }

    /// Moves the folds to a helper thread; leaves them here when no thread
    /// can be started.
    fn start_helper(&mut self) {
        if !self.may_help {
            return;
        }
        let (jobs, jobs_rx) = std::sync::mpsc::channel::<Job>();
        let (back_tx, back) = std::sync::mpsc::channel::<Back>();
        let started = std::thread::Builder::new()
            .name("aisim-gaps".into())
            .spawn(move || {
                let Ok(Job::Start(mut folds)) = jobs_rx.recv() else {
                    return;
                };
                while let Ok(job) = jobs_rx.recv() {
                    match job {
                        Job::Chunk(mut c) => {
                            folds.take_chunk(&mut c);
                            let _ = back_tx.send(Back::Emptied(c));
                        }
                        Job::Fold => folds.fold(),
                        Job::Summarize(mut c) => {
                            folds.take_chunk(&mut c);
                            let sketched = folds.sketch.is_some();
                            let _ = back_tx.send(Back::Summary(folds.summarize(), sketched));
                            return;
                        }
                        Job::Finish | Job::Start(_) => {
                            let _ = back_tx.send(Back::Finished(folds));
                            return;
                        }
                    }
                }
            });
        // The folds go over only once the thread runs, so they stay here
        // when none can be started.
        match (started, self.folds.take()) {
            (Ok(_), Some(folds)) => {
                let h = Helper {
                    jobs,
                    back,
                    away: 0,
                };
                h.send(Job::Start(folds));
                self.helper = Some(h);
            }
            (_, folds) => {
                self.folds = folds;
                self.may_help = false; // no second try at every chunk
            }
        }
    }

    /// The folds, back from the helper once it has done everything sent
    /// to it.
    fn folds_here(&mut self) -> &mut Folds {
        if let Some(h) = self.helper.take() {
            h.send(Job::Finish);
            loop {
                match h.back.recv() {
                    Ok(Back::Emptied(c)) => self.spare.push(c),
                    Ok(Back::Finished(f)) => {
                        self.folds = Some(f);
                        break;
                    }
                    Ok(Back::Summary(..)) => {
                        unreachable!("only `summary_aside`, which takes the counts, asks for it")
                    }
                    Err(_) => panic!("the gaps' helper thread stopped"),
                }
            }
        }
        self.folds
            .as_mut()
            .expect("the folds are here once the helper is done")
    }

    fn fold(&mut self) {
        self.send_chunk();
        match &self.helper {
            Some(h) => h.send(Job::Fold),
            None => self.folds_here().fold(),
        }
        self.buffered = 0;
        self.until_check = CHUNK;
    }

    /// Whether the gaps went past the limit and percentiles are approximate
    /// (waits for the helper's work and takes the folds back).
    pub fn is_sketched(&mut self) -> bool {
        self.folds_here().sketch.is_some()
    }

    /// Heap bytes held (waits for the helper's work and takes the folds
    /// back).
    pub fn heap_bytes(&mut self) -> usize {
        let chunks: usize = std::iter::once(&self.chunk)
            .chain(&self.spare)
            .map(|c| c.short.capacity() * 4 + (c.long.capacity() + c.shared.capacity()) * 8)
            .sum();
        let f = self.folds_here();
        chunks
            + f.table.heap_bytes()
            + f.sort.heap_bytes()
            + (f.window.capacity() + f.window_long.capacity()) * 8
            + (f.runs.capacity() + f.spare_runs.capacity()) * 16
            + f.sketch.as_ref().map_or(0, LogSketch::heap_bytes)
    }

    /// The folds with every gap in: the buffer's runs in `window`.
    fn settle(mut self) -> Box<Folds> {
        let mut chunk = std::mem::take(&mut self.chunk);
        self.folds_here().take_chunk(&mut chunk);
        self.folds.take().expect("the folds are here")
    }

    /// The gaps, sorted.
    pub fn into_sorted(self) -> SortedGaps {
        let mut f = self.settle();
        f.read_table();
        SortedGaps {
            runs: f.runs,
            packed: f.window,
            long: f.window_long,
        }
    }

    /// Their summary, in milliseconds.
    pub fn summary(self) -> Summary {
        self.settle().summarize()
    }

    /// `summary` and `is_sketched`, worked out by the helper thread (when
    /// there is one) while the caller goes on: the last chunk's count, the
    /// sort of the distinct gaps and the summary's walk need nothing else.
    pub fn summary_aside(mut self) -> PendingSummary {
        PendingSummary(match self.helper.take() {
            Some(h) => {
                h.send(Job::Summarize(std::mem::take(&mut self.chunk)));
                Pending::Helper(h.back)
            }
            None => {
                let sketched = self.is_sketched();
                Pending::Done(self.summary(), sketched)
            }
        })
    }
}

impl Helper {
    fn send(&self, job: Job) {
        if self.jobs.send(job).is_err() {
            panic!("the gaps' helper thread stopped");
        }
    }
}

impl Folds {
    /// Counts a chunk's gaps into the buffer's, and empties it.
    fn take_chunk(&mut self, c: &mut Chunk) {
        self.table.add_all(&c.short, |g| (g, 1));
        self.table
            .add_all(&c.shared, |x| ((x >> 32) as u32, x as u32));
        if !c.long.is_empty() {
            self.window_long.append(&mut c.long);
            self.window_long.sort_unstable();
        }
        c.clear();
    }

    /// The table's runs into `window`, sorted.
    fn read_table(&mut self) {
        self.table.sorted_runs(&mut self.window, &mut self.sort);
    }

    /// The buffer's runs into the folded runs (or the sketch).
    fn fold(&mut self) {
        self.read_table();
        if let Some(mut s) = self.sketch.take() {
            for (g, c) in buffer_runs(&self.window, &self.window_long) {
                s.add_n(ms(g), c);
            }
            self.sketch = Some(s);
            self.clear_window();
            return;
        }
        let mut merged = std::mem::take(&mut self.spare_runs);
        merged.clear();
        merged.extend(merge_runs(
            self.runs.iter().copied(),
            buffer_runs(&self.window, &self.window_long),
        ));
        self.spare_runs = std::mem::replace(&mut self.runs, merged);
        self.clear_window();
        if self.runs.len() > self.limit {
            let mut s = LogSketch::default();
            for &(g, c) in &self.runs {
                s.add_n(ms(g), c);
            }
            self.sketch = Some(s);
            self.runs = Vec::new();
            self.spare_runs = Vec::new();
        }
    }

    /// The summary of every gap once the last chunk is in.
    fn summarize(&mut self) -> Summary {
        // A fold reads the table; the exact runs read it here.
        if self.sketch.is_some() {
            self.fold();
        } else {
            self.read_table();
        }
        match &self.sketch {
            Some(s) => Summary::of_sketch(s),
            // Without earlier folds (a run of under a million gaps) the
            // buffer's runs are all: read them without the merge.
            None if self.runs.is_empty() => Summary::of_sorted_runs(
                buffer_runs(&self.window, &self.window_long).map(|(g, c)| (ms(g), c)),
            ),
            None => Summary::of_sorted_runs(
                merge_runs(
                    self.runs.iter().copied(),
                    buffer_runs(&self.window, &self.window_long),
                )
                .map(|(g, c)| (ms(g), c)),
            ),
        }
    }

    fn clear_window(&mut self) {
        self.table.clear();
        self.window.clear();
        self.window_long.clear();
    }
}

/// Every gap, sorted: folded runs plus the sorted rest of the buffer (as
/// runs), merged as they are read.
#[derive(Debug, Default)]
pub struct SortedGaps {
    runs: Vec<(u64, u64)>,
    packed: Vec<u64>,
    long: Vec<u64>,
}

impl SortedGaps {
    /// (gap ns, count) pairs, by increasing gap, each gap once.
    pub fn runs(&self) -> impl Iterator<Item = (u64, u64)> + Clone + '_ {
        merge_runs(
            self.runs.iter().copied(),
            buffer_runs(&self.packed, &self.long),
        )
    }
}

/// A sorted buffer's gaps as runs: the packed ones under 4.3 s, then the
/// long ones (every short gap is below every long one).
fn buffer_runs<'a>(
    packed: &'a [u64],
    long: &'a [u64],
) -> impl Iterator<Item = (u64, u64)> + Clone + 'a {
    packed
        .iter()
        .map(|&x| (x >> 32, x & LOW_HALF))
        .chain(run_lengths(long.iter().map(|&g| (g, 1))))
}

const LOW_HALF: u64 = u32::MAX as u64;

/// (value, count) pairs sorted by value as runs, each value once.
fn run_lengths(
    values: impl Iterator<Item = (u64, u64)> + Clone,
) -> impl Iterator<Item = (u64, u64)> + Clone {
    let mut values = values.peekable();
    std::iter::from_fn(move || {
        let (v, mut c) = values.next()?;
        while let Some((_, n)) = values.next_if(|&(w, _)| w == v) {
            c += n;
        }
        Some((v, c))
    })
}

/// Two sorted run lists as one, equal values combined.
fn merge_runs(
    a: impl Iterator<Item = (u64, u64)> + Clone,
    b: impl Iterator<Item = (u64, u64)> + Clone,
) -> impl Iterator<Item = (u64, u64)> + Clone {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek().copied(), b.peek().copied()) {
        (None, None) => None,
        (Some(x), None) => a.next().map(|_| x),
        (None, Some(y)) => b.next().map(|_| y),
        (Some(x), Some(y)) => Some(if x.0 < y.0 {
            a.next();
            x
        } else if y.0 < x.0 {
            b.next();
            y
        } else {
            a.next();
            b.next();
            (x.0, x.1 + y.1)
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_counts_fold_and_merge_exactly() {
        let mut g = GapCounts::default();
        let long = 1u64 << 40;
        for v in [5u64, 3, long, 5, 9] {
            g.add(v);
        }
        g.fold();
        for v in [9u64, 1, long, 5, 1 << 33] {
            g.add(v);
        }
        let sorted = g.into_sorted();
        let runs: Vec<(u64, u64)> = sorted.runs().collect();
        assert_eq!(
            runs,
            vec![(1, 1), (3, 1), (5, 3), (9, 2), (1 << 33, 1), (long, 2)]
        );
        // Reading twice reads the same.
        assert_eq!(sorted.runs().collect::<Vec<_>>(), runs);
        assert_eq!(GapCounts::default().into_sorted().runs().count(), 0);
    }

    /// The same gaps, in and out of a helper thread: every fold and the
    /// sketch's float sums agree, and exact runs match a plain count.
    #[test]
    fn a_helper_thread_folds_exactly_what_one_thread_would() {
        for limit in [64, 50_000, EXACT_LIMIT] {
            let (mut helped, mut alone) =
                (GapCounts::with_buffer(limit), GapCounts::with_buffer(limit));
            alone.may_help = false;
            let mut plain = std::collections::BTreeMap::<u64, u64>::new();
            let mut x = 7u64;
            for i in 0..2_600_000u64 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let g = 5_000_000 + (x >> 33) % 40_000 + if i % 100_000 == 0 { 1 << 33 } else { 0 };
                let n = 1 + (x >> 20) % 3;
                if (n as usize) > helped.room() || n == 1 {
                    helped.add(g);
                    alone.add(g);
                    *plain.entry(g).or_default() += 1;
                } else {
                    helped.add_n(g, n);
                    alone.add_n(g, n);
                    *plain.entry(g).or_default() += n;
                }
            }
            assert_eq!(helped.is_sketched(), alone.is_sketched(), "limit {limit}");
            assert_eq!(helped.is_sketched(), limit < 40_100, "limit {limit}");
            if limit == EXACT_LIMIT {
                let runs: Vec<(u64, u64)> = helped.into_sorted().runs().collect();
                assert_eq!(runs, plain.into_iter().collect::<Vec<_>>());
                continue;
            }
            let (a, b) = (helped.summary(), alone.summary());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "limit {limit}");
        }
    }

    #[test]
    fn a_summary_worked_out_aside_is_the_summary() {
        // Past a fold (sketched with the small limit) and into a last,
        // partial chunk, so the helper is running when it is asked.
        for limit in [64, EXACT_LIMIT] {
            let (mut aside, mut alone) =
                (GapCounts::with_buffer(limit), GapCounts::with_buffer(limit));
            alone.may_help = false;
            let mut x = 11u64;
            for i in 0..GAP_BUFFER + CHUNK / 3 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let g = 5_000_000 + (x >> 33) % 40_000;
                if i % 7 == 0 {
                    aside.add_n(g, 2);
                    alone.add_n(g, 2);
                } else {
                    aside.add(g);
                    alone.add(g);
                }
            }
            assert!(aside.helper.is_some(), "limit {limit}");
            let sketched = alone.is_sketched();
            assert_eq!(sketched, limit == 64);
            let (summary, was_sketched) = aside.summary_aside().wait();
            assert_eq!(was_sketched, sketched, "limit {limit}");
            assert_eq!(format!("{summary:?}"), format!("{:?}", alone.summary()));
        }
        // Without a helper, worked out at once.
        let (mut few, mut same) = (GapCounts::default(), GapCounts::default());
        for g in [3, 5, 5, 9] {
            few.add(g);
            same.add(g);
        }
        assert!(few.helper.is_none());
        let (summary, was_sketched) = few.summary_aside().wait();
        assert!(!was_sketched);
        assert_eq!(format!("{summary:?}"), format!("{:?}", same.summary()));
    }

    /// Memory stays flat over many folds, whatever the mix of single and
    /// shared gaps (sorts of an odd number of passes swap their buffers).
    #[test]
    fn memory_stays_flat_over_many_folds() {
        for shared_percent in [2u64, 50, 98] {
            let mut g = GapCounts::with_buffer(100_000);
            let mut x = 11u64;
            let mut held = Vec::new();
            for i in 0..12_000_000u64 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let gap = 5_000_000 + (x >> 33) % 40_000_000;
                if (x >> 20) % 100 < shared_percent && g.room() >= 2 {
                    g.add_n(gap, 2);
                } else {
                    g.add(gap);
                }
                if i == 4_000_000 || i == 11_999_999 {
                    held.push(g.heap_bytes());
                }
            }
            assert!(
                held[1] <= held[0] + (8 << 20) && held[1] < 64 << 20,
                "{shared_percent} % shared: {held:?} bytes"
            );
        }
    }

    #[test]
    fn single_and_shared_gaps_pack_into_one_run_per_gap() {
        let mut g = GapCounts::default();
        for v in [7u64, 3, 7, 9, 1 << 40] {
            g.add(v);
        }
        g.add_n(7, 5);
        g.add_n(2, 3);
        g.add_n(9, 2);
        g.add_n(9, 4); // the same gap again: one shared entry
        let runs: Vec<(u64, u64)> = g.into_sorted().runs().collect();
        assert_eq!(runs, vec![(2, 3), (3, 1), (7, 7), (9, 7), (1 << 40, 1)]);
    }

    #[test]
    fn gaps_switch_to_a_sketch_past_the_limit_of_distinct_values() {
        // A reserved buffer, so that only the sketch could grow.
        let mut g = GapCounts::with_buffer(3);
        for v in [5_000_000u64, 5_000_000, 6_000_000, 7_000_000] {
            g.add(v);
        }
        g.fold();
        assert!(!g.is_sketched(), "three distinct gaps fit");
        g.add(8_000_000);
        g.fold();
        assert!(g.is_sketched());
        let held = g.heap_bytes();
        for i in 0..10_000u64 {
            g.add(5_000_000 + i % 3_000_001);
        }
        assert_eq!(g.heap_bytes(), held);
        let s = g.summary();
        assert_eq!(s.count, 10_005);
        assert_eq!(s.min, Some(5.0));
    }
}
