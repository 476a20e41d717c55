//! Fidelity against real servers: measured runs (`measured`), importing them
//! from per-request measurements (`import`) and from inference-perf's
//! summaries (`inference_perf`), comparing a replay with one
//! (`validate`) and fitting the physics model's coefficients to them
//! (`calibrate`). docs/fidelity.md describes the formats and models.

pub mod aiperf;
mod aiperf_inputs;
pub mod bench_file;
pub mod blis;
pub mod calibrate;
mod error;
pub mod guidellm;
pub mod import;
pub mod inference_perf;
mod json_file;
pub mod measured;
mod optimize;
mod parallel_arrays;
mod prompt_blocks;
mod request_check;
pub mod request_times;
pub mod sglang_bench;
pub mod stats;
pub mod timed_request;
pub mod validate;
pub mod vllm_bench;

pub use error::FidelityError;
