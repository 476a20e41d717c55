//! # aisim-replay: deterministic replay of request traces
//!
//! Replays a trace through simulated engines on a virtual clock. Filled by the
//! replay issue; the engines come from [`aisim_core`].
//!
//! ```
//! assert_eq!(aisim_replay::SCHEMA_VERSION, 1);
//! ```

#![warn(missing_docs)]

/// Version of the replay spec and report schema.
pub const SCHEMA_VERSION: u32 = 1;
