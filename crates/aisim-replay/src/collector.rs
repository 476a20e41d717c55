//! `TraceCollector`: records what happened to each request, as it happens, and
//! nothing else; every metric is derived once at the end (`report.rs`).

use std::collections::HashMap;

use aisim_core::hashing::IntHashBuilder;
use aisim_core::SimTime;
use serde::Serialize;

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Emitted every token.
    Completed,
    /// Not finished within the timeout after its planned arrival.
    TimedOut,
    /// Can never be served (too long for the model or the KV cache, refused).
    Rejected,
    /// Still in flight (or never dispatched) when the run ended.
    #[default]
    Incomplete,
}

const UNSET: u64 = u64::MAX;

/// What happened to one request. Times are virtual nanoseconds.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Request id.
    pub id: u64,
    /// Session id, for multi-turn requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    /// Turn within the session.
    pub turn: u32,
    /// When the workload offered it.
    pub planned_ns: u64,
    /// For later turns: the gap to the previous turn on the trace clock.
    #[serde(serialize_with = "opt_ns")]
    pub trace_gap_ns: u64,
    /// When it was sent to the router.
    #[serde(serialize_with = "opt_ns")]
    pub dispatch_ns: u64,
    /// First time an engine scheduled it.
    #[serde(serialize_with = "opt_ns")]
    pub first_admit_ns: u64,
    /// First output token.
    #[serde(serialize_with = "opt_ns")]
    pub first_token_ns: u64,
    /// Last output token.
    #[serde(serialize_with = "opt_ns")]
    pub last_token_ns: u64,
    /// Completion, timeout or rejection.
    #[serde(serialize_with = "opt_ns")]
    pub terminal_ns: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens requested.
    pub output_length: u32,
    /// Output tokens emitted.
    pub tokens: u32,
    /// Prompt tokens reused from the prefix cache at first admission.
    pub reused_first: u32,
    /// Prompt tokens reused over every admission.
    pub reused_total: u64,
    /// Times preempted.
    pub preemptions: u32,
    /// Worker it ran on.
    pub worker: u32,
    /// DP rank it ran on.
    pub rank: u32,
    /// Whether it is in the measured cohort (not warm-up).
    pub in_cohort: bool,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reject_reason: Option<String>,
}

fn opt_ns<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    if *v == UNSET {
        s.serialize_none()
    } else {
        s.serialize_u64(*v)
    }
}

impl RequestRecord {
    fn new(id: u64) -> RequestRecord {
        RequestRecord {
            id,
            session: None,
            turn: 0,
            planned_ns: UNSET,
            trace_gap_ns: UNSET,
            dispatch_ns: UNSET,
            first_admit_ns: UNSET,
            first_token_ns: UNSET,
            last_token_ns: UNSET,
            terminal_ns: UNSET,
            outcome: Outcome::Incomplete,
            input_length: 0,
            output_length: 0,
            tokens: 0,
            reused_first: 0,
            reused_total: 0,
            preemptions: 0,
            worker: 0,
            rank: 0,
            in_cohort: false,
            reject_reason: None,
        }
    }

    /// A time field, `None` when it never happened.
    pub fn at(v: u64) -> Option<u64> {
        (v != UNSET).then_some(v)
    }

    /// Whether the request has ended (any outcome but incomplete).
    pub fn is_terminal(&self) -> bool {
        self.terminal_ns != UNSET
    }
}

/// What is known of a request when it is dispatched.
#[derive(Debug, Clone, Copy)]
pub struct Dispatch {
    /// Request id.
    pub id: u64,
    /// Session, if multi-turn.
    pub session: Option<u64>,
    /// Turn index.
    pub turn: u32,
    /// Planned arrival.
    pub planned: SimTime,
    /// Actual dispatch.
    pub dispatch: SimTime,
    /// Gap to the previous turn on the trace clock.
    pub trace_gap: Option<aisim_core::SimDuration>,
    /// Prompt tokens.
    pub input_length: u32,
    /// Output tokens.
    pub output_length: u32,
    /// Measured (not warm-up).
    pub in_cohort: bool,
}

/// Exact distribution of inter-token gaps: appended to a buffer (cheap, in
/// order) and folded into sorted (gap, count) runs when the buffer fills, so
/// memory stays bounded by the distinct gaps rather than the token count.
/// Gaps under 4.3 s (nearly all) are buffered as `u32` nanoseconds: half the
/// memory, and memory is most of what sorting them costs.
#[derive(Debug, Default)]
pub struct GapCounts {
    short: Vec<u32>,
    long: Vec<u64>,
    runs: Vec<(u64, u64)>,
}

