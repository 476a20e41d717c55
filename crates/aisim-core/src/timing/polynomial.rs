//! NVIDIA Dynamo mocker's uncalibrated polynomial baseline.

use super::pass::{PassShape, PassTime, TimingModel};

/// `prefill_ms = 4.209989e-07·T² + 1.518344e-02·T + 16.50142` for `T` prompt
/// tokens in the pass (0 for none); `decode_ms = max(1, -25.74·p² + 54.01·p + 5.74)`
/// with `p` the decode requests' context over the KV capacity (0 for none).
#[derive(Debug, Clone, Copy, Default)]
pub struct PolynomialTiming;

impl PolynomialTiming {
    /// Milliseconds to compute `tokens` prompt tokens in one pass.
    pub fn prefill_ms(tokens: u64) -> f64 {
        if tokens == 0 {
            return 0.0;
        }
        let t = tokens as f64;
        4.209989e-07 * t * t + 1.518344e-02 * t + 16.50142
    }

    /// Milliseconds of a decode pass at KV occupancy `p` (clamped to 1).
    pub fn decode_ms(occupancy: f64) -> f64 {
        let p = occupancy.min(1.0);
        (-25.74 * p * p + 54.01 * p + 5.74).max(1.0)
    }
}

impl TimingModel for PolynomialTiming {
    fn name(&self) -> &str {
        "polynomial"
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        let decode_ms = if shape.decode_requests == 0 {
            0.0
        } else {
            Self::decode_ms(
                shape.decode_context_tokens as f64 / shape.kv_capacity_tokens.max(1) as f64,
            )
        };
        PassTime {
            prefill_s: Self::prefill_ms(shape.prefill_tokens()) * 1e-3,
            decode_s: decode_ms * 1e-3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::PrefillChunk;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn check_values() {
        assert!(close(PolynomialTiming::prefill_ms(1024), 32.49, 0.005));
        assert_eq!(PolynomialTiming::prefill_ms(0), 0.0);
        assert!(close(PolynomialTiming::decode_ms(0.5), 26.31, 0.005));
        assert!(close(PolynomialTiming::decode_ms(0.0), 5.74, 1e-12));
        assert!(close(PolynomialTiming::decode_ms(1.0), 34.01, 1e-9));
        assert!(
            close(PolynomialTiming::decode_ms(3.0), 34.01, 1e-9),
            "occupancy clamps at 1"
        );
        // Half occupancy of the default pool (16,384 blocks of 64 tokens), plus a
        // 1024-token prefill in the same pass.
        let chunks = [PrefillChunk {
            context_before: 0,
            tokens: 1024,
        }];
        let shape = PassShape {
            prefill: &chunks,
            decode_requests: 10,
            decode_context_tokens: 16_384 * 64 / 2,
            kv_capacity_tokens: 16_384 * 64,
        };
        let t = PolynomialTiming.pass_time(&shape);
        assert!(close(
            t.prefill_s * 1e3 + t.decode_s * 1e3,
            32.4907 + 26.31,
            0.01
        ));
    }
}
