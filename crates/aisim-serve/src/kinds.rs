//! The job kinds as the web page's form starts them: for each, a small
//! example request read by the library and written back with every field,
//! the CLI's defaults filled in (`GET /api/kinds`).

use aisim_lab::jobs::replay_flags::ReplayFlags;
use aisim_report::job::{filled_request, JobKind};
use serde_json::{json, Value};

/// The example request of `kind`, before its defaults are filled in:
/// replays start from `aisim replay`'s built-in default.
fn example(kind: JobKind, spec: &Value) -> Value {
    match kind {
        JobKind::Replay => spec.clone(),
        JobKind::Seeds => json!({"spec": spec, "seeds": 5}),
        JobKind::Sweep => json!({
            "grid": {"base": spec, "axes": {"topology.workers": [1, 2, 4]}},
            "best": true
        }),
        JobKind::Saturate => json!({"spec": spec, "speedup_range": "1..8"}),
        JobKind::Optimize => json!({"plan": {"lam": 50}}),
        JobKind::Pareto => json!({"plan": {"lam": 100}}),
        JobKind::Disagg => json!({"lam": 100}),
        JobKind::Simulate => json!({"plan": {"lam": 50}, "des": {"n_s": 3, "n_l": 6}}),
        JobKind::Whatif => json!({"lam_range": [50, 100]}),
        JobKind::Validate | JobKind::Calibrate => json!({"runs": []}),
    }
}

/// Every kind with its unit of progress and its starting request.
pub fn kinds() -> Value {
    let flags = ReplayFlags::from_value(json!({})).expect("no flags read");
    let spec = flags.to_spec().expect("the default replay builds");
    let spec: Value = serde_json::from_str(&spec.to_json()).expect("a spec is JSON");
    let all: Vec<Value> = JobKind::ALL
        .into_iter()
        .map(|k| {
            let example = example(k, &spec);
            // A sweep's grid is inline here and its `out` the service's:
            // its request as the client writes it, not the library's.
            let request = match k {
                JobKind::Sweep => example,
                _ => filled_request(k, &example)
                    .unwrap_or_else(|e| panic!("the example of {} reads: {e}", k.name())),
            };
            json!({"kind": k.name(), "progress_unit": k.progress_unit(), "request": request})
        })
        .collect();
    Value::Array(all)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_has_a_request_that_reads() {
        let all = super::kinds();
        assert_eq!(all.as_array().unwrap().len(), 11);
        // Defaults are filled in: a replay's spec says its engine.
        assert!(all[0]["request"]["engine"].is_object(), "{}", all[0]);
    }
}
