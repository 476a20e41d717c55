//! `cargo xtask <chore>`: developer chores kept in Rust rather than shell.
//!
//! - `golden`: regenerates the `insta` snapshot baselines (runs the tests with
//!   `INSTA_UPDATE=always`) and `docs/cli.md` from the binary's `--help`, then
//!   shows what changed so it can be reviewed before committing.
//! - `cli-docs`: regenerates `docs/cli.md` only.
//! - `import-cycles`: lists files that import each other (directly or round
//!   a circle); none is the rule, and a test keeps it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

mod cli_reference;
mod import_cycles;

fn main() -> Result<()> {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("golden") => {
            cli_docs()?;
            golden()
        }
        Some("cli-docs") => cli_docs(),
        Some("import-cycles") => import_cycles(),
        _ => {
            eprintln!("usage: cargo xtask <golden|cli-docs|import-cycles>\n\n  golden         regenerate insta snapshots and docs/cli.md, then show what changed\n  cli-docs       regenerate docs/cli.md from --help\n  import-cycles  list files that import each other (exit 1 if any)");
            std::process::exit(2);
        }
    }
}

fn import_cycles() -> Result<()> {
    let root = root();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    crates.push(root.join("xtask"));
    crates.sort();
    let found = import_cycles::cycles(&crates)?;
    let rel = |p: &PathBuf| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    for (files, imports) in &found {
        let files: Vec<String> = files.iter().map(rel).collect();
        println!("{}", files.join(" <-> "));
        for (from, to, path) in imports {
            println!("    {} -> {} ({path})", rel(from), rel(to));
        }
    }
    if !found.is_empty() {
        bail!("{} import circle(s)", found.len());
    }
    println!("no import circles in {} crates", crates.len());
    Ok(())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

fn cli_docs() -> Result<()> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "aisim-cli"])
        .current_dir(root())
        .status()
        .context("building aisim")?;
    if !status.success() {
        bail!("cargo build failed");
    }
    let bin = root().join("target/release/aisim");
    let (_, doc) = cli_reference::cli_reference(&bin).map_err(anyhow::Error::msg)?;
    std::fs::write(root().join("docs/cli.md"), doc).context("writing docs/cli.md")?;
    println!("docs/cli.md regenerated");
    Ok(())
}

fn golden() -> Result<()> {
    let status = Command::new(env!("CARGO"))
        .args(["test", "--workspace", "--release"])
        .env("INSTA_UPDATE", "always")
        .env("INSTA_FORCE_PASS", "1")
        .current_dir(root())
        .status()
        .context("running cargo test")?;
    if !status.success() {
        bail!("cargo test failed while regenerating snapshots");
    }
    let diff = Command::new("git")
        .args(["diff", "--stat", "--", "*.snap", "docs/cli.md"])
        .current_dir(root())
        .status()
        .context("running git diff")?;
    if !diff.success() {
        bail!("git diff failed");
    }
    println!("snapshots regenerated: review `git diff -- '*.snap' docs/cli.md` before committing");
    Ok(())
}
