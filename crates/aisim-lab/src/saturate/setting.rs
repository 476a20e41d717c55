//! `Setting`, a point of the searched axis in both units. The probe makes
//! settings and returns `SaturateError`, whose failed-probe variant names
//! one: the type lives below both, so the error does not import the probe.

use serde::{Deserialize, Serialize};

/// A point of the axis in both units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Arrivals per second the workload offers (first turns per second for a
    /// generated workload with sessions).
    pub rate_rps: f64,
    /// `admission.speedup` of the run.
    pub speedup: f64,
}
