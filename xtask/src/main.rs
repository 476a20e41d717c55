//! `cargo xtask <chore>`: developer chores kept in Rust rather than shell.
//!
//! - `golden`: regenerates the `insta` snapshot baselines (runs the snapshot
//!   tests with `INSTA_UPDATE=always`), then shows `git diff --stat` of the
//!   snapshots so the change can be reviewed before committing.

use std::process::Command;

use anyhow::{bail, Context, Result};

fn main() -> Result<()> {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("golden") => golden(),
        _ => {
            eprintln!("usage: cargo xtask golden\n\n  golden   regenerate insta snapshot baselines, then show what changed");
            std::process::exit(2);
        }
    }
}

fn golden() -> Result<()> {
    let status = Command::new(env!("CARGO"))
        .args(["test", "--workspace", "--release"])
        .env("INSTA_UPDATE", "always")
        .env("INSTA_FORCE_PASS", "1")
        .status()
        .context("running cargo test")?;
    if !status.success() {
        bail!("cargo test failed while regenerating snapshots");
    }
    let diff = Command::new("git")
        .args(["diff", "--stat", "--", "*.snap"])
        .status()
        .context("running git diff")?;
    if !diff.success() {
        bail!("git diff failed");
    }
    println!("snapshots regenerated: review `git diff -- '*.snap'` before committing");
    Ok(())
}
