//! The report's `seeds` section: a replay's figures over several seeds. The
//! type lives beside the report that carries it; `aisim-lab` runs the seeds
//! and fills it in.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Most seeds of one run.
pub const MAX_SEEDS: u64 = 10_000;
/// The summary over seeds, in the report's `seeds` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedsReport {
    /// Seeds run.
    pub n: u64,
    /// The first seed (the report's own); the others follow it by one.
    pub first_seed: u64,
    /// Every figure of the report's `SECTIONS`, by its key (the JSON path,
    /// `latency.` dropped: `ttft_ms.p99`), in the report's order.
    pub metrics: SeedMetrics,
}

/// One figure over the seeds. All three are `null` when the figure is
/// `null` (no value, or infinite in the offered view) in any seed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeedMetric {
    /// Mean over the seeds.
    pub mean: Option<f64>,
    /// Lower end of the 95 % interval (cut at 0: every figure is).
    pub ci95_low: Option<f64>,
    /// Upper end of the 95 % interval.
    pub ci95_high: Option<f64>,
}

/// Figures by key, in order (a JSON object in the report's order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SeedMetrics(pub Vec<(String, SeedMetric)>);

impl SeedMetrics {
    /// The figure named `key`.
    pub fn get(&self, key: &str) -> Option<&SeedMetric> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, m)| m)
    }
}

impl Serialize for SeedMetrics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        aisim_core::ordered::serialize_pairs(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for SeedMetrics {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SeedMetrics, D::Error> {
        aisim_core::ordered::deserialize_pairs(d).map(SeedMetrics)
    }
}
