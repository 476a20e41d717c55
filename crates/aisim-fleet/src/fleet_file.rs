//! Fleet files for `simulate-fleet`: pools, a router and a traffic mix.
//!
//! Every field is checked while the JSON is parsed, so an error carries the
//! file, the line and column, and the field: a pool's `gpu`, `n_gpus` and
//! `max_ctx` at the end of that pool, duplicate pool ids at the end of
//! `pools`, a workload's `cdf` and `lam_frac` and duplicate workload names at
//! that workload, no traffic at all at the end of `workloads`; what needs the
//! whole file (the router's pool and model names) names the field alone.

use std::fmt;
use std::path::Path;

use aisim_core::profile::resolve_profile;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::cdf::Cdf;
use crate::des::{generate, Arrivals, FleetRequest, PoolSpec, RouterSpec, MAX_POOLS};
use crate::error::FleetError;
use crate::validate::{self, MAX_GPUS};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPool {
    id: String,
    gpu: String,
    n_gpus: u64,
    max_ctx: u32,
}

/// A pool whose fields were checked.
#[derive(Debug, Deserialize)]
#[serde(try_from = "RawPool")]
struct PoolEntry(PoolSpec);

impl TryFrom<RawPool> for PoolEntry {
    type Error = String;

    fn try_from(p: RawPool) -> Result<Self, String> {
        let at = |field: &str, value: &dyn fmt::Display, reason: String| {
            format!("pool `{}`: `{field}` = {value}: {reason}", p.id)
        };
        let profile = resolve_profile(&p.gpu).map_err(|e| at("gpu", &p.gpu, e.to_string()))?;
        if p.n_gpus > MAX_GPUS {
            return Err(at(
                "n_gpus",
                &p.n_gpus,
                format!("must be at most {MAX_GPUS}"),
            ));
        }
        validate::context("max_ctx", p.max_ctx, profile.as_ref())
            .map_err(|e| format!("pool `{}`: {e}", p.id))?;
        Ok(PoolEntry(PoolSpec {
            id: p.id,
            profile,
            n_gpus: p.n_gpus,
            max_ctx: p.max_ctx,
        }))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    cdf: String,
    lam_frac: f64,
}

fn pools<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PoolSpec>, D::Error> {
    let pools: Vec<PoolSpec> = Vec::<PoolEntry>::deserialize(d)?
        .into_iter()
        .map(|p| p.0)
        .collect();
    if pools.is_empty() || pools.len() > MAX_POOLS {
        return Err(de::Error::custom(format!(
            "`pools` has {} entries: a fleet has 1 to {MAX_POOLS} pools",
            pools.len()
        )));
    }
    for (k, p) in pools.iter().enumerate() {
        if let Some(first) = pools[..k].iter().position(|o| o.id == p.id) {
            return Err(de::Error::custom(format!(
                "`pools`: id `{}` is used by pools {first} and {k}",
                p.id
            )));
        }
    }
    Ok(pools)
}

/// The workloads by name, each name once.
fn workloads<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, Cdf, f64)>, D::Error> {
    struct Workloads;
    impl<'de> Visitor<'de> for Workloads {
        type Value = Vec<(String, Cdf, f64)>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of workloads: {name: {\"cdf\", \"lam_frac\"}}")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out: Vec<(String, Cdf, f64)> = Vec::new();
            while let Some(name) = map.next_key::<String>()? {
                let w: RawWorkload = map.next_value()?;
                let at = |field: &str, reason: String| {
                    de::Error::custom(format!("workloads.{name}: `{field}`: {reason}"))
                };
                if out.iter().any(|(n, ..)| *n == name) {
                    return Err(at("name", "appears twice".into()));
                }
                validate::non_negative("lam_frac", w.lam_frac)
                    .map_err(|e| at("lam_frac", e.to_string()))?;
                let cdf = Cdf::resolve(&w.cdf).map_err(|e| at("cdf", e.to_string()))?;
                out.push((name, cdf, w.lam_frac));
            }
            if out.iter().all(|w| w.2 == 0.0) {
                return Err(de::Error::custom(
                    "`workloads`: every `lam_frac` is 0 (or there is no workload): no traffic",
                ));
            }
            // By name, as generation seeds each workload by its position.
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(out)
        }
    }
    d.deserialize_map(Workloads)
}

#[derive(Debug, Deserialize)]
#[serde(try_from = "RawFleetFile")]
struct FleetFile(FleetPlan);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFleetFile {
    #[serde(deserialize_with = "pools")]
    pools: Vec<PoolSpec>,
    #[serde(default)]
    router: Option<RouterSpec>,
    #[serde(deserialize_with = "workloads")]
    workloads: Vec<(String, Cdf, f64)>,
}

impl TryFrom<RawFleetFile> for FleetFile {
    type Error = String;

