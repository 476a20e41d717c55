//! Constant pass times: for tests with exact expectations and for back-of-envelope runs.

use super::{PassShape, PassTime, TimingModel};
use crate::error::CoreError;

/// `prefill_ms` per pass that computes prompt tokens plus `decode_ms` per pass
/// that has decoding requests.
#[derive(Debug, Clone, Copy)]
pub struct FixedTiming {
    prefill_ms: f64,
    decode_ms: f64,
}

impl FixedTiming {
    /// Both values must be finite and non-negative.
    pub fn new(prefill_ms: f64, decode_ms: f64) -> Result<FixedTiming, CoreError> {
        for (field, v) in [
            ("timing.prefill_ms", prefill_ms),
            ("timing.decode_ms", decode_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(CoreError::config(
                    field,
                    v,
                    "must be a finite number of milliseconds, 0 or more",
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
