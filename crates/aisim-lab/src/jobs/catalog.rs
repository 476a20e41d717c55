//! The catalog jobs: `profiles` (hardware, models, GPU profiles and the
//! built-in workloads) and `cache-lab` (the prefix-cache lab).

use aisim_core::cache_lab::{CacheLabRun, START_REQUESTS};
use aisim_core::profile::Catalog;
use aisim_fleet::cdf::WorkloadSummary;
use serde::{Deserialize, Serialize};

use super::{JobError, Version};

/// `aisim profiles`: no parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProfilesRequest {
    /// Request version.
    pub version: Version,
}

/// Everything `aisim profiles` lists: the engine catalogs and the built-in workloads.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// Hardware, models, profiles.
    #[serde(flatten)]
    pub catalog: Catalog,
    /// Built-in workload CDFs.
    pub workloads: Vec<WorkloadSummary>,
}

/// Runs `profiles`.
pub fn profiles(_: &ProfilesRequest) -> Listing {
    Listing {
        catalog: aisim_core::profile::catalog_summary(),
        workloads: aisim_fleet::cdf::builtin_summaries(),
    }
}

/// `aisim cache-lab`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheLabRequest {
    /// Request version.
    pub version: Version,
    /// Entries the LRU prefix cache holds (one session's prefix each).
    pub capacity: u64,
    /// Sessions: request i reads the prefix of session i mod S.
    pub sessions: u64,
    /// Requests played from an empty cache before the steps (at most 4096).
    pub requests: u64,
    /// Requests added after that, one at a time (requests + steps at most 4096).
    pub steps: u64,
}

impl Default for CacheLabRequest {
    fn default() -> CacheLabRequest {
        CacheLabRequest {
            version: Version::CURRENT,
            capacity: 4,
            sessions: 4,
            requests: START_REQUESTS,
            steps: 0,
        }
    }
}

/// Runs `cache-lab`.
pub fn cache_lab(r: &CacheLabRequest) -> Result<CacheLabRun, JobError> {
    Ok(CacheLabRun::play(
        r.capacity, r.sessions, r.requests, r.steps,
    )?)
}
