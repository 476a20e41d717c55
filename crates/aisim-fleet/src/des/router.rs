//! Routers of the fleet DES: which pool a request goes to.

use std::collections::BTreeMap;

use rand_core::RngCore;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use super::request::FleetRequest;
use crate::workload::Category;
use crate::FleetError;

/// What a router sees of each pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolView {
    /// Largest total length the pool serves.
    pub max_ctx: u32,
    /// Instances.
    pub instances: u64,
    /// Slots per instance.
    pub slots: u64,
    /// Requests running.
    pub active: u64,
    /// Requests queued.
    pub queued: u64,
}

/// A routing decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Route {
    /// To this pool, unchanged.
    Pool(usize),
    /// To this pool, compressed to this prompt length, paying this many seconds.
    Compressed {
        /// Pool index.
        pool: usize,
        /// New prompt length.
        l_in: u32,
        /// Extra TTFT, s.
        latency_s: f64,
    },
}

/// The built-in routers (by name in a fleet file or on the command line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RouterSpec {
    /// Total ≤ threshold → smallest pool, else largest; without a threshold, the
    /// smallest pool whose `max_ctx` fits.
    Length {
        /// Threshold in total tokens.
        #[serde(default)]
        threshold: Option<u64>,
    },
    /// Totals in `(b_short, γ·b_short]` of a safe category are compressed to
    /// `l_in = b_short − l_out` and sent short; code goes long.
    CompressRoute {
        /// Short-pool threshold.
        b_short: u64,
        /// Compression band.
        gamma: f64,
        /// Added to TTFT, ms.
        #[serde(default = "default_compress_ms")]
        compress_latency_ms: f64,
    },
    /// Short unless the short pool's (active + queued) / slots reaches the threshold.
    Spillover {
        /// Load threshold (0.85).
        #[serde(default = "default_spill")]
        threshold: f64,
    },
    /// Lowest (active + queued) / slots among pools that fit.
    LeastLoaded,
    /// Request model id → pool id; others to `fallback`.
    Model {
        /// Model → pool id.
        map: BTreeMap<String, String>,
        /// Pool id for unknown models.
        fallback: String,
    },
    /// Category → pool id (a classifier's output; the library takes any function).
    Semantic {
        /// Category → pool id.
        map: BTreeMap<String, String>,
        /// Pool id for categories not in the map.
        fallback: String,
    },
    /// A pool that fits, uniformly at random (seeded).
    Random,
}

fn default_compress_ms() -> f64 {
    3.0
}
fn default_spill() -> f64 {
    0.85
}

impl RouterSpec {
    /// Checks the parameters, and that every pool named is in `pool_ids`.
    pub fn validate(&self, pool_ids: &[&str]) -> Result<(), FleetError> {
        let named = |field: &'static str, id: &str| {
            if pool_ids.contains(&id) {
                Ok(())
            } else {
                Err(FleetError::invalid(
                    field,
                    id,
                    format!("names no pool (pools: {})", pool_ids.join(", ")),
                ))
            }
        };
        match self {
            RouterSpec::CompressRoute {
                b_short,
                gamma,
                compress_latency_ms,
            } => {
                crate::validate::count("router.b_short", *b_short, u32::MAX as u64)?;
                crate::validate::within("router.gamma", *gamma, 1.0, f64::MAX)?;
                crate::validate::non_negative("router.compress_latency_ms", *compress_latency_ms)
            }
            RouterSpec::Spillover { threshold } => {
                crate::validate::positive("router.threshold", *threshold)
            }
            RouterSpec::Model { map, fallback } => {
                for id in map.values() {
                    named("router.map", id)?;
                }
                named("router.fallback", fallback)
            }
            RouterSpec::Semantic { map, fallback } => {
                for (category, id) in map {
                    if !CATEGORIES.iter().any(|c| category_name(*c) == category) {
                        return Err(FleetError::invalid(
                            "router.map",
                            category,
                            "is no category (prose, code, rag)",
                        ));
                    }
                    named("router.map", id)?;
                }
                named("router.fallback", fallback)
            }
            RouterSpec::Length { .. } | RouterSpec::LeastLoaded | RouterSpec::Random => Ok(()),
        }
    }
}

