//! The replay report as data: what a JSON report says reads back into the
//! same report, and writes out again byte for byte.

mod common;

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{ArrivalSpec, LengthSpec, SyntheticSpec, TopologySpec, WorkloadSpec};
use aisim_replay::{ReplayReport, ReplaySpec, Replayer};

fn run(spec: ReplaySpec) -> ReplayReport {
    Replayer::new(spec, SpecComposition)
        .unwrap()
        .run()
        .unwrap()
        .report
}

/// The demo, and a generated multi-turn workload overloaded with a timeout
/// and a `max_model_len` that rejects some (every optional section present,
/// infinite percentiles as `null`, sketched distributions).
fn reports() -> Vec<ReplayReport> {
    let demo = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    };
    let mut busy = ReplaySpec {
        workload: WorkloadSpec::Synthetic(SyntheticSpec {
            requests: 300,
            input: LengthSpec::Uniform {
                min: 200,
                max: 1600,
            },
            arrival: ArrivalSpec::Poisson { rate: 40.0 },
            turns: 3,
            think_ms: 50.0,
            ..SyntheticSpec::default()
        }),
        ..ReplaySpec::default()
    };
    busy.engine.max_model_len = Some(1200);
    busy.discipline.timeout_s = Some(2.0);
    busy.sla.ttft_ms = Some(500.0);
    busy.sla.e2e_ms = Some(3000.0);
    // The load planner on a generated burst (the scaling section).
    let scaled = run(common::planner_on_a_burst());
    assert!(scaled.scaling.is_some());
    vec![run(demo), run(busy), scaled]
}

#[test]
fn a_json_report_read_back_and_written_again_is_byte_identical() {
    for report in reports() {
        let json = aisim_report::to_json(&report);
        let back: ReplayReport = serde_json::from_str(&json).expect("a report reads back");
        assert_eq!(back, report);
        assert_eq!(aisim_report::to_json(&back), json);
    }
}
