//! Per-request measurements lined up with a replay's requests. A measured
//! run whose `requests` file is in the generic import shape gives
//! calibration every request's TTFT and E2E, not only the summary: the
//! summary's few statistics cannot tell apart coefficients that trade
//! against each other on average, each request's latencies can.

use std::path::{Path, PathBuf};

use super::import::read_generic;
use super::timed_request::trace_order;
use super::FidelityError;
use aisim_core::summary::ms;
use aisim_replay::collector::{Outcome, RequestRecord};

/// One measured request: its latencies (ms) and what identifies it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestTimes {
    /// Line of the per-request file.
    pub line: usize,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Output tokens.
    pub output_tokens: u32,
    /// First token − send, ms.
    pub ttft_ms: f64,
    /// End − send, ms.
    pub e2e_ms: f64,
    /// Whether it completed: one that did not is replayed (it is in the
    /// trace) but has no latency to compare.
    pub completed: bool,
}

/// The per-request file of a run (generic shape), in trace order.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRequests {
    /// The file.
    pub path: PathBuf,
    /// Its requests, in trace order.
    pub requests: Vec<RequestTimes>,
}

impl MeasuredRequests {
    /// Reads a per-request file (JSONL or CSV, the generic import shape).
    pub fn read(path: &Path) -> Result<MeasuredRequests, FidelityError> {
        let timed = read_generic(path)?;
        let requests = trace_order(&timed)
            .into_iter()
            .map(|r| RequestTimes {
                line: r.line,
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                ttft_ms: (r.first_token_s - r.send_s) * 1e3,
                e2e_ms: (r.end_s - r.send_s) * 1e3,
                completed: r.completed(),
            })
            .collect();
        Ok(MeasuredRequests {
            path: path.to_path_buf(),
            requests,
        })
    }

    /// Simulated `(ttft_ms, e2e_ms)` of each measured request, from a
    /// replay's `records` (every request, by id): the measured cohort in id
    /// order is the measured file in trace order. `None` for a request the
    /// replay did not complete. The lengths must agree request by request.
    pub fn simulated(
        &self,
        records: &[RequestRecord],
    ) -> Result<Vec<Option<(f64, f64)>>, FidelityError> {
        let cohort: Vec<&RequestRecord> = records.iter().filter(|r| r.in_cohort).collect();
        if cohort.len() != self.requests.len() {
            return Err(FidelityError::field(
                &self.path,
                "(rows)",
                format!(
                    "{} measured requests but the run's workload has {} measured ones: the file must be the run's requests",
                    self.requests.len(),
                    cohort.len()
                ),
            ));
        }
        self.requests
            .iter()
            .zip(cohort)
            .map(|(m, r)| {
                for (field, want, got) in [
                    ("input_tokens", m.input_tokens, r.input_length),
                    ("output_tokens", m.output_tokens, r.output_length),
                ] {
                    if want != got {
                        return Err(FidelityError::field(
                            &self.path,
                            format!("line {}: {field}", m.line),
                            format!(
                                "{want}: the workload's request {} has {got} (the file must list the workload's requests in arrival order)",
                                r.id
                            ),
                        ));
                    }
                }
                Ok(latencies(r))
            })
            .collect()
    }
}

/// A completed request's `(ttft_ms, e2e_ms)` from its planned arrival.
fn latencies(r: &RequestRecord) -> Option<(f64, f64)> {
    if r.outcome != Outcome::Completed {
        return None;
    }
    let first = RequestRecord::at(r.first_token_ns)?;
    let end = RequestRecord::at(r.terminal_ns)?;
    Some((ms(first - r.planned_ns), ms(end - r.planned_ns)))
}
