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

    /// `pass_time`'s arithmetic, without a call per pass: most of a
    /// replay's passes come this way.
    fn decode_pass_times(
        &self,
        requests: u32,
        context_tokens: u64,
        kv_capacity_tokens: u64,
        n: u32,
        out: &mut Vec<PassTime>,
    ) {
        let capacity = kv_capacity_tokens.max(1) as f64;
        let mut context = context_tokens;
        out.extend((0..n).map(|_| {
            let decode_ms = if requests == 0 {
                0.0
            } else {
                Self::decode_ms(context as f64 / capacity)
            };
            context += requests as u64;
            PassTime {
                prefill_s: Self::prefill_ms(0) * 1e-3,
                decode_s: decode_ms * 1e-3,
            }
        }));
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
    fn a_stretch_of_decode_passes_is_timed_as_pass_by_pass() {
        for (requests, context, capacity) in [
            (1, 0, 16_384 * 16),
            (3, 100_000, 16_384 * 16),
            (200, 250_000, 262_144), // crosses full occupancy
            (5, 7, 0),               // no capacity: occupancy against 1 token
        ] {
            let mut stretch = Vec::new();
            PolynomialTiming.decode_pass_times(requests, context, capacity, 300, &mut stretch);
            assert_eq!(stretch.len(), 300);
            for (i, t) in stretch.iter().enumerate() {
                let one = PolynomialTiming.pass_time(&PassShape {
                    prefill: &[],
                    decode_requests: requests,
                    decode_context_tokens: context + i as u64 * requests as u64,
                    kv_capacity_tokens: capacity,
                });
                assert_eq!(t.prefill_s.to_bits(), one.prefill_s.to_bits());
                assert_eq!(t.decode_s.to_bits(), one.decode_s.to_bits(), "pass {i}");
            }
        }
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
