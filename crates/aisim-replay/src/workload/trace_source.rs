//! A trace as a workload: timestamps normalized so the first request arrives at
//! 0 and divided by the speedup; sessions chained by `parent_chat_id` (Bailian)
//! or by a shared `session_id`, in timestamp order.

use std::collections::HashMap;
use std::sync::Arc;

use aisim_core::{Request, RequestId, SessionId, SimDuration, SimTime};

use super::clock::{checked_ms, checked_sum, ms_to_duration, CLOCK_RANGE};
use super::source::{Offer, Workload};
use crate::error::ReplayError;
use crate::per_request::{TraceRow, TraceRows};
use crate::trace::{float, row_error, TraceData, TraceNotes, TraceRecord};

const NONE: u32 = u32::MAX;

/// Requests from a trace file.
#[derive(Debug)]
pub struct TraceWorkload {
    records: Vec<TraceRecord>,
    trace_block_size: u32,
    planned: Vec<SimTime>,
    next_of: Vec<u32>,
    session_of: Vec<Option<u64>>,
    roots: Vec<u32>,
    cursor: usize,
    handed: u64,
    speedup: f64,
    skipped: u64,
    notes: TraceNotes,
    session_names: Vec<Arc<str>>,
    /// When the records' hash ids stay in a trace shared with others (the
    /// parts of a split run): each request copies its own as it is offered,
    /// and drops them once its engine has hashed them.
    shared: Option<Arc<TraceData>>,
}

/// Each session's turns, if every think time were taken in full one after the
/// other from its first arrival, must stay on the clock: the sum is checked
/// once here so no turn is ever planned at a clamped instant.
fn check_session_spans(
    records: &[TraceRecord],
    planned: &[SimTime],
    next_of: &[u32],
    roots: &[u32],
    speedup: f64,
    trace: &TraceData,
) -> Result<(), ReplayError> {
    for &root in roots {
        let mut at = SimDuration(planned[root as usize].0);
        let (mut prev, mut cur) = (root, next_of[root as usize]);
        while cur != NONE {
            let r = &records[cur as usize];
            let gap = planned[cur as usize].since(planned[prev as usize]);
            let think = r.think_ms.map_or(gap, |ms| ms_to_duration(ms / speedup));
            at = checked_sum(at, think.max(gap)).ok_or_else(|| {
                row_error(
                    &trace.path,
                    r.line,
                    trace.format.think_field(),
                    format!(
                        "the session that starts on line {} would plan this turn beyond aisim's clock ({CLOCK_RANGE}) at speedup {}: its think times add up to more",
                        records[root as usize].line,
                        float(speedup)
                    ),
                )
            })?;
            (prev, cur) = (cur, next_of[cur as usize]);
        }
    }
    Ok(())
}

