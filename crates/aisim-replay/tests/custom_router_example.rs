//! `examples/custom-router` stays what it claims to be: a Cargo workspace of
//! its own, outside the main one, locked to the main lock's versions (so it
//! builds offline from what the project already fetched).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    let p = root().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `(name, version)` a Cargo.lock pins.
fn pinned(lock: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut name = None;
    for line in lock.lines() {
        let value = |l: &str, key: &str| {
            l.strip_prefix(key)
                .map(|v| v.trim_matches(|c| c == '"' || c == ' ').to_string())
        };
        if let Some(n) = value(line, "name = ") {
            name = Some(n);
        } else if let (Some(v), Some(n)) = (value(line, "version = "), name.take()) {
            out.insert((n, v));
        }
    }
    out
}

/// The folders the main workspace's `exclude` names.
fn excluded() -> Vec<String> {
    let main = read("Cargo.toml");
    let line = main
        .lines()
        .find(|l| l.trim_start().starts_with("exclude = ["))
        .expect("the main Cargo.toml has an exclude list");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_python_module_is_a_separate_workspace_agreeing_with_the_main_lock() {
    let manifest = read("crates/aisim-py/Cargo.toml");
    assert!(
        manifest.lines().any(|l| l.trim() == "[workspace]"),
        "its own [workspace]"
    );
    assert!(
        excluded().contains(&"crates/aisim-py".to_string()),
        "the main workspace excludes it, so no workspace command needs Python"
    );
    let main_lock = pinned(&read("Cargo.lock"));
    let names: BTreeSet<&String> = main_lock.iter().map(|(n, _)| n).collect();
    let module_lock = pinned(&read("crates/aisim-py/Cargo.lock"));
    // A crate both use is at the main lock's version; pyo3's own are new.
    let other: Vec<_> = module_lock
        .iter()
        .filter(|(n, _)| names.contains(n))
        .filter(|p| !main_lock.contains(*p))
        .collect();
    assert!(
        other.is_empty(),
        "versions the main lock does not pin: {other:?}"
    );
    assert!(read(".ci/run").contains("--manifest-path crates/aisim-py/Cargo.toml"));
}

#[test]
fn the_example_is_a_separate_workspace_locked_to_the_main_versions() {
    let manifest = read("examples/custom-router/Cargo.toml");
    assert!(
        manifest.lines().any(|l| l.trim() == "[workspace]"),
        "its own [workspace]"
    );
    assert!(manifest.contains("path = \"../../crates/aisim-replay\""));
    assert!(
        excluded().contains(&"examples/custom-router".to_string()),
        "the main workspace excludes it"
    );
    let main_lock = pinned(&read("Cargo.lock"));
    let example_lock = pinned(&read("examples/custom-router/Cargo.lock"));
    assert!(example_lock.len() > 5, "{example_lock:?}");
    let foreign: Vec<_> = example_lock
        .iter()
        .filter(|(n, _)| n != "custom-router")
        .filter(|p| !main_lock.contains(*p))
        .collect();
    assert!(
        foreign.is_empty(),
        "versions the main Cargo.lock does not pin: {foreign:?}"
    );
    assert!(read(".ci/run").contains("--manifest-path examples/custom-router/Cargo.toml"));
}