/// Gaps buffered before folding (4 MiB).
const GAP_BUFFER: usize = 1 << 20;

impl GapCounts {
    /// An empty distribution with address space for a whole buffer: untouched
    /// pages cost nothing, and growing by doubling would copy and fault them
    /// again.
    pub fn with_buffer() -> GapCounts {
        GapCounts {
            short: Vec::with_capacity(GAP_BUFFER),
            ..GapCounts::default()
        }
    }

    /// Adds one gap.
    #[inline]
    pub fn add(&mut self, gap_ns: u64) {
        match u32::try_from(gap_ns) {
            Ok(g) => self.short.push(g),
            Err(_) => self.long.push(gap_ns),
        }
        if self.short.len() + self.long.len() >= GAP_BUFFER {
            self.fold();
        }
    }

    fn sort_buffer(&mut self) {
        radix_sort(&mut self.short);
        self.long.sort_unstable();
    }

    fn fold(&mut self) {
        self.sort_buffer();
        let tail = run_lengths(sorted_values(&self.short, &self.long));
        let merged: Vec<(u64, u64)> = merge_runs(self.runs.iter().copied(), tail).collect();
        self.runs = merged;
        self.short.clear();
        self.long.clear();
    }

    /// The gaps, sorted.
    pub fn into_sorted(mut self) -> SortedGaps {
        self.sort_buffer();
        SortedGaps {
            runs: self.runs,
            short: self.short,
            long: self.long,
        }
    }
}

/// Every gap, sorted: folded runs plus the sorted rest of the buffer, merged
/// as they are read (materialising the runs would take four times the memory
/// of the buffer when, as usual, nearly every gap is distinct).
#[derive(Debug, Default)]
pub struct SortedGaps {
    runs: Vec<(u64, u64)>,
    short: Vec<u32>,
    long: Vec<u64>,
}

impl SortedGaps {
    /// (gap ns, count) pairs, by increasing gap, each gap once.
    pub fn runs(&self) -> impl Iterator<Item = (u64, u64)> + Clone + '_ {
        merge_runs(
            self.runs.iter().copied(),
            run_lengths(sorted_values(&self.short, &self.long)),
        )
    }
}

/// The buffered gaps in order: every short one is below every long one.
fn sorted_values<'a>(short: &'a [u32], long: &'a [u64]) -> impl Iterator<Item = u64> + Clone + 'a {
    short.iter().map(|&g| g as u64).chain(long.iter().copied())
}

