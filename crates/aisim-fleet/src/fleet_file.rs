//! Fleet files for `simulate-fleet`: pools, a router and a traffic mix.

use std::collections::BTreeMap;
use std::path::Path;

use aisim_core::profile::resolve_profile;
use serde::Deserialize;

use crate::cdf::Cdf;
use crate::des::{generate, Arrivals, FleetRequest, PoolSpec, RouterSpec};
use crate::error::FleetError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolEntry {
    id: String,
    gpu: String,
    n_gpus: u64,
    max_ctx: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadEntry {
    cdf: String,
    lam_frac: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetFile {
    pools: Vec<PoolEntry>,
    #[serde(default)]
    router: Option<RouterSpec>,
    workloads: BTreeMap<String, WorkloadEntry>,
}

/// A loaded fleet file.
#[derive(Debug, Clone)]
pub struct FleetPlan {
    /// Pools.
    pub pools: Vec<PoolSpec>,
    /// Router (default: each workload to the pool of the same id, else the first).
    pub router: RouterSpec,
    /// Workload name → (CDF, share of the rate).
    pub workloads: Vec<(String, Cdf, f64)>,
}

impl FleetPlan {
    /// Reads and validates a fleet file.
    pub fn from_file(path: &Path) -> Result<FleetPlan, FleetError> {
        let file_err = |reason: String| FleetError::File {
            path: path.into(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|source| FleetError::Io {
            path: path.into(),
            source,
        })?;
        let f: FleetFile = serde_json::from_str(&text)
            .map_err(|e| file_err(format!("line {} column {}: {e}", e.line(), e.column())))?;
        if f.pools.is_empty() {
            return Err(file_err(
                "`pools` is empty: a fleet needs at least one pool".into(),
            ));
        }
        let mut pools = Vec::new();
        for (k, p) in f.pools.iter().enumerate() {
            let profile = resolve_profile(&p.gpu)
                .map_err(|e| file_err(format!("pools[{k}] ({}): `gpu`: {e}", p.id)))?;
            if profile.n_slots(p.max_ctx) == 0 {
                return Err(file_err(format!(
                    "pools[{k}] ({}): `max_ctx` {} leaves no KV slot on {}",
                    p.id, p.max_ctx, p.gpu
                )));
            }
            pools.push(PoolSpec {
                id: p.id.clone(),
                profile,
                n_gpus: p.n_gpus,
                max_ctx: p.max_ctx,
            });
        }
        let ids: Vec<&str> = pools.iter().map(|p| p.id.as_str()).collect();
        let mut workloads = Vec::new();
        for (name, w) in &f.workloads {
            if !(w.lam_frac.is_finite() && w.lam_frac >= 0.0) {
                return Err(file_err(format!(
                    "workloads.{name}: `lam_frac` {} must be 0 or more",
                    w.lam_frac
                )));
            }
            workloads.push((name.clone(), Cdf::resolve(&w.cdf)?, w.lam_frac));
        }
        if workloads.is_empty() {
            return Err(file_err("`workloads` is empty".into()));
        }
        let router = match f.router {
            Some(r) => r,
            None => RouterSpec::Model {
                map: workloads
                    .iter()
                    .filter(|(n, ..)| ids.contains(&n.as_str()))
                    .map(|(n, ..)| (n.clone(), n.clone()))
                    .collect(),
                fallback: pools[0].id.clone(),
            },
        };
        for (field, id) in match &router {
            RouterSpec::Model { map, fallback } | RouterSpec::Semantic { map, fallback } => map
                .values()
                .map(|v| ("router.map", v.as_str()))
                .chain([("router.fallback", fallback.as_str())])
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        } {
            if !ids.contains(&id) {
                return Err(file_err(format!(
                    "`{field}` names pool `{id}`, which is missing from `pools` ({})",
                    ids.join(", ")
                )));
            }
        }
        Ok(FleetPlan {
            pools,
            router,
            workloads,
        })
    }

    /// `n` requests at total rate `lam`: each workload's share, tagged with its
    /// name as the model id, merged by arrival time.
    pub fn requests(&self, lam: f64, n: u64, arrivals: &Arrivals, seed: u64) -> Vec<FleetRequest> {
        let total_frac: f64 = self.workloads.iter().map(|w| w.2).sum::<f64>().max(1e-12);
        let mut all = Vec::new();
        for (k, (name, cdf, frac)) in self.workloads.iter().enumerate() {
            let share = frac / total_frac;
            let count = (n as f64 * share).round() as u64;
            if count == 0 {
                continue;
            }
            let mut reqs = generate(
                cdf,
                lam * share,
                count,
                arrivals,
                seed.wrapping_add(k as u64 * 7919),
            );
            for r in &mut reqs {
                r.model = Some(name.clone());
            }
            all.extend(reqs);
        }
        all.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        all
    }
}
