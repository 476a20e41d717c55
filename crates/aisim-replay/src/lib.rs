//! # aisim-replay: deterministic replay of request traces
//!
//! Replays a request trace (or a generated workload) through simulated serving
//! engines from [`aisim_core`] on a virtual clock: an event heap, no async
//! runtime, no threads, no sleeping. A [`ReplaySpec`] describes the whole run;
//! a [`Replayer`] runs it with the placement and scaling policies of a
//! [`policy::ReplayComposition`] and returns a [`ReplayReport`].
//!
//! ```
//! use aisim_replay::{ReplaySpec, Replayer, policy::SpecComposition};
//! use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, WorkloadSpec, TopologySpec};
//!
//! let spec = ReplaySpec {
//!     workload: WorkloadSpec::Synthetic(SyntheticSpec {
//!         requests: 100,
//!         input: LengthSpec::Fixed { tokens: 512 },
//!         output: LengthSpec::Fixed { tokens: 64 },
//!         arrival: ArrivalSpec::Poisson { rate: 20.0 },
//!         prefix_groups: 0, prefix_tokens: 0, turns: 1, think_ms: 0.0, trace_block_size: 512, total_cdf: None,
//!     }),
//!     topology: TopologySpec::Aggregated { workers: 2 },
//!     ..ReplaySpec::default()
//! };
//! let out = Replayer::new(spec, SpecComposition).unwrap().run().unwrap();
//! assert_eq!(out.report.outcomes.completed, 100);
//! ```

#![warn(missing_docs)]

mod call_log;
pub mod collector;
pub mod curves;
pub mod distribution;
mod error;
pub mod event;
pub mod frontend;
mod gap_table;
pub mod gaps;
pub mod per_request;
pub mod policy;
pub mod record;
mod replayer;
pub mod report;
pub mod runtime;
pub mod seeds_summary;
pub mod spec;
pub mod tally;
pub mod timeseries;
pub mod trace;
pub mod workload;

pub use aisim_core::{sketch, summary as metrics};
pub use aisim_core::{SimDuration, SimTime};
pub use error::ReplayError;
pub use replayer::{ReplayOutput, Replayer};
pub use report::ReplayReport;
pub use spec::ReplaySpec;

/// Version of the replay spec and report schema.
pub const SCHEMA_VERSION: u32 = 1;
