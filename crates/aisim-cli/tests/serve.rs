//! `aisim serve` as its clients use it: the binary started on a free port,
//! a real HTTP client (ureq). Uploads (a bad row is a 400 naming its line),
//! every job kind with its report equal to the CLI's, a SIGKILL with jobs
//! queued and running that loses nothing, 200 jobs from 8 clients, the
//! token, ids that try to leave the data folder, server paths refused, and
//! user text escaped on the web page (headless Chromium reads its DOM).

#[path = "common/browser.rs"]
mod browser;
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{aisim, command, fixture, stdout, temp_dir, without_host};
use serde_json::{json, Value};

/// A service process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// `aisim serve --bind 127.0.0.1:0 --data DATA` plus `extra`, with
    /// `env` set: once it printed where it listens.
    fn start(data: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = command();
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--data"])
            .arg(data)
            .args(extra)
            .env_remove("AISIM_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the service says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {line:?}"))
            .to_string();
        Server { child, url }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A call: its status and body.
fn call(method: &str, url: &str, token: Option<&str>, body: Option<&[u8]>) -> (u16, String) {
    let mut req = ureq::request(method, url).timeout(Duration::from_secs(120));
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    let got = match body {
        Some(b) => req.send_bytes(b),
        None => req.call(),
    };
    let resp = match got {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let status = resp.status();
    (status, resp.into_string().unwrap())
}

fn get(s: &Server, path: &str) -> (u16, String) {
    call("GET", &format!("{}{path}", s.url), None, None)
}

fn ok_json(s: &Server, path: &str) -> Value {
    let (status, body) = get(s, path);
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn upload(s: &Server, name: &str, bytes: &[u8]) -> (u16, Value) {
    let url = format!("{}/api/traces?name={}", s.url, encode(name));
    let (status, body) = call("POST", &url, None, Some(bytes));
    (status, serde_json::from_str(&body).unwrap())
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn submit(s: &Server, body: &Value) -> (u16, Value) {
    let (status, text) = call(
        "POST",
        &format!("{}/api/jobs", s.url),
        None,
        Some(body.to_string().as_bytes()),
    );
    (status, serde_json::from_str(&text).unwrap())
}

/// Submits a job that must be accepted: its id.
fn accepted(s: &Server, kind: &str, request: Value) -> String {
    let (status, v) = submit(s, &json!({"kind": kind, "request": request}));
    assert_eq!(status, 202, "{kind}: {v}");
    v["id"].as_str().unwrap().to_string()
}

/// Polls a job until it ends: its last view.
fn wait(s: &Server, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let v = ok_json(s, &format!("/api/jobs/{id}"));
        if ["done", "failed", "cancelled"].contains(&v["state"].as_str().unwrap()) {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "job {id} never ended: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A job run to its end, which must be done: its report.
fn done_report(s: &Server, id: &str) -> String {
    let v = wait(s, id);
    assert_eq!(v["state"], "done", "{v}");
    let (status, report) = get(s, &format!("/api/jobs/{id}/report"));
    assert_eq!(status, 200);
    report
}

/// The spec `aisim replay ARGS --print-spec` writes.
fn printed_spec(args: &[&str]) -> Value {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    all.push("--print-spec");
    let o = aisim(&all);
    assert_eq!(o.status.code(), Some(0));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The binary's JSON report for `args`.
fn cli_json(args: &[&str]) -> String {
    let o = aisim(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", common::stderr(&o));
    stdout(&o)
}

/// Where an uploaded trace's file is.
fn stored(data: &Path, trace: &Value) -> PathBuf {
    let id = trace["id"].as_str().unwrap();
    data.canonicalize()
        .unwrap()
        .join("traces")
        .join(id)
        .join(trace["file"].as_str().unwrap())
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.display().to_string()
}

#[test]
fn uploads_are_read_and_every_job_kind_reports_as_the_cli() {
    let dir = temp_dir("serve-kinds");
    let data = dir.join("data");
    let s = Server::start(&data, &["--workers", "2", "--allow-local-files"], &[]);
    assert_eq!(ok_json(&s, "/healthz")["status"], "ok");
    // Every path of the OpenAPI document is served, with the methods it says.
    let doc = ok_json(&s, "/api/openapi.json");
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 12);
    for (path, item) in paths {
        let path = path.replace(
            "{id}",
            if path.contains("traces") {
                "t0000000000000000"
            } else {
                "j0000000000000000"
            },
        );
        for method in ["get", "post", "delete"]
            .into_iter()
            .filter(|m| item.get(*m).is_some())
        {
            let body = (method == "post").then_some(&b"{}"[..]);
            let (status, text) = call(
                &method.to_uppercase(),
                &format!("{}{path}", s.url),
                None,
                body,
            );
            assert!(
                status != 405 && !text.contains("no such endpoint"),
                "{method} {path}: {status} {text}"
            );
        }
    }
    assert!(get(&s, "/api/nope").1.contains("no such endpoint"));

    let demo = std::fs::read(fixture("demo_sessions.jsonl")).unwrap();
    let (status, trace) = upload(&s, "demo.jsonl", &demo);
    assert_eq!(status, 201, "{trace}");
    assert_eq!(trace["summary"]["rows"], 240);
    assert_eq!(trace["summary"]["format"], "mooncake");
    assert_eq!(trace["bytes"], demo.len());
    let id = trace["id"].as_str().unwrap();
    assert_eq!(ok_json(&s, &format!("/api/traces/{id}")), trace);
    assert_eq!(ok_json(&s, "/api/traces"), json!([trace.clone()]));
    // The uploaded file is the trace as sent, byte for byte.
    assert_eq!(std::fs::read(stored(&data, &trace)).unwrap(), demo);

    // A bad row: a 400 naming the upload, the line and the field; nothing kept.
    let bad = b"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 1, \"output_length\": 1}\n";
    let (status, err) = upload(&s, "bad.jsonl", bad);
    assert_eq!(status, 400, "{err}");
    let text = err["error"].as_str().unwrap();
    assert!(
        text.contains("bad.jsonl:2") && text.contains("input_length"),
        "{text}"
    );
    assert!(
        !text.contains(data.to_str().unwrap()),
        "no server path: {text}"
    );
    assert_eq!(ok_json(&s, "/api/traces").as_array().unwrap().len(), 1);

    // A replay of the upload: the CLI's bytes for the same spec.
    let mut spec = printed_spec(&[
        &fixture("demo_sessions.jsonl"),
        "--workers",
        "2",
        "--slo-ttft-ms",
        "2000",
    ]);
    spec["workload"]["path"] = json!(format!("upload:{id}"));
    let replay = accepted(&s, "replay", spec.clone());
    let report = done_report(&s, &replay);
    let mut local = spec.clone();
    local["workload"]["path"] = json!(stored(&data, &trace));
    let spec_file = write(&dir, "spec.json", &local);
    let cli = cli_json(&["replay", "--spec", &spec_file, "--format", "json"]);
    assert_eq!(without_host(&report), without_host(&cli));
    let job = ok_json(&s, &format!("/api/jobs/{replay}"));
    assert_eq!(job["records"], 240);
    assert_eq!(job["request"], spec, "the request as submitted");
    let (_, records) = get(&s, &format!("/api/jobs/{replay}/requests.jsonl"));
    let rows = cli_json(&["replay", "--spec", &spec_file, "--per-request", "-"]);
    let sorted = |t: &str| {
        let mut l: Vec<String> = t.lines().map(String::from).collect();
        l.sort();
        l
    };
    assert_eq!(sorted(&records), sorted(&rows));
    let (status, html) = get(&s, &format!("/api/jobs/{replay}/report.html"));
    assert_eq!(status, 200);
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("CDF of TTFT"));

    // Seeds and the saturation search, of a generated workload (a trace
    // with this router draws nothing, and its sessions never saturate).
    let generated = printed_spec(&[
        "--synthetic",
        "--requests",
        "200",
        "--rate",
        "20",
        "--slo-ttft-ms",
        "500",
    ]);
    let seeds = accepted(&s, "seeds", json!({"spec": generated, "seeds": 3}));
    let generated_file = write(&dir, "generated.json", &generated);
    let cli = cli_json(&[
        "replay",
        "--spec",
        &generated_file,
        "--seeds",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(without_host(&done_report(&s, &seeds)), without_host(&cli));
    let sat = accepted(
        &s,
        "saturate",
        json!({"spec": generated, "rate_range": "5..400", "tolerance": 0.05}),
    );
    let cli = cli_json(&[
        "sweep",
        "saturate",
        "--spec",
        &generated_file,
        "--rate-range",
        "5..400",
        "--tolerance",
        "0.05",
        "--format",
        "json",
    ]);
    assert_eq!(without_host(&done_report(&s, &sat)), without_host(&cli));

    // A sweep with its grid inline, its base the upload.
    let grid = json!({"base": spec, "axes": {"topology.workers": [1, 2]}});
    let sweep = accepted(&s, "sweep", json!({"grid": grid, "best": true}));
    let lines: Value = serde_json::from_str(&done_report(&s, &sweep)).unwrap();
    let lines = lines.as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["axes"]["topology.workers"], 2);
    // The CLI's plan, run and merge of the same grid give the same lines.
    let grid_file = write(
        &dir,
        "grid.json",
        &json!({"base": local, "axes": {"topology.workers": [1, 2]}}),
    );
    let plan = dir.join("plan.jsonl").display().to_string();
    let runs = dir.join("runs").display().to_string();
    let merged = dir.join("merged.jsonl").display().to_string();
    cli_json(&["sweep", "plan", &grid_file, "--out", &plan]);
    cli_json(&["sweep", "run", &plan, "--out", &runs, "--quiet"]);
    cli_json(&["sweep", "merge", &runs, "--out", &merged]);
    let cli: Vec<Value> = std::fs::read_to_string(&merged)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, &cli);
    // `out` is the service's.
    let (status, err) = submit(
        &s,
        &json!({"kind": "sweep", "request": {"grid": grid, "out": "/tmp/x"}}),
    );
    assert_eq!(status, 400, "{err}");

    // The fleet planners, as their flags say.
    let fleet: [(&str, Value, Vec<&str>); 5] = [
        (
            "optimize",
            json!({"plan": {"lam": 50}, "verify_top": 1, "n_sim_req": 2000}),
            vec![
                "optimize",
                "--lam",
                "50",
                "--verify-top",
                "1",
                "--n-sim-req",
                "2000",
            ],
        ),
        (
            "pareto",
            json!({"plan": {"lam": 100}}),
            vec!["pareto", "--lam", "100"],
        ),
        (
            "disagg",
            json!({"lam": 100}),
            vec!["disagg", "--lam", "100"],
        ),
        (
            "simulate",
            json!({"plan": {"lam": 50}, "des": {"n_s": 3, "n_l": 6, "run": {"n_req": 2000}}}),
            vec![
                "simulate", "--lam", "50", "--n-s", "3", "--n-l", "6", "--n-req", "2000",
            ],
        ),
        (
            "whatif",
            json!({"lam_range": [50, 100]}),
            vec!["whatif", "--lam-range", "50,100"],
        ),
    ];
    let ids: Vec<String> = fleet
        .iter()
        .map(|(kind, request, _)| accepted(&s, kind, request.clone()))
        .collect();
    for ((kind, _, args), id) in fleet.iter().zip(&ids) {
        let cli = cli_json(&[&args[..], &["--format", "json"]].concat());
        assert_eq!(
            without_host(&done_report(&s, id)),
            without_host(&cli),
            "{kind}"
        );
    }

    // The measured-run jobs, on a run imported from a fixture (a file on
    // the server: this service allows it).
    let requests = dir.join("requests.jsonl");
    std::fs::write(&requests, common::REQUESTS).unwrap();
    let run = dir.join("run.json").display().to_string();
    cli_json(&[
        "measured",
        "import",
        requests.to_str().unwrap(),
        "--out",
        &run,
        "--profile",
        "h100/llama-3.1-8b",
    ]);
    let validate = accepted(&s, "validate", json!({"runs": [run]}));
    let cli = cli_json(&["validate", &run, "--format", "json"]);
    assert_eq!(
        without_host(&done_report(&s, &validate)),
        without_host(&cli)
    );
    let calibrate = accepted(
        &s,
        "calibrate",
        json!({"runs": [run], "max_evaluations": 20}),
    );
    let fitted = dir.join("fitted.json");
    let cli = cli_json(&[
        "calibrate",
        &run,
        "--max-evaluations",
        "20",
        "--format",
        "json",
        "--out",
        fitted.to_str().unwrap(),
    ]);
    assert_eq!(
        without_host(&done_report(&s, &calibrate)),
        without_host(&cli)
    );
    let (status, ours) = get(&s, &format!("/api/jobs/{calibrate}/fitted.json"));
    assert_eq!(status, 200);
    assert_eq!(ours, std::fs::read_to_string(&fitted).unwrap());

    // A request that does not read as its kind's: a 400 naming the field.
    let (status, err) = submit(&s, &json!({"kind": "disagg", "request": {"lam": "fast"}}));
    assert_eq!(status, 400);
    assert!(
        err["error"].as_str().unwrap().starts_with("request/lam: "),
        "{err}"
    );
    let (status, err) = submit(&s, &json!({"kind": "nope", "request": {}}));
    assert_eq!(status, 400);
    assert!(err["error"].as_str().unwrap().contains("replay"), "{err}");
    // An upload that is not there.
    let mut missing = spec.clone();
    missing["workload"]["path"] = json!("upload:t0000000000000000");
    let (status, err) = submit(&s, &json!({"kind": "replay", "request": missing}));
    assert_eq!(status, 400, "{err}");

    // A job that fails says why; its outputs are not there.
    let mut bad = spec.clone();
    bad["topology"]["workers"] = json!(0);
    let (status, v) = submit(&s, &json!({"kind": "replay", "request": bad}));
    if status == 202 {
        let id = v["id"].as_str().unwrap();
        let v = wait(&s, id);
        assert_eq!(v["state"], "failed", "{v}");
        assert!(!v["error"].as_str().unwrap().is_empty());
        assert_eq!(get(&s, &format!("/api/jobs/{id}/report")).0, 409);
    } else {
        assert_eq!(status, 400, "{v}");
    }

    // An error about an upload names it as the client does, not by the
    // server's folders.
    let mut stretched = spec.clone();
    stretched["admission"]["speedup"] = json!(1e-10);
    let id_stretched = accepted(&s, "replay", stretched);
    let v = wait(&s, &id_stretched);
    assert_eq!(v["state"], "failed", "{v}");
    let text = v["error"].as_str().unwrap();
    assert!(text.contains(&format!("line 2 of upload:{id}")), "{text}");
    assert!(!text.contains(data.to_str().unwrap()), "{text}");

    // Lists filter by state; deleting a trace and a job.
    let all = ok_json(&s, "/api/jobs").as_array().unwrap().len();
    let done = ok_json(&s, "/api/jobs?state=done")
        .as_array()
        .unwrap()
        .len();
    assert!(done >= 11 && done <= all, "{done} of {all}");
    assert_eq!(get(&s, "/api/jobs?state=nope").0, 400);
    assert_eq!(
        call("DELETE", &format!("{}/api/jobs/{sweep}", s.url), None, None).0,
        204
    );
    assert_eq!(get(&s, &format!("/api/jobs/{sweep}")).0, 404);
    assert_eq!(
        call("DELETE", &format!("{}/api/traces/{id}", s.url), None, None).0,
        204
    );
    assert_eq!(ok_json(&s, "/api/traces"), json!([]));
    s.kill();
}

/// A replay long enough to be caught running: a synthetic workload.
fn slow_spec(requests: u64) -> Value {
    printed_spec(&[
        "--synthetic",
        "--requests",
        &requests.to_string(),
        "--rate",
        "200",
        "--workers",
        "2",
    ])
}

#[test]
fn a_killed_service_loses_nothing() {
    let dir = temp_dir("serve-kill");
    let data = dir.join("data");
    let s = Server::start(&data, &["--workers", "1"], &[]);
    let demo = std::fs::read(fixture("demo_sessions.jsonl")).unwrap();
    let (_, trace) = upload(&s, "demo.jsonl", &demo);
    let mut ids = vec![accepted(&s, "replay", slow_spec(200_000))];
    let mut spec = printed_spec(&[&fixture("demo_sessions.jsonl"), "--workers", "2"]);
    spec["workload"]["path"] = json!(format!("upload:{}", trace["id"].as_str().unwrap()));
    for _ in 0..3 {
        ids.push(accepted(&s, "replay", spec.clone()));
    }
    // SIGKILL while the first runs and the others wait.
    let started = Instant::now();
    while ok_json(&s, &format!("/api/jobs/{}", ids[0]))["state"] != "running" {
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
    }
    s.kill();
    let jobs = data.canonicalize().unwrap().join("jobs");
    let on_disk = |id: &str| -> Value {
        serde_json::from_slice(&std::fs::read(jobs.join(id).join("job.json")).unwrap()).unwrap()
    };
    assert_eq!(on_disk(&ids[0])["state"], "running");
    assert_eq!(on_disk(&ids[3])["state"], "queued");
    // What a kill mid-write leaves: a torn report under its temporary name,
    // a half-received upload.
    std::fs::write(jobs.join(&ids[0]).join(".tmp-report.json"), "{\"torn").unwrap();
    let torn_upload = data.join("traces").join(".tmp-t0123456789abcdef");
    std::fs::create_dir_all(&torn_upload).unwrap();
    std::fs::write(torn_upload.join("trace.jsonl"), "{\"timest").unwrap();

    let s = Server::start(&data, &["--workers", "1"], &[]);
    // Nothing torn is served while the jobs run again.
    let (status, _) = get(&s, &format!("/api/jobs/{}/report", ids[0]));
    assert!(status == 409 || status == 200, "{status}");
    assert_eq!(ok_json(&s, "/api/traces"), json!([trace.clone()]));
    assert!(!torn_upload.exists());
    let reports: Vec<String> = ids.iter().map(|id| done_report(&s, id)).collect();
    assert!(!jobs.join(&ids[0]).join(".tmp-report.json").exists());
    // The same bytes as the CLI's runs of the same specs.
    let local = write(&dir, "slow.json", &slow_spec(200_000));
    let cli = cli_json(&["replay", "--spec", &local, "--format", "json"]);
    assert_eq!(without_host(&reports[0]), without_host(&cli));
    for r in &reports[2..] {
        assert_eq!(without_host(r), without_host(&reports[1]));
    }
    // A second service on the same folder is refused.
    let o = command()
        .args(["serve", "--bind", "127.0.0.1:0", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("another aisim serve"));
    assert!(stdout(&o).is_empty());

    // SIGTERM stops it gracefully: the running job stays to run again.
    let long = accepted(&s, "replay", slow_spec(2_000_000));
    while ok_json(&s, &format!("/api/jobs/{long}"))["state"] != "running" {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut s = s;
    let term = std::process::Command::new("kill")
        .args(["-TERM", &s.pid().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = s.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(on_disk(&long)["state"], "running");
    // The lock is released: the next start takes it.
    let s = Server::start(&data, &["--workers", "1"], &[]);
    let state = ok_json(&s, &format!("/api/jobs/{long}"))["state"].clone();
    assert!(state == "running" || state == "queued", "{state}");
    assert_eq!(cancel(&s, &long), 200);
    assert_eq!(wait(&s, &long)["state"], "cancelled");
    s.kill();
}

#[test]
fn jobs_are_cancelled_queued_or_running() {
    let dir = temp_dir("serve-cancel");
    let s = Server::start(&dir.join("data"), &["--workers", "1"], &[]);
    let running = accepted(&s, "replay", slow_spec(2_000_000));
    let queued = accepted(&s, "replay", slow_spec(100));
    let started = Instant::now();
    while ok_json(&s, &format!("/api/jobs/{running}"))["state"] != "running" {
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
    }
    // Progress is the replay's: requests dispatched of all.
    let started = Instant::now();
    loop {
        let v = ok_json(&s, &format!("/api/jobs/{running}"));
        let p = &v["progress"];
        if p["done"].as_u64().unwrap_or(0) > 0 {
            assert_eq!(p["unit"], "requests");
            assert_eq!(p["total"], 2_000_000);
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{v}");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(cancel(&s, &queued), 200);
    assert_eq!(
        ok_json(&s, &format!("/api/jobs/{queued}"))["state"],
        "cancelled"
    );
    assert_eq!(cancel(&s, &running), 200);
    let v = wait(&s, &running);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert_eq!(get(&s, &format!("/api/jobs/{running}/report")).0, 409);
    // Nothing is left half-written in its folder.
    let folder = dir
        .join("data")
        .canonicalize()
        .unwrap()
        .join("jobs")
        .join(&running);
    let left: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["job.json".to_string()]);
    assert_eq!(cancel(&s, &running), 409);
    s.kill();
}

/// Cancels a job: the status.
fn cancel(s: &Server, id: &str) -> u16 {
    call(
        "POST",
        &format!("{}/api/jobs/{id}/cancel", s.url),
        None,
        Some(b""),
    )
    .0
}

/// The service's peak resident memory, KiB (Linux).
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn two_hundred_jobs_from_eight_clients_all_finish() {
    let dir = temp_dir("serve-load");
    let s = Server::start(&dir.join("data"), &["--workers", "2"], &[]);
    let spec = printed_spec(&[
        "--synthetic",
        "--requests",
        "300",
        "--rate",
        "50",
        "--workers",
        "2",
    ]);
    let ids: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (s, spec) = (&s, &spec);
                scope.spawn(move || {
                    (0..25)
                        .map(|_| accepted(s, "replay", spec.clone()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(ids.len(), 200);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 200, "ids are unique");
    let first = without_host(&done_report(&s, &ids[0]));
    for id in &ids[1..] {
        assert_eq!(without_host(&done_report(&s, id)), first);
    }
    let done = ok_json(&s, "/api/jobs?state=done");
    assert_eq!(done.as_array().unwrap().len(), 200);
    if let Some(kib) = peak_kib(s.pid()) {
        eprintln!(
            "peak resident memory of the service after 200 jobs: {} MiB",
            kib / 1024
        );
        assert!(kib < 512 * 1024, "peak {kib} KiB");
    }
    s.kill();
}

#[test]
fn the_token_paths_and_names_are_guarded() {
    let dir = temp_dir("serve-guard");
    // No token on another address: refused before listening.
    let o = command()
        .args(["serve", "--bind", "0.0.0.0:0", "--data"])
        .arg(dir.join("open"))
        .env_remove("AISIM_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    assert!(
        common::stderr(&o).contains("token"),
        "{}",
        common::stderr(&o)
    );

    let token = "s3cret-token-0123456789";
    let s = Server::start(&dir.join("data"), &[], &[("AISIM_TOKEN", token)]);
    let url = |p: &str| format!("{}{p}", s.url);
    assert_eq!(call("GET", &url("/api/jobs"), None, None).0, 401);
    assert_eq!(
        call(
            "GET",
            &url("/healthz"),
            Some("wrong-token-0123456789"),
            None
        )
        .0,
        401
    );
    assert_eq!(call("GET", &url("/api/jobs"), Some(token), None).0, 200);
    // The page holds no data: it loads, and asks for the token.
    let (status, page) = call("GET", &url("/"), None, None);
    assert_eq!(status, 200);
    assert!(page.contains("Token"));
    // Ids that try to leave the data folder.
    for bad in [
        "..%2F..%2Fetc%2Fpasswd",
        "..",
        "j..%2F..%2F",
        "t0123456789abcdef",
    ] {
        for what in ["jobs", "traces"] {
            let (status, body) = call(
                "GET",
                &url(&format!("/api/{what}/{bad}")),
                Some(token),
                None,
            );
            assert_eq!(status, 404, "{what}/{bad}: {body}");
            assert!(body.contains("\"error\""), "{body}");
        }
        let (status, _) = call(
            "GET",
            &url(&format!("/api/jobs/{bad}/report")),
            Some(token),
            None,
        );
        assert_eq!(status, 404);
    }
    drop(s);

    // Without --allow-local-files a request names uploads, not server files.
    let s = Server::start(&dir.join("data2"), &[], &[]);
    let mut spec = printed_spec(&[&fixture("demo_sessions.jsonl")]);
    spec["workload"]["path"] = json!("/etc/passwd");
    let (status, err) = submit(&s, &json!({"kind": "replay", "request": spec}));
    assert_eq!(status, 400);
    let text = err["error"].as_str().unwrap();
    assert!(
        text.contains("/workload/path") && text.contains("upload:ID"),
        "{text}"
    );
    let (status, _) = submit(
        &s,
        &json!({"kind": "optimize", "request": {"plan": {"cdf": "trace:/etc/passwd", "lam": 5}}}),
    );
    assert_eq!(status, 400);
    // Too large an upload; a client that trickles its request is dropped.
    drop(s);
    let s = Server::start(
        &dir.join("data3"),
        &["--max-upload", "100", "--client-timeout", "1"],
        &[],
    );
    let started = Instant::now();
    let mut slow = std::net::TcpStream::connect(s.url.trim_start_matches("http://")).unwrap();
    use std::io::{Read, Write};
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut got = Vec::new();
    let _ = slow.read_to_end(&mut got);
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "dropped after {:?}",
        started.elapsed()
    );
    // Trickling the headers a byte at a time does not hold it either.
    let started = Instant::now();
    let mut drip = std::net::TcpStream::connect(s.url.trim_start_matches("http://")).unwrap();
    let dropped = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        .iter()
        .any(|b| {
            std::thread::sleep(Duration::from_millis(250));
            drip.write_all(&[*b]).is_err()
        });
    let mut got = Vec::new();
    drip.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let closed = dropped || drip.read_to_end(&mut got).is_ok();
    assert!(
        closed && got.is_empty() || String::from_utf8_lossy(&got).contains(" 408 "),
        "a trickled request was served: {}",
        String::from_utf8_lossy(&got)
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    let demo = std::fs::read(fixture("demo_sessions.jsonl")).unwrap();
    let (status, err) = upload(&s, "demo.jsonl", &demo);
    assert_eq!(status, 413, "{err}");
    assert_eq!(ok_json(&s, "/api/traces"), json!([]));
    s.kill();

    // A large upload whose check takes longer than the client timeout is
    // answered: only a client's own silence counts.
    let big = dir.join("big.jsonl");
    cli_json(&[
        "gen-trace",
        "--requests",
        "300000",
        "--rate",
        "1000",
        "--out",
        big.to_str().unwrap(),
    ]);
    let s = Server::start(&dir.join("data4"), &["--client-timeout", "1"], &[]);
    let (status, trace) = upload(&s, "big.jsonl", &std::fs::read(&big).unwrap());
    assert_eq!(status, 201, "{trace}");
    assert_eq!(trace["summary"]["rows"], 300000);
    s.kill();
}

#[test]
fn user_text_is_escaped_on_the_web_page() {
    let Some(browser) = browser::chromium() else {
        return;
    };
    let dir = temp_dir("serve-page");
    let s = Server::start(&dir.join("data"), &["--workers", "1"], &[]);
    let demo = std::fs::read(fixture("demo_sessions.jsonl")).unwrap();
    let (status, _) = upload(&s, "<script>alert(1)</script>.jsonl", &demo);
    assert_eq!(status, 201);
    let spec = printed_spec(&["--synthetic", "--requests", "20"]);
    let (status, v) = submit(
        &s,
        &json!({"kind": "replay", "request": spec, "name": "<img src=x onerror=alert(2)>"}),
    );
    assert_eq!(status, 202, "{v}");
    done_report(&s, v["id"].as_str().unwrap());
    let (dom, log) = browser::headless_url(
        &browser,
        &format!("{}/", s.url),
        "--dump-dom",
        &dir,
        "service",
        &["--virtual-time-budget=10000"],
    );
    assert_eq!(browser::console_errors(&log), 0, "console:\n{log}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page loaded its lists:\n{dom}"
    );
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;.jsonl"),
        "{dom}"
    );
    assert!(dom.contains("&lt;img src=x onerror=alert(2)&gt;"), "{dom}");
    assert!(!dom.contains("<script>alert(1)"));
    assert!(!dom.contains("<img src=\"x\""));
    // The form is built from the kinds' requests.
    assert!(dom.contains("data-field=\"workload\""), "{dom}");
    s.kill();
}
