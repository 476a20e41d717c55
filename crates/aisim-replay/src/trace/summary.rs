//! What a trace holds, in figures: rows, span, sessions and the lengths'
//! spread (the service shows it for an uploaded trace).

use serde::{Deserialize, Serialize};

use super::{TraceData, TraceFormat};

/// A trace in figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Format read.
    pub format: TraceFormat,
    /// Requests (rows replayed).
    pub rows: u64,
    /// Rows skipped on purpose (BurstGPT failed requests).
    pub skipped_failed: u64,
    /// Last arrival minus the first, seconds (trace clock).
    pub span_s: f64,
    /// Distinct sessions (0 when the format has none).
    pub sessions: u64,
    /// Prompt lengths, tokens.
    pub input_tokens: Spread,
    /// Output lengths, tokens.
    pub output_tokens: Spread,
}

/// A length's spread: nearest-rank percentiles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Smallest.
    pub min: u32,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u32,
    /// 99th percentile.
    pub p99: u32,
    /// Largest.
    pub max: u32,
}

impl Spread {
    fn of(mut v: Vec<u32>) -> Spread {
        v.sort_unstable();
        let n = v.len().max(1);
        let rank = |q: f64| v[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Spread {
            min: v[0],
            mean: v.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64,
            p50: rank(0.5),
            p99: rank(0.99),
            max: v[v.len() - 1],
        }
    }
}

impl TraceSummary {
    /// The figures of a trace read (it holds at least one row).
    pub fn of(t: &TraceData) -> TraceSummary {
        let r = &t.records;
        let (lo, hi) = r
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x.timestamp_ms), hi.max(x.timestamp_ms))
            });
        let mut sessions: Vec<u64> = r.iter().filter_map(|x| x.session).collect();
        sessions.sort_unstable();
        sessions.dedup();
        let chats = r
            .iter()
            .filter(|x| x.parent_chat_id.is_none_or(|p| p < 0) && x.chat_id.is_some());
        let sessions = if sessions.is_empty() {
            chats.count() as u64
        } else {
            sessions.len() as u64
        };
        TraceSummary {
            format: t.format,
            rows: r.len() as u64,
            skipped_failed: t.skipped_failed,
            span_s: (hi - lo) / 1000.0,
            sessions,
            input_tokens: Spread::of(r.iter().map(|x| x.input_length).collect()),
            output_tokens: Spread::of(r.iter().map(|x| x.output_length).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_trace_from;

    #[test]
    fn a_small_trace_in_figures() {
        let text = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [], \"session_id\": \"a\"}\n\
                    {\"timestamp\": 1500, \"input_length\": 30, \"output_length\": 3, \"hash_ids\": [], \"session_id\": \"b\"}\n\
                    {\"timestamp\": 2500, \"input_length\": 20, \"output_length\": 2, \"hash_ids\": [], \"session_id\": \"a\"}\n";
        let t = read_trace_from(
            text.as_bytes(),
            std::path::Path::new("t.jsonl"),
            TraceFormat::Mooncake,
            None,
        )
        .unwrap();
        let s = TraceSummary::of(&t);
        assert_eq!(s.rows, 3);
        assert_eq!(s.span_s, 2.5);
        assert_eq!(s.sessions, 2);
        assert_eq!(
            s.input_tokens,
            Spread {
                min: 10,
                mean: 20.0,
                p50: 20,
                p99: 30,
                max: 30
            }
        );
        assert_eq!(s.output_tokens.max, 3);
    }
}
