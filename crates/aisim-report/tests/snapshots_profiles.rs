//! Snapshot of the `aisim profiles` rendering (regenerate with `cargo xtask golden`).

#[test]
fn profiles_table() {
    let c = aisim_core::profile::catalog_summary();
    insta::assert_snapshot!(aisim_report::profiles::render_catalog(&c));
}