const CATEGORIES: [Category; 3] = [Category::Prose, Category::Code, Category::Rag];

fn category_name(c: Category) -> &'static str {
    match c {
        Category::Prose => "prose",
        Category::Code => "code",
        Category::Rag => "rag",
    }
}

/// Chooses a pool per request.
pub trait Router {
    /// The route of `req`, or `None` when no pool can serve it.
    fn route(&mut self, req: &FleetRequest, pools: &[PoolView]) -> Option<Route>;
}

/// A router built from a [`RouterSpec`]; `pool_ids` name the pools in order.
pub fn build_router(spec: &RouterSpec, pool_ids: &[String], seed: u64) -> Box<dyn Router> {
    Box::new(BuiltIn {
        spec: spec.clone(),
        ids: pool_ids.to_vec(),
        rng: rand_core::SeedableRng::seed_from_u64(seed ^ 0x000f_1ee7),
    })
}

struct BuiltIn {
    spec: RouterSpec,
    ids: Vec<String>,
    rng: Pcg64,
}

fn fits(p: &PoolView, total: u64) -> bool {
    total <= p.max_ctx as u64
}

/// Pools by `max_ctx` (smallest first), ties by index.
fn by_size(pools: &[PoolView]) -> Vec<usize> {
    let mut v: Vec<usize> = (0..pools.len()).collect();
    v.sort_by_key(|&i| (pools[i].max_ctx, i));
    v
}

fn load(p: &PoolView) -> f64 {
    (p.active + p.queued) as f64 / (p.instances * p.slots).max(1) as f64
}

impl BuiltIn {
    fn pool_named(&self, id: &str) -> Option<usize> {
        self.ids.iter().position(|x| x == id)
    }
}

impl Router for BuiltIn {
    fn route(&mut self, req: &FleetRequest, pools: &[PoolView]) -> Option<Route> {
        let total = req.l_in as u64 + req.l_out as u64;
        let order = by_size(pools);
        let smallest_fit = order.iter().copied().find(|&i| fits(&pools[i], total));
        let largest = *order.last()?;
        let pick = match &self.spec {
            RouterSpec::Length { threshold: Some(t) } => {
                if total <= *t {
                    order[0]
                } else {
                    largest
                }
            }
            RouterSpec::Length { threshold: None } => smallest_fit?,
            RouterSpec::CompressRoute {
                b_short,
                gamma,
                compress_latency_ms,
            } => {
                let short = order[0];
                if total <= *b_short {
                    short
                } else if (total as f64) <= gamma * *b_short as f64
                    && req.category != Category::Code
                    && *b_short > req.l_out as u64
                {
                    return Some(Route::Compressed {
                        pool: short,
                        l_in: (*b_short - req.l_out as u64) as u32,
                        latency_s: compress_latency_ms / 1e3,
                    });
                } else {
                    largest
                }
            }
            RouterSpec::Spillover { threshold } => {
                let short = order[0];
                if fits(&pools[short], total) && load(&pools[short]) < *threshold {
                    short
                } else {
                    smallest_fit.filter(|&i| i != short).unwrap_or(largest)
                }
            }
            RouterSpec::LeastLoaded => order
                .iter()
                .copied()
                .filter(|&i| fits(&pools[i], total))
                .min_by(|&a, &b| load(&pools[a]).total_cmp(&load(&pools[b])).then(a.cmp(&b)))?,
            RouterSpec::Model { map, fallback } => {
                let id = req
                    .model
                    .as_deref()
                    .and_then(|m| map.get(m))
                    .unwrap_or(fallback);
                self.pool_named(id)?
            }
            RouterSpec::Semantic { map, fallback } => {
                let id = map.get(category_name(req.category)).unwrap_or(fallback);
                self.pool_named(id)?
            }
            RouterSpec::Random => {
                let ok: Vec<usize> = (0..pools.len())
                    .filter(|&i| fits(&pools[i], total))
                    .collect();
                *ok.get((self.rng.next_u64() % ok.len().max(1) as u64) as usize)?
            }
        };
        Some(Route::Pool(pick))
    }
}
