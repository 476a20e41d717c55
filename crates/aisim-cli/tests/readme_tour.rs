//! The README's tour, pasted as is (with `aisim` the binary under test): every
//! command succeeds with nothing on stderr, and the tour leaves no file in the
//! clone (its outputs go to `$out`, a scratch folder).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::temp_dir;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The tour's command lines: the `aisim ...` lines of the README's first
/// `sh` block after `## Tour`.
fn tour_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let tour = readme
        .split("## Tour")
        .nth(1)
        .expect("README has a ## Tour");
    let block = common::first_sh_block(tour);
    assert!(
        block.contains("out=$(mktemp -d)"),
        "the tour writes into a scratch folder $out"
    );
    block
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("aisim "))
        .map(String::from)
        .collect()
}

/// Every file and folder of the clone outside `target/` and `.git`, by path.
fn clone_entries(dir: &Path, into: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "target" || name == ".git" {
            continue;
        }
        let path = e.path();
        into.insert(path.display().to_string());
        if e.file_type().unwrap().is_dir() {
            clone_entries(&path, into);
        }
    }
}

#[test]
fn the_readme_tour_runs_as_pasted_and_leaves_no_file_in_the_clone() {
    let commands = tour_commands();
    assert!(commands.len() >= 15, "{commands:?}");
    let out = temp_dir("tour");
    let mut before = BTreeSet::new();
    clone_entries(repo(), &mut before);
    for line in &commands {
        let script = format!(
            "aisim() {{ '{}' \"$@\"; }}; out='{}'; {line}",
            env!("CARGO_BIN_EXE_aisim"),
            out.display()
        );
        let o = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(repo())
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        // Nothing on stderr but the notes of what a command wrote.
        let said = |l: &&str| {
            ["planned ", "wrote ", "merged "]
                .iter()
                .any(|p| l.starts_with(p))
        };
        let other: Vec<&str> = err.lines().filter(|l| !said(l)).collect();
        assert!(o.status.success() && other.is_empty(), "{line}: {err}");
    }
    let mut after = BTreeSet::new();
    clone_entries(repo(), &mut after);
    let new: Vec<_> = after.difference(&before).collect();
    assert!(new.is_empty(), "the tour left {new:?} in the clone");
    assert!(out.join("sessions.jsonl").is_file());
}

/// The README's service block (the first `sh` block after `### The
/// service`), pasted as is but for its alias: the service starts, takes the
/// upload and the job, prints the report's TTFT and stops on `kill`; nothing
/// on stderr, no file in the clone. Skipped where there is no `curl`.
#[test]
fn the_readme_service_block_runs_as_pasted() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skipped: no curl on this machine");
        return;
    }
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("### The service")
        .nth(1)
        .expect("README has a ### The service");
    let block = common::first_sh_block(section);
    assert!(block.contains("aisim serve") && block.contains("kill $server"));
    let body: String = block
        .lines()
        .filter(|l| !l.starts_with("alias aisim="))
        .map(|l| format!("{l}\n"))
        .collect();
    // `aisim` on the PATH (not a shell function): `aisim serve &` is then
    // the service's own process, which `kill $server` stops.
    let scratch = temp_dir("tour-service");
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("aisim");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_aisim"), &link).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (out_file, err_file) = (scratch.join("stdout"), scratch.join("stderr"));
    let mut before = BTreeSet::new();
    clone_entries(repo(), &mut before);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{body}wait $server\n"))
        .current_dir(repo())
        .env("PATH", path)
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    // A block that hangs (a job that never ends) fails here, not forever.
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the service block did not end within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = std::fs::read_to_string(&out_file).unwrap();
    let err = std::fs::read_to_string(&err_file).unwrap();
    assert!(status.success() && err.is_empty(), "{err}\n{out}");
    assert!(out.contains("\"rows\":240"), "the upload's figures: {out}");
    assert!(
        out.contains("\"ttft_ms\": {") && out.contains("\"p99\""),
        "{out}"
    );
    let mut after = BTreeSet::new();
    clone_entries(repo(), &mut after);
    let new: Vec<_> = after.difference(&before).collect();
    assert!(new.is_empty(), "the block left {new:?} in the clone");
}
