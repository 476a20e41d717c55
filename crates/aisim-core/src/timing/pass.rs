//! What a timing model is asked and what it answers: the shape of a pass,
//! its time, and the `TimingModel` trait. Every model file implements the
//! trait and `mod.rs` builds the models, so these live below both.

use std::fmt::Debug;

/// Prompt work of one request in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefillChunk {
    /// Tokens already in the request's KV before this pass (cached prefix or earlier chunks).
    pub context_before: u32,
    /// Prompt tokens computed in this pass.
    pub tokens: u32,
}

/// What one pass (of one rank) computes.
#[derive(Debug, Clone, Copy)]
pub struct PassShape<'a> {
    /// Requests computing prompt tokens, in batch order.
    pub prefill: &'a [PrefillChunk],
    /// Requests generating one token.
    pub decode_requests: u32,
    /// Sum of the context lengths (prompt + generated) of the decoding requests.
    pub decode_context_tokens: u64,
    /// KV capacity of the rank in tokens (for occupancy-based models).
    pub kv_capacity_tokens: u64,
}

impl PassShape<'_> {
    /// Prompt tokens computed in the pass.
    pub fn prefill_tokens(&self) -> u64 {
        self.prefill.iter().map(|c| c.tokens as u64).sum()
    }
}

/// A pass duration split into its prompt and decode parts (seconds), so the
/// engine can apply `decode_speedup_ratio` to the decode part only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PassTime {
    /// Seconds spent on prompt tokens.
    pub prefill_s: f64,
    /// Seconds spent on decoding.
    pub decode_s: f64,
}

impl PassTime {
    /// `seconds` for a whole pass, booked as prefill time when the pass
    /// computes prompt tokens and as decode time otherwise (so
    /// `decode_speedup_ratio` applies to pure decode passes).
    pub fn whole_pass(shape: &PassShape<'_>, seconds: f64) -> PassTime {
        if shape.prefill.is_empty() {
            PassTime {
                prefill_s: 0.0,
                decode_s: seconds,
            }
        } else {
            PassTime {
                prefill_s: seconds,
                decode_s: 0.0,
            }
        }
    }
}

/// A model of how long a pass takes. Implement it to plug in a model of your own.
///
/// ```
/// use aisim_core::timing::{PassShape, PassTime, TimingModel};
/// #[derive(Debug)]
/// struct TenMsPerPass;
/// impl TimingModel for TenMsPerPass {
///     fn name(&self) -> &str { "ten-ms" }
///     fn pass_time(&self, _shape: &PassShape<'_>) -> PassTime {
///         PassTime { prefill_s: 0.0, decode_s: 0.010 }
///     }
/// }
/// ```
pub trait TimingModel: Debug + Send + Sync {
    /// Short name for reports and errors.
    fn name(&self) -> &str;
    /// Duration of a pass. NaN, infinite or negative values are reported as errors
    /// by the engine.
    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime;

    /// The times of `n` passes that only decode, appended to `out`: the
    /// first of `requests` requests with `context_tokens` of context, each
    /// next one with `requests` more (a token each). The engine asks for
    /// stretches of such passes at once; a model overrides this when it
    /// can answer a stretch cheaper than pass by pass, and must give what
    /// `pass_time` gives for each.
    fn decode_pass_times(
        &self,
        requests: u32,
        context_tokens: u64,
        kv_capacity_tokens: u64,
        n: u32,
        out: &mut Vec<PassTime>,
    ) {
        let mut context = context_tokens;
        for _ in 0..n {
            out.push(self.pass_time(&PassShape {
                prefill: &[],
                decode_requests: requests,
                decode_context_tokens: context,
                kv_capacity_tokens,
            }));
            context += requests as u64;
        }
    }
}
