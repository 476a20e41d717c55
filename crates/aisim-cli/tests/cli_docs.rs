//! docs/cli.md carries every subcommand's `--help` verbatim
//! (regenerate with `cargo xtask cli-docs`).

use std::path::Path;

#[path = "../../../xtask/src/cli_reference.rs"]
mod cli_reference;

#[test]
fn cli_reference_matches_help() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap();
    let (subs, expected) =
        cli_reference::cli_reference(Path::new(env!("CARGO_BIN_EXE_aisim"))).unwrap();
    assert!(subs.len() >= 12, "{subs:?}");
    for sub in &subs {
        assert!(
            doc.contains(&format!("\n## `aisim {sub}`\n")),
            "docs/cli.md has no section for `aisim {sub}`: run `cargo xtask cli-docs`"
        );
    }
    assert!(
        doc == expected,
        "docs/cli.md is out of date with the binary's --help: run `cargo xtask cli-docs`"
    );
}
