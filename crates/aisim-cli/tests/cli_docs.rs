//! docs/cli.md carries every subcommand's `--help` verbatim
//! (regenerate with `cargo xtask cli-docs`).

use std::process::Command;

#[test]
fn cli_reference_matches_help() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap();
    for sub in [
        "replay",
        "gen-trace",
        "profiles",
        "optimize",
        "simulate",
        "pareto",
        "disagg",
        "compare-routers",
        "whatif",
        "simulate-fleet",
        "tok-per-watt",
        "grid-flex",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_aisim"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            doc.contains(&format!("```text\n{help}```")),
            "docs/cli.md is out of date for `aisim {sub} --help`: run `cargo xtask cli-docs`"
        );
    }
}
