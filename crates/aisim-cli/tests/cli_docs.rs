//! docs/cli.md carries every subcommand's `--help` verbatim
//! (regenerate with `cargo xtask cli-docs`).

use std::process::Command;

/// The subcommands `aisim --help` lists (all but `help`).
fn subcommands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_aisim"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let after = text.split("Commands:\n").nth(1).unwrap_or("");
    after
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn cli_reference_matches_help() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap();
    let subs = subcommands();
    assert!(subs.len() >= 12, "{subs:?}");
    for sub in &subs {
        let out = Command::new(env!("CARGO_BIN_EXE_aisim"))
            .args([sub.as_str(), "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            doc.contains(&format!("```text\n{help}```")),
            "docs/cli.md is out of date for `aisim {sub} --help`: run `cargo xtask cli-docs`"
        );
    }
}
