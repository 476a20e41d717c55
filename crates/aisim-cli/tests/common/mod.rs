//! What the binary's tests share: running it, reading its streams, fixtures
//! and scratch folders.
#![allow(dead_code)] // each test binary uses its own part

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary, to be given arguments, environment or a folder.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_aisim"))
}

/// Runs the binary with `args`.
pub fn aisim(args: &[&str]) -> Output {
    command().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A file of the repository's `fixtures/`.
pub fn fixture(rel: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/").to_string() + rel
}

/// A fresh scratch folder of this test process, shared by its calls with
/// the same name. The first call empties what an earlier process with the
/// same id left there (a kept target folder outlives process ids).
pub fn temp_dir(name: &str) -> PathBuf {
    static MADE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aisim-cli-{}-{name}", std::process::id()));
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if !made.iter().any(|m| m == name) {
        let _ = std::fs::remove_dir_all(&dir);
        made.push(name.to_string());
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The CI grid (`fixtures/sweep/ci-grid.toml`) planned into `dir/plan.jsonl`
/// and run into `dir/runs`: their paths.
pub fn ci_grid_run(dir: &std::path::Path) -> (String, String) {
    let (plan, runs) = (dir.join("plan.jsonl"), dir.join("runs"));
    let (plan, runs) = (plan.to_str().unwrap(), runs.to_str().unwrap());
    for args in [
        &[
            "sweep",
            "plan",
            &fixture("sweep/ci-grid.toml"),
            "--out",
            plan,
        ][..],
        &["sweep", "run", plan, "--out", runs, "--quiet"][..],
    ] {
        let o = aisim(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    (plan.to_string(), runs.to_string())
}

/// `text` in a temporary file named `name`.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    // A folder per content: the same name and text give the same path (runs
    // compared for determinism name their trace in the report), other text
    // another path; written whole, then renamed into place, so a test never
    // reads another's half-written file.
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (name, text).hash(&mut h);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "aisim-cli-files-{}/{:016x}",
        std::process::id(),
        h.finish()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let partial = dir.join(format!("{name}.{:?}.partial", std::thread::current().id()));
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, &p).unwrap();
    p
}

/// A report without its `host` section (the one part that is not deterministic).
pub fn without_host(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_object_mut().unwrap().remove("host");
    v
}

/// The body of the first ```sh block of a Markdown text.
pub fn first_sh_block(markdown: &str) -> &str {
    markdown
        .split("```sh")
        .nth(1)
        .expect("a ```sh block")
        .split("```")
        .next()
        .unwrap()
}

/// `args` exit with code 2, and stderr says `needle`.
pub fn assert_refused(args: &[&str], needle: &str) {
    let o = aisim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
}

/// The JSON `args` print, which must succeed.
pub fn json_ok(args: &[&str]) -> serde_json::Value {
    let o = aisim(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// A generic per-request file of 6 requests on one server, 2 of them sharing a prefix.
pub const REQUESTS: &str = r#"{"request_id": "a", "send_s": 10.0, "first_token_s": 10.05, "end_s": 10.5, "input_tokens": 512, "output_tokens": 20, "hash_ids": [1, 2]}
{"request_id": "b", "send_s": 10.2, "first_token_s": 10.3, "end_s": 11.0, "input_tokens": 1024, "output_tokens": 30, "hash_ids": [1, 2, 3, 4]}
{"request_id": "c", "send_s": 10.4, "first_token_s": 10.45, "end_s": 10.9, "input_tokens": 256, "output_tokens": 16}
{"request_id": "d", "send_s": 11.0, "first_token_s": 11.08, "end_s": 11.7, "input_tokens": 2048, "output_tokens": 25}
{"request_id": "e", "send_s": 11.5, "first_token_s": 11.53, "end_s": 11.9, "input_tokens": 128, "output_tokens": 12}
{"request_id": "f", "send_s": 12.0, "first_token_s": 12.06, "end_s": 12.8, "input_tokens": 768, "output_tokens": 40}
"#;
