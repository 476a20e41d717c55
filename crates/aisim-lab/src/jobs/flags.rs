//! A job's request from its flags given flat, as a front end without the
//! CLI's parser has them (Python's keyword arguments): each flag named as
//! on the command line in snake case (`slo_ttft_ms`, `sizing_model`,
//! `n_req`) is put where the request keeps it (`plan.slo`, `sizing.model`,
//! `des.run.n_req`). Flags the table does not name are the request's own
//! top-level fields; anything else is refused by the request's
//! `deny_unknown_fields`, so a misspelt flag is an error, as on the CLI.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::JobError;

/// `--cdf`, `--lam`, `--slo-ttft-ms`, ... of the two-pool planners (`PlanRequest`).
const PLAN: [(&str, &str); 9] = [
    ("cdf", "plan.cdf"),
    ("lam", "plan.lam"),
    ("slo_ttft_ms", "plan.slo"),
    ("slo", "plan.slo"),
    ("b_short", "plan.b_short"),
    ("long_max_ctx", "plan.long_max_ctx"),
    ("gpu_short", "plan.gpu_short"),
    ("gpu_long", "plan.gpu_long"),
    ("seed", "plan.seed"),
];

/// `--sizing-model`, `--calibration`, ... (`SizingRequest`).
const SIZING: [(&str, &str); 5] = [
    ("sizing_model", "sizing.model"),
    ("calibration", "sizing.calibration"),
    ("samples", "sizing.samples"),
    ("no_util_cap", "sizing.no_util_cap"),
    ("availability", "sizing.availability"),
];

/// `--n-s`, `--n-l` and the run's flags of the fleet DES (`DesRequest`).
const DES: [(&str, &str); 6] = [
    ("n_s", "des.n_s"),
    ("n_l", "des.n_l"),
    ("n_req", "des.run.n_req"),
    ("arrivals", "des.run.arrivals"),
    ("seeds", "des.run.seeds"),
    ("warmup", "des.run.warmup"),
];

/// The run's flags of `simulate-fleet` (`RunRequest`).
const RUN: [(&str, &str); 4] = [
    ("n_req", "run.n_req"),
    ("arrivals", "run.arrivals"),
    ("seeds", "run.seeds"),
    ("warmup", "run.warmup"),
];

/// Where each flag of `job` (a subcommand, in snake case) goes in its request.
fn table(job: &str) -> Vec<(&'static str, &'static str)> {
    match job {
        "optimize" | "pareto" | "whatif" => PLAN.iter().chain(&SIZING).copied().collect(),
        "simulate" | "compare_routers" => PLAN.iter().chain(&DES).copied().collect(),
        "disagg" => vec![("slo_ttft_ms", "slo_ttft"), ("slo_tpot_ms", "slo_tpot")],
        "simulate_fleet" => {
            let mut t = vec![("slo_ttft_ms", "slo")];
            t.extend(RUN);
            t
        }
        "tok_per_watt" | "grid_flex" => vec![("slo_ttft_ms", "slo")],
        "sweep_merge" | "sweep" => vec![
            ("slo_ttft_ms", "sla_ttft_ms"),
            ("slo_tpot_ms", "sla_tpot_ms"),
            ("slo_e2e_ms", "sla_e2e_ms"),
        ],
        _ => Vec::new(),
    }
}

/// The request of `job` from `flags` (flat, named as the CLI's flags in
/// snake case; a JSON null is a flag not given). Errors name the flag.
pub fn request_from_flags<T: DeserializeOwned>(
    job: &str,
    flags: Map<String, Value>,
) -> Result<T, JobError> {
    let table = table(job);
    let mut request = Map::new();
    for (flag, value) in flags {
        if value.is_null() {
            continue;
        }
        let path = table
            .iter()
            .find(|(f, _)| *f == flag)
            .map_or(flag.as_str(), |(_, p)| p);
        let mut parts: Vec<&str> = path.split('.').collect();
        let last = parts.pop().expect("a path has a name");
        let mut node = &mut request;
        for part in parts {
            node = node
                .entry(part)
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("the table nests objects only");
        }
        if node.insert(last.to_string(), value).is_some() {
            return Err(JobError::msg(format!(
                "{job}: `{flag}` is given twice (under two of its names)"
            )));
        }
    }
    serde_json::from_value(Value::Object(request)).map_err(|e| JobError::msg(format!("{job}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::fleet::{DisaggRequest, OptimizeRequest, SimulateRequest};

    fn flags(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn flat_flags_land_where_the_request_keeps_them() {
        let r: OptimizeRequest = request_from_flags(
            "optimize",
            flags(
                serde_json::json!({"lam": 100, "slo_ttft_ms": 300, "sizing_model": "slots",
                                      "verify_top": 0, "seed": null}),
            ),
        )
        .unwrap();
        assert_eq!(r.plan.lam, Some(100.0));
        assert_eq!(r.plan.slo, 300.0);
        assert_eq!(r.verify_top, 0);
        let s: SimulateRequest = request_from_flags(
            "simulate",
            flags(serde_json::json!({"n_s": 3, "n_l": 2, "n_req": 500})),
        )
        .unwrap();
        assert_eq!((s.des.n_s, s.des.run.n_req), (3, 500));
        let d: DisaggRequest =
            request_from_flags("disagg", flags(serde_json::json!({"slo_tpot_ms": 50}))).unwrap();
        assert_eq!(d.slo_tpot, 50.0);
        let e = request_from_flags::<OptimizeRequest>(
            "optimize",
            flags(serde_json::json!({"verify_tpo": 1})),
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field `verify_tpo`"), "{e}");
    }
}
