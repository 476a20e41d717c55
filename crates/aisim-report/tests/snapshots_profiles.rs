//! Snapshot of the `aisim profiles` rendering (regenerate with `cargo xtask golden`).

#[test]
fn profiles_table() {
    let l = aisim_report::profiles::Listing {
        catalog: aisim_core::profile::catalog_summary(),
        workloads: aisim_fleet::cdf::builtin_summaries(),
    };
    insta::assert_snapshot!(aisim_report::profiles::render_listing(&l));
}