/// Sorted values as (value, count) runs.
fn run_lengths(
    values: impl Iterator<Item = u64> + Clone,
) -> impl Iterator<Item = (u64, u64)> + Clone {
    let mut values = values.peekable();
    std::iter::from_fn(move || {
        let v = values.next()?;
        let mut c = 1;
        while values.next_if_eq(&v).is_some() {
            c += 1;
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

/// Sorts `v` by LSD radix sort on 11-bit digits (an 8 KiB count table that
/// stays in L1), skipping digits on which every value agrees: at most three
/// passes. Measured on half a million replay-shaped gaps: 4.5 ms, against
/// 9.5 ms for `sort_unstable` and 13 ms for an in-place (American flag) radix
/// sort, even counting the page faults of the second buffer.
fn radix_sort(v: &mut Vec<u32>) {
    const BITS: u32 = 11;
    const MASK: u32 = (1 << BITS) - 1;
    let (mut or, mut and) = (0u32, u32::MAX);
    for &x in v.iter() {
        or |= x;
        and &= x;
    }
    let varying = or ^ and;
    if varying == 0 {
        return;
    }
    let mut scratch = vec![0u32; v.len()];
    let mut counts = [0u32; 1 << BITS];
    for shift in (0..32).step_by(BITS as usize) {
        if (varying >> shift) & MASK == 0 {
            continue;
        }
        counts.fill(0);
        for &x in v.iter() {
            counts[((x >> shift) & MASK) as usize] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &x in v.iter() {
            let d = ((x >> shift) & MASK) as usize;
            scratch[counts[d] as usize] = x;
            counts[d] += 1;
        }
        std::mem::swap(v, &mut scratch);
    }
}

/// Per-request records, indexed by request id, plus the pooled inter-token gaps
/// of completed cohort requests (exact: a count per distinct gap).
#[derive(Debug, Default)]
pub struct TraceCollector {
    records: Vec<Option<RequestRecord>>,
    itl: GapCounts,
    /// Token gaps of requests in flight, until their outcome is known (only
    /// when a request may end other than completed).
    pending_gaps: HashMap<u64, Vec<u64>, IntHashBuilder>,
    dispatched: u64,
    /// Every token-emitting request will complete: pool gaps as they come
    /// instead of holding them until the outcome is known.
    pool_gaps_at_once: bool,
}

impl TraceCollector {
    /// A collector; `every_request_completes` is a promise from the runtime that
    /// no request that emits tokens can end other than completed (no timeout,
    /// drain or stop time), which lets it pool token gaps immediately.
    pub fn new(every_request_completes: bool) -> TraceCollector {
        TraceCollector {
            pool_gaps_at_once: every_request_completes,
            itl: GapCounts::with_buffer(),
            ..Default::default()
        }
    }

    fn slot(&mut self, id: u64) -> &mut RequestRecord {
        let i = id as usize;
        if i >= self.records.len() {
            self.records.resize_with(i + 1, || None);
        }
        self.records[i].get_or_insert_with(|| RequestRecord::new(id))
    }

    #[inline]
    fn get(&mut self, id: u64) -> &mut RequestRecord {
        self.records[id as usize]
            .as_mut()
            .expect("event for a request that was never dispatched")
    }

    /// A request was offered (planned) and dispatched to the router.
    pub fn dispatched(&mut self, d: Dispatch) {
        self.dispatched += 1;
        let r = self.slot(d.id);
        r.session = d.session;
        r.turn = d.turn;
        r.planned_ns = d.planned.0;
        r.dispatch_ns = d.dispatch.0;
        r.trace_gap_ns = d.trace_gap.map_or(UNSET, |g| g.0);
        r.input_length = d.input_length;
        r.output_length = d.output_length;
        r.in_cohort = d.in_cohort;
    }

    /// Requests dispatched so far (the warm-up count is taken against this).
    pub fn dispatched_count(&self) -> u64 {
        self.dispatched
    }

    /// Where it was placed.
    pub fn placed(&mut self, id: u64, worker: u32, rank: u32) {
        let r = self.get(id);
        r.worker = worker;
        r.rank = rank;
    }

    /// An engine scheduled it (first time or again after preemption).
    pub fn admitted(&mut self, id: u64, at: SimTime, reused_tokens: u32, readmission: bool) {
        let r = self.get(id);
        if !readmission && r.first_admit_ns == UNSET {
            r.first_admit_ns = at.0;
            r.reused_first = reused_tokens;
        }
        r.reused_total += reused_tokens as u64;
    }

    /// It was preempted.
    pub fn preempted(&mut self, id: u64) {
        self.get(id).preemptions += 1;
    }

    /// One output token at `at`.
    #[inline]
    pub fn token(&mut self, id: u64, at: SimTime) {
        self.tokens(id, std::slice::from_ref(&at));
    }

    /// Output tokens at each of `ends` (in time order): the same as a
    /// `token` for each, with the record looked up once.
    pub fn tokens(&mut self, id: u64, ends: &[SimTime]) {
        let Some(&SimTime(last_end)) = ends.last() else {
            return;
        };
        let direct = self.pool_gaps_at_once;
        let r = self.records[id as usize]
            .as_mut()
            .expect("token for a request that was never dispatched");
        let mut rest = ends;
        if r.tokens == 0 {
            r.first_token_ns = ends[0].0;
            r.last_token_ns = ends[0].0;
            rest = &ends[1..];
        }
        let mut last = r.last_token_ns;
        if direct {
            if r.in_cohort {
                for &SimTime(at) in rest {
                    self.itl.add(at - last);
                    last = at;
                }
            }
        } else if !rest.is_empty() {
            let pending = self.pending_gaps.entry(id).or_default();
            for &SimTime(at) in rest {
                pending.push(at - last);
                last = at;
            }
        }
        r.last_token_ns = last_end;
        r.tokens += ends.len() as u32;
    }

    /// It ended with `outcome` at `at`. Returns false when it had already ended.
    pub fn terminal(&mut self, id: u64, at: SimTime, outcome: Outcome) -> bool {
        let r = self.get(id);
        if r.terminal_ns != UNSET {
            return false;
        }
        r.terminal_ns = at.0;
        r.outcome = outcome;
        let measured = outcome == Outcome::Completed && r.in_cohort;
        let gaps = self.pending_gaps.remove(&id).unwrap_or_default();
        if measured {
            for g in gaps {
                self.itl.add(g);
            }
        }
        true
    }

    /// It can never be served.
    pub fn rejected(&mut self, id: u64, at: SimTime, reason: String) {
        if self.terminal(id, at, Outcome::Rejected) {
            self.get(id).reject_reason = Some(reason);
        }
    }

    /// The worker a dispatched request was placed on.
    pub fn worker_of(&self, id: u64) -> u32 {
        self.records
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .map_or(0, |r| r.worker)
    }

    /// Whether it has ended.
    pub fn is_terminal(&self, id: u64) -> bool {
        self.records
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .is_some_and(RequestRecord::is_terminal)
    }

    /// Every record, by id, and the pooled inter-token gaps, sorted.
    pub fn finish(self) -> (Vec<RequestRecord>, SortedGaps) {
        let records = self.records.into_iter().flatten().collect();
        (records, self.itl.into_sorted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_sorts() {
        let spread: Vec<u32> = (0..50_000u64)
            .map(|i| ((i * 2_654_435_761) % 4_000_000_007) as u32)
            .chain([u32::MAX, 0, 1 << 31, 7, 7])
            .collect();
        // Gaps as a replay makes them: a narrow band, many repeats.
        let band: Vec<u32> = (0..30_000u32)
            .map(|i| 5_740_000 + (i * 7919) % 9_000)
            .collect();
        let same = vec![42u32; 5000];
        let short: Vec<u32> = vec![9, 3, 3, 1];
        for mut v in [spread, band, same, short] {
            let mut w = v.clone();
            w.sort_unstable();
            radix_sort(&mut v);
            assert_eq!(v, w);
        }
    }

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

    #[test]
    fn tokens_in_bulk_record_what_tokens_one_by_one_do() {
        let ns = |v: &[u64]| v.iter().map(|&t| SimTime(t)).collect::<Vec<_>>();
        // Request 0 and 2 in the cohort, 1 not; 2 gets its first token in bulk.
        let series = [
            (0u64, ns(&[10, 15, 30])),
            (1, ns(&[12, 20])),
            (2, ns(&[40, 41, 47, 60])),
        ];
        for pool_at_once in [true, false] {
            let mut one = TraceCollector::new(pool_at_once);
            let mut bulk = TraceCollector::new(pool_at_once);
            for c in [&mut one, &mut bulk] {
                for id in 0..3 {
                    c.dispatched(Dispatch {
                        id,
                        session: None,
                        turn: 0,
                        planned: SimTime::ZERO,
                        dispatch: SimTime::ZERO,
                        trace_gap: None,
                        input_length: 8,
                        output_length: 4,
                        in_cohort: id != 1,
                    });
                }
            }
            // One by one, interleaved in time; in bulk, a request at a time
            // and its first token apart from the rest for request 0.
            let mut all: Vec<(SimTime, u64)> = series
                .iter()
                .flat_map(|(id, ts)| ts.iter().map(move |&t| (t, *id)))
                .collect();
            all.sort();
            for (t, id) in all {
                one.token(id, t);
            }
            bulk.tokens(0, &series[0].1[..1]);
            bulk.tokens(0, &series[0].1[1..]);
            bulk.tokens(0, &[]);
            bulk.tokens(1, &series[1].1);
            bulk.tokens(2, &series[2].1);
            for c in [&mut one, &mut bulk] {
                for id in 0..3 {
                    assert!(c.terminal(id, SimTime(100), Outcome::Completed));
                }
            }
            let (a, ga) = one.finish();
            let (b, gb) = bulk.finish();
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            let runs: Vec<(u64, u64)> = gb.runs().collect();
            assert_eq!(ga.runs().collect::<Vec<_>>(), runs);
            // Cohort gaps only: 5, 15 from request 0; 1, 6, 13 from request 2.
            assert_eq!(runs, vec![(1, 1), (5, 1), (6, 1), (13, 1), (15, 1)]);
            let seen = |r: &RequestRecord| (r.first_token_ns, r.last_token_ns, r.tokens);
            assert_eq!(
                [seen(&b[0]), seen(&b[1]), seen(&b[2])],
                [(10, 30, 3), (12, 20, 2), (40, 60, 4)]
            );
        }
    }
}