impl TraceWorkload {
    /// Prepares a trace for replay at `speedup`; a time that does not fit
    /// aisim's clock is an error naming its row (or the speedup that
    /// stretched it out of range).
    pub fn new(mut trace: TraceData, speedup: f64) -> Result<TraceWorkload, ReplayError> {
        let records = std::mem::take(&mut trace.records);
        let n = records.len();
        let Some(first) = records
            .iter()
            .min_by(|a, b| a.timestamp_ms.total_cmp(&b.timestamp_ms))
        else {
            return Err(ReplayError::TraceFile {
                path: trace.path,
                reason: "no requests in the trace".into(),
            });
        };
        let (t0, t0_line) = (first.timestamp_ms, first.line);
        let fit = |r: &TraceRecord, field: &str, ms: f64, what: &str| {
            if checked_ms(ms).is_none() {
                return Err(row_error(
                    &trace.path,
                    r.line,
                    field,
                    format!(
                        "{what} is {} ms, beyond aisim's clock ({CLOCK_RANGE})",
                        float(ms)
                    ),
                ));
            }
            checked_ms(ms / speedup).ok_or_else(|| {
                ReplayError::spec(
                    "admission.speedup",
                    format!(
                        "{} stretches line {} of {} (`{field}`: {what} {} ms) beyond aisim's clock ({CLOCK_RANGE})",
                        float(speedup),
                        r.line,
                        trace.path.display(),
                        float(ms)
                    ),
                )
            })
        };
        let ts_field = trace.format.timestamp_field();
        let since_first = format!("the time since the earliest request (line {t0_line})");
        let planned: Vec<SimTime> = records
            .iter()
            .map(|r| fit(r, ts_field, r.timestamp_ms - t0, &since_first).map(|d| SimTime(d.0)))
            .collect::<Result<_, _>>()?;
        let think_field = trace.format.think_field();
        for r in &records {
            if let Some(ms) = r.think_ms {
                fit(r, think_field, ms, "the think time")?;
            }
        }
        let mut next_of = vec![NONE; n];
        let mut follow = vec![false; n];
        let mut session_of: Vec<Option<u64>> = vec![None; n];

        // Bailian: a row whose parent is in the trace continues the parent's session.
        let by_chat: HashMap<i64, u32> = records
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.chat_id.map(|c| (c, i as u32)))
            .collect();
        for (i, r) in records.iter().enumerate() {
            if let Some(&p) = r
                .parent_chat_id
                .filter(|&p| p >= 0)
                .and_then(|p| by_chat.get(&p))
            {
                if next_of[p as usize] == NONE && p as usize != i {
                    next_of[p as usize] = i as u32;
                    follow[i] = true;
                }
            }
        }
        // Shared session ids: consecutive turns in timestamp order.
        // Ties broken by row, so no two keys are equal and an unstable sort
        // gives the one order.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by_key(|&i| (planned[i as usize], i));
        let mut last_in_session: HashMap<u64, u32> = HashMap::new();
        for &i in &order {
            let r = &records[i as usize];
            let Some(s) = r.session else { continue };
            if follow[i as usize] {
                continue;
            }
            if let Some(&prev) = last_in_session.get(&s) {
                if next_of[prev as usize] == NONE {
                    next_of[prev as usize] = i;
                    follow[i as usize] = true;
                }
            }
            last_in_session.insert(s, i);
        }
        // Session identity: the root's index, propagated along each chain.
        let roots: Vec<u32> = order
            .iter()
            .copied()
            .filter(|&i| !follow[i as usize])
            .collect();
        let mut reached = roots.len();
        for &root in &roots {
            if next_of[root as usize] == NONE {
                continue;
            }
            let mut cur = root;
            while cur != NONE {
                session_of[cur as usize] = Some(root as u64);
                cur = next_of[cur as usize];
                reached += usize::from(cur != NONE);
            }
        }
        if reached < n {
            // Every row has at most one turn before it and one after, so the
            // rows no first turn leads to are cycles; the readers refuse
            // cycles of parents, so this one mixes parents and session ids.
            let start = (0..n)
                .find(|&i| follow[i] && session_of[i].is_none())
                .expect("unreached");
            let mut lines = vec![records[start].line.to_string()];
            let mut cur = next_of[start] as usize;
            while cur != start {
                lines.push(records[cur].line.to_string());
                cur = next_of[cur] as usize;
            }
            return Err(row_error(
                &trace.path,
                records[start].line,
                "session_id",
                format!(
                    "the turns on lines {} follow one another in a cycle (their parent_chat_id and session_id links disagree)",
                    lines.join(" -> ")
                ),
            ));
        }
        check_session_spans(&records, &planned, &next_of, &roots, speedup, &trace)?;
        Ok(TraceWorkload {
            records,
            trace_block_size: trace.trace_block_size,
            planned,
            next_of,
            session_of,
            roots,
            cursor: 0,
            handed: 0,
            speedup,
            skipped: trace.skipped_failed,
            notes: trace.notes,
            session_names: trace.session_names,
            shared: None,
        })
    }

    /// A workload of `trace`, shared with others: its requests' hash ids are
    /// copied from it as they are offered, not all at once.
    pub fn shared(trace: Arc<TraceData>, speedup: f64) -> Result<TraceWorkload, ReplayError> {
        let records = trace
            .records
            .iter()
            .map(|r| TraceRecord {
                hash_ids: Vec::new(),
                line: r.line,
                timestamp_ms: r.timestamp_ms,
                input_length: r.input_length,
                output_length: r.output_length,
                session: r.session,
                chat_id: r.chat_id,
                parent_chat_id: r.parent_chat_id,
                think_ms: r.think_ms,
            })
            .collect();
        let without_ids = TraceData {
            path: trace.path.clone(),
            format: trace.format,
            trace_block_size: trace.trace_block_size,
            records,
            skipped_failed: trace.skipped_failed,
            notes: trace.notes,
            session_names: trace.session_names.clone(),
        };
        let mut w = TraceWorkload::new(without_ids, speedup)?;
        w.shared = Some(trace);
        Ok(w)
    }

    fn offer(&mut self, idx: u32, turn: u32, prev: Option<u32>) -> Offer {
        self.handed += 1;
        let i = idx as usize;
        let r = &mut self.records[i];
        let request = Request {
            id: RequestId(i as u64),
            arrival: self.planned[i],
            input_length: r.input_length,
            output_length: r.output_length,
            hash_ids: match &self.shared {
                Some(t) => t.records[i].hash_ids.clone(),
                // Each row is handed out once: take its ids instead of copying them.
                None => std::mem::take(&mut r.hash_ids),
            },
            trace_block_size: self.trace_block_size,
            session: self.session_of[i].map(SessionId),
        };
        Offer {
            request,
            turn,
            trace_at: prev.map(|_| self.planned[i]),
            think: r.think_ms.map(|ms| ms_to_duration(ms / self.speedup)),
            trace_gap: prev.map(|p| self.planned[i].since(self.planned[p as usize])),
        }
    }
}

