//! Snapshots of `aisim sweep saturate`'s outputs: the table, the JSON and the
//! HTML page (regenerate with `cargo xtask golden`).

use aisim_core::timing::TimingSpec;
use aisim_lab::saturate::{saturate, Axis, Range, SaturateReport, Saturation, SearchSettings};
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::ReplaySpec;

/// One worker running one request at a time, 20 ms prefill and 8 × 5 ms
/// decode passes each: capacity 1 / 60 ms = 16.667 req/s.
fn search() -> SaturateReport {
    let mut spec = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 100,
            input: LengthSpec::Fixed { tokens: 100 },
            output: LengthSpec::Fixed { tokens: 9 },
            arrival: ArrivalSpec::Constant { rate: 10.0 },
            ..SyntheticSpec::default()
        }),
        topology: TopologySpec::Aggregated { workers: 1 },
        timing: TimingSpec::Fixed {
            prefill_ms: 20.0,
            decode_ms: 5.0,
        },
        ..ReplaySpec::default()
    };
    spec.engine.max_num_seqs = 1;
    spec.sla.ttft_ms = Some(40.0);
    let s = Saturation {
        axis: Axis::Rate,
        range: Range { lo: 1.0, hi: 40.0 },
        search: SearchSettings {
            points: 5,
            tolerance: 0.01,
            max_probes: 20,
        },
        attainment: 0.9,
    };
    saturate(&spec, &s, 2, &SpecComposition).unwrap()
}

#[test]
fn saturate_table() {
    insta::assert_snapshot!(aisim_report::saturate::render_saturate(&search()));
}

#[test]
fn saturate_json() {
    insta::assert_snapshot!(aisim_report::to_json(&search()));
}

#[test]
fn saturate_html() {
    insta::assert_snapshot!(aisim_report::html::render_saturate_html(&search()));
}
