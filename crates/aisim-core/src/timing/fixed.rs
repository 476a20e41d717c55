//! Constant pass times: for tests with exact expectations and for back-of-envelope runs.

use super::pass::{PassShape, PassTime, TimingModel};
use crate::error::CoreError;
use crate::SimDuration;

/// `prefill_ms` per pass that computes prompt tokens plus `decode_ms` per pass
/// that has decoding requests.
#[derive(Debug, Clone, Copy)]
pub struct FixedTiming {
    prefill_ms: f64,
    decode_ms: f64,
}

impl FixedTiming {
    /// Both values must be finite, non-negative and within aisim's clock (a
    /// pass longer than 2^63 ns could never end).
    pub fn new(prefill_ms: f64, decode_ms: f64) -> Result<FixedTiming, CoreError> {
        for (field, v) in [
            ("timing.prefill_ms", prefill_ms),
            ("timing.decode_ms", decode_ms),
        ] {
            if SimDuration::from_secs_f64(v * 1e-3).is_none() {
                return Err(CoreError::config(
                    field,
                    v,
                    "must be a finite number of milliseconds, 0 or more, within aisim's clock (2^63 ns, 292 years)",
                ));
            }
        }
        Ok(FixedTiming {
            prefill_ms,
            decode_ms,
        })
    }
}

impl TimingModel for FixedTiming {
    fn name(&self) -> &str {
        "fixed"
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        PassTime {
            prefill_s: if shape.prefill.is_empty() {
                0.0
            } else {
                self.prefill_ms * 1e-3
            },
            decode_s: if shape.decode_requests == 0 {
                0.0
            } else {
                self.decode_ms * 1e-3
            },
        }
    }
}