impl Workload for TraceWorkload {
    fn peek_root(&self) -> Option<SimTime> {
        self.roots
            .get(self.cursor)
            .map(|&i| self.planned[i as usize])
    }

    fn next_root(&mut self) -> Option<Offer> {
        let idx = *self.roots.get(self.cursor)?;
        self.cursor += 1;
        Some(self.offer(idx, 0, None))
    }

    fn next_turn(&mut self, prev: Offer) -> Option<Offer> {
        let p = prev.request.id.0 as u32;
        let next = self.next_of[p as usize];
        (next != NONE).then(|| self.offer(next, prev.turn + 1, Some(p)))
    }

    fn may_have_sessions(&self) -> bool {
        self.next_of.iter().any(|&n| n != NONE)
    }

    fn remaining(&self) -> u64 {
        self.records.len() as u64 - self.handed
    }

    fn skipped_rows(&self) -> u64 {
        self.skipped
    }

    fn notes(&self) -> TraceNotes {
        self.notes
    }

    fn trace_rows(&self) -> Option<TraceRows> {
        Some(trace_rows(&self.records, &self.session_names))
    }
}

/// The rows requests come from, by request id (a trace workload's ids are
/// its records' indices).
pub(crate) fn trace_rows(records: &[TraceRecord], session_names: &[Arc<str>]) -> TraceRows {
    let rows = records.iter().map(|r| TraceRow {
        line: r.line as u64,
        chat_id: r.chat_id,
        session_id: r
            .session
            .and_then(|s| session_names.get(s as usize).cloned()),
    });
    TraceRows(rows.collect())
}

/// Whether a trace workload of `records` may link turns into sessions
/// (judged without building it: any session or parent id counts).
pub(crate) fn may_link_sessions(records: &[TraceRecord]) -> bool {
    records
        .iter()
        .any(|r| r.session.is_some() || r.parent_chat_id.is_some_and(|p| p >= 0))
}
