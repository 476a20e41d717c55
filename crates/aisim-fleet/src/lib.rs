//! # aisim-fleet: fleet planning
//!
//! Queueing-theory sizing of GPU pools, verified by simulation. Filled by the
//! fleet issue; profiles come from [`aisim_core::profile`].
//!
//! ```
//! assert_eq!(aisim_fleet::SCHEMA_VERSION, 1);
//! ```

#![warn(missing_docs)]

/// Version of the fleet report schema.
pub const SCHEMA_VERSION: u32 = 1;
