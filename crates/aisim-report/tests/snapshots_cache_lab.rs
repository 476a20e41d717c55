//! Snapshots of the `aisim cache-lab` table and JSON (regenerate with `cargo xtask golden`).

use aisim_core::cache_lab::{CacheLabRun, START_REQUESTS};

#[test]
fn cache_lab_table_with_steps() {
    let run = CacheLabRun::play(4, 4, START_REQUESTS, 2).unwrap();
    insta::assert_snapshot!(aisim_report::cache_lab::render_cache_lab(&run));
}

#[test]
fn cache_lab_json() {
    let run = CacheLabRun::play(3, 4, 4, 1).unwrap();
    insta::assert_snapshot!(aisim_report::to_json(&run));
}
