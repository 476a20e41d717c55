//! Snapshots of the replay report: the tables and the JSON shape (regenerate
//! with `cargo xtask golden`, review the diff before committing).

mod common;

use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::TopologySpec;
use aisim_replay::{ReplaySpec, Replayer};

fn demo_report() -> aisim_replay::ReplayReport {
    report_of(ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    })
}

/// The report of `spec`, its host section zeroed.
fn report_of(spec: ReplaySpec) -> aisim_replay::ReplayReport {
    let mut r = Replayer::new(spec, SpecComposition)
        .unwrap()
        .run()
        .unwrap()
        .report;
    // The host section is the only part that differs between identical runs.
    r.host.wall_s = 0.0;
    r.host.simulated_requests_per_s = 0.0;
    r
}

#[test]
fn replay_tables() {
    insta::assert_snapshot!(aisim_report::replay::render_replay(&demo_report()));
}

/// The load planner on a burst: its parameters, the scaling section and
/// its timeline.
#[test]
fn replay_tables_with_the_load_planner() {
    let spec = common::planner_on_a_burst();
    insta::assert_snapshot!(aisim_report::replay::render_replay(&report_of(spec)));
}

#[test]
fn replay_json() {
    insta::assert_snapshot!(aisim_report::to_json(&demo_report()));
}

/// The demo cut off at 30 s on 1,000 workers, with distributions past an
/// exact limit of 50 values: the rows that say so (sketched percentiles, not
/// offered, workers used).
#[test]
fn replay_tables_cut_off_and_sketched() {
    let mut spec = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 1000 },
        ..ReplaySpec::default()
    };
    spec.discipline.max_sim_time_s = Some(30.0);
    let r = Replayer::new(spec, SpecComposition)
        .unwrap()
        .with_exact_limit(50)
        .run()
        .unwrap()
        .report;
    assert!(r.outcomes.not_offered > 0 && !r.discipline.sketched.is_empty());
    insta::assert_snapshot!(aisim_report::replay::render_replay(&r));
}

/// The demo under `--router sticky --router-inner kv`: the router row names
/// the policy that ran, and the cache guess row says what it expected.
#[test]
fn replay_tables_kv_router() {
    let mut spec = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    };
    spec.router.policy = aisim_replay::spec::RouterKind::Sticky;
    spec.router.inner = Some(aisim_replay::spec::RouterKind::Kv);
    let r = Replayer::new(spec, SpecComposition)
        .unwrap()
        .run()
        .unwrap()
        .report;
    let tables = aisim_report::replay::render_replay(&r);
    let run_table: String = tables
        .lines()
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(run_table);
}

/// The demo disaggregated 2 + 2: the pools, the link and the transfers.
#[test]
fn replay_tables_disaggregated() {
    let spec = ReplaySpec {
        topology: TopologySpec::Disaggregated {
            prefill: aisim_replay::spec::PoolSpec::new(2),
            decode: aisim_replay::spec::PoolSpec::new(2),
            kv_transfer: aisim_replay::spec::KvTransferSpec {
                bytes_per_token: Some(131_072),
                mode: aisim_replay::spec::KvTransferMode::DestinationMissing,
                ..Default::default()
            },
        },
        ..ReplaySpec::default()
    };
    insta::assert_snapshot!(aisim_report::replay::render_replay(&report_of(spec)));
}

/// A BurstGPT log replayed on one small worker: failed rows skipped, prompts
/// over `max_model_len` rejected, a queue that times requests out, and the
/// offered view reading `inf`.
#[test]
fn replay_tables_overloaded() {
    let mut csv =
        String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
    for i in 0..300u32 {
        let (input, output) = (
            200 + (i * 997) % 3000,
            if i % 25 == 7 { 0 } else { 20 + (i * 31) % 200 },
        );
        csv.push_str(&format!(
            "{},ChatGPT,{input},{output},{},Conversation log\n",
            i as f64 * 0.13,
            input + output
        ));
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-report-snap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("overloaded.csv");
    std::fs::write(&path, csv).unwrap();
    let mut spec = ReplaySpec {
        workload: aisim_replay::spec::WorkloadSpec::Trace {
            path,
            format: None,
            trace_block_size: None,
        },
        timing: aisim_core::timing::TimingSpec::Fixed {
            prefill_ms: 10.0,
            decode_ms: 5.0,
        },
        ..ReplaySpec::default()
    };
    spec.engine.max_num_seqs = 4;
    spec.engine.max_model_len = Some(3150);
    spec.discipline.timeout_s = Some(4.0);
    spec.sla.ttft_ms = Some(1000.0);
    spec.sla.e2e_ms = Some(3000.0);
    let mut r = Replayer::new(spec, SpecComposition)
        .unwrap()
        .run()
        .unwrap()
        .report;
    r.workload.source = "overloaded.csv".into();
    let o = r.outcomes;
    assert!(
        o.timed_out * 100 > o.offered && o.rejected > 0 && r.workload.skipped_rows > 0,
        "{o:?}"
    );
    insta::assert_snapshot!(aisim_report::replay::render_replay(&r));
}