    fn try_from(f: RawFleetFile) -> Result<Self, String> {
        let ids: Vec<&str> = f.pools.iter().map(|p| p.id.as_str()).collect();
        let router = match f.router {
            Some(r) => r,
            None => RouterSpec::Model {
                map: f
                    .workloads
                    .iter()
                    .filter(|(n, ..)| ids.contains(&n.as_str()))
                    .map(|(n, ..)| (n.clone(), n.clone()))
                    .collect(),
                fallback: f.pools[0].id.clone(),
            },
        };
        router.validate(&ids).map_err(|e| e.to_string())?;
        if let RouterSpec::Model { map, .. } = &router {
            if let Some(m) = map.keys().find(|m| !f.workloads.iter().any(|w| w.0 == **m)) {
                return Err(format!(
                    "`router.map`: model `{m}` is no workload (workloads: {})",
                    f.workloads
                        .iter()
                        .map(|w| w.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(FleetFile(FleetPlan {
            pools: f.pools,
            router,
            workloads: f.workloads,
        }))
    }
}

/// A loaded fleet file.
#[derive(Debug, Clone)]
pub struct FleetPlan {
    /// Pools.
    pub pools: Vec<PoolSpec>,
    /// Router (default: each workload to the pool of the same id, else the first).
    pub router: RouterSpec,
    /// Workload name → (CDF, share of the rate), by name.
    pub workloads: Vec<(String, Cdf, f64)>,
}

impl FleetPlan {
    /// Reads and validates a fleet file.
    pub fn from_file(path: &Path) -> Result<FleetPlan, FleetError> {
        let text =
            aisim_core::text_file::read_text_file(path).map_err(aisim_core::CoreError::from)?;
        Self::parse(&text).map_err(|reason| FleetError::File {
            path: path.into(),
            reason,
        })
    }

    /// Parses and validates the text of a fleet file; the error names the
    /// line, column and field.
    pub fn parse(text: &str) -> Result<FleetPlan, String> {
        serde_json::from_str::<FleetFile>(text)
            .map(|f| f.0)
            .map_err(|e| aisim_core::text_file::json_error_text(&e))
    }

    /// `n` requests at total rate `lam`: each workload's share, tagged with its
    /// name as the model id, merged by arrival time.
    pub fn requests(
        &self,
        lam: f64,
        n: u64,
        arrivals: &Arrivals,
        seed: u64,
    ) -> Result<Vec<FleetRequest>, FleetError> {
        validate::stream(lam, n)?;
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
            )?;
            for r in &mut reqs {
                r.model = Some(name.clone());
            }
            all.extend(reqs);
        }
        all.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD_POOL: &str = r#"{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 8192}"#;

    fn file(pools: &str, workloads: &str) -> String {
        format!("{{\n\"pools\": [{pools}],\n\"workloads\": {{{workloads}}}\n}}")
    }

    fn err(text: &str) -> String {
        FleetPlan::parse(text).unwrap_err()
    }

    #[test]
    fn bad_fields_are_named_with_their_line() {
        let w = r#""a": {"cdf": "azure", "lam_frac": 1}"#;
        for (pools, workloads, needle) in [
            (
                r#"{"id": "a", "gpu": "a100", "n_gpus": 2, "max_ctx": 0}"#,
                w,
                "pool `a`: invalid `max_ctx` = 0",
            ),
            (
                r#"{"id": "a", "gpu": "nope", "n_gpus": 2, "max_ctx": 8192}"#,
                w,
                "pool `a`: `gpu` = nope",
            ),
            (
                &format!("{GOOD_POOL},\n{GOOD_POOL}"),
                w,
                "id `a` is used by pools 0 and 1",
            ),
            ("", w, "`pools` has 0 entries"),
            (
                GOOD_POOL,
                r#""a": {"cdf": "azure", "lam_frac": -1}"#,
                "workloads.a: `lam_frac`",
            ),
            (
                GOOD_POOL,
                r#""a": {"cdf": "nope", "lam_frac": 1}"#,
                "workloads.a: `cdf`",
            ),
            (
                GOOD_POOL,
                r#""a": {"cdf": "azure", "lam_frac": 1}, "a": {"cdf": "azure", "lam_frac": 2}"#,
                "workloads.a: `name`: appears twice",
            ),
            (
                GOOD_POOL,
                r#""a": {"cdf": "azure", "lam_frac": 0}, "b": {"cdf": "azure", "lam_frac": 0}"#,
                "every `lam_frac` is 0",
            ),
        ] {
            let e = err(&file(pools, workloads));
            assert!(e.contains(needle), "expected `{needle}` in: {e}");
            // The place first, once.
            assert!(e.starts_with("line "), "no line first in: {e}");
            assert_eq!(e.matches("line ").count(), 1, "{e}");
        }
    }

    #[test]
    fn the_router_names_existing_pools_and_workloads() {
        let w = r#""a": {"cdf": "azure", "lam_frac": 1}"#;
        let with_router = |router: &str| {
            format!("{{\"pools\": [{GOOD_POOL}], \"router\": {router}, \"workloads\": {{{w}}}}}")
        };
        let e = err(&with_router(
            r#"{"kind": "model", "map": {"a": "b"}, "fallback": "a"}"#,
        ));
        assert!(e.contains("`router.map` = b"), "{e}");
        let e = err(&with_router(
            r#"{"kind": "model", "map": {"x": "a"}, "fallback": "a"}"#,
        ));
        assert!(e.contains("model `x` is no workload"), "{e}");
        let e = err(&with_router(r#"{"kind": "spillover", "threshold": -1}"#));
        assert!(e.contains("`router.threshold` = -1"), "{e}");
        let e = err(&with_router(
            r#"{"kind": "semantic", "map": {"poetry": "a"}, "fallback": "a"}"#,
        ));
        assert!(e.contains("poetry"), "{e}");
        assert!(FleetPlan::parse(&with_router(r#"{"kind": "least_loaded"}"#)).is_ok());
    }
}
