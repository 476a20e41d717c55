//! Snapshots of the `seeds` section (`replay --seeds N`): the table and its
//! JSON shape (regenerate with `cargo xtask golden`).

use aisim_lab::seeds::{replay_seeds, SeedsReport};
use aisim_replay::policy::SpecComposition;
use aisim_replay::spec::{RouterKind, TopologySpec};
use aisim_replay::{ReplaySpec, Replayer};

/// Three seeds of the demo trace under the random router.
fn demo_seeds() -> SeedsReport {
    let mut spec = ReplaySpec {
        topology: TopologySpec::Aggregated { workers: 4 },
        ..ReplaySpec::default()
    };
    spec.router.policy = RouterKind::Random;
    let first = Replayer::new(spec, SpecComposition)
        .unwrap()
        .run()
        .unwrap()
        .report;
    replay_seeds(2, &first, 3, &SpecComposition).unwrap()
}

#[test]
fn seeds_table() {
    insta::assert_snapshot!(aisim_report::seeds::render_seeds(&demo_seeds()));
}

#[test]
fn seeds_json() {
    insta::assert_snapshot!(aisim_report::to_json(&demo_seeds()));
}
