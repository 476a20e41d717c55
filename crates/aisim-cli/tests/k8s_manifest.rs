//! The shipped Kubernetes manifest (deploy/k8s/sweep-job.yaml), read with a
//! real YAML parser: its Indexed Job, the shard count it gives `aisim sweep
//! run`, the shared volume, and the merge Job that reads what the shards wrote.

mod common;
#[path = "common/sweep_share.rs"]
mod sweep_share;

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../deploy/k8s/sweep-job.yaml"
);

/// Every document of the manifest, in order.
fn documents() -> Vec<Value> {
    let text = std::fs::read_to_string(MANIFEST).unwrap_or_else(|e| panic!("{MANIFEST}: {e}"));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{MANIFEST}: {e}")))
        .collect()
}

/// The one object of `kind` labelled `app.kubernetes.io/component: component`.
fn object<'a>(docs: &'a [Value], kind: &str, component: &str) -> &'a Value {
    let found: Vec<&Value> = docs
        .iter()
        .filter(|d| {
            d["kind"] == kind && d["metadata"]["labels"]["app.kubernetes.io/component"] == component
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{MANIFEST}: want one {kind} of component {component}, found {}",
        found.len()
    );
    found[0]
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}

/// The value after `flag` in `args`.
fn flag<'a>(args: &[&'a str], flag: &str) -> &'a str {
    let at = args
        .iter()
        .position(|a| *a == flag)
        .unwrap_or_else(|| panic!("no {flag} in {args:?}"));
    args.get(at + 1)
        .unwrap_or_else(|| panic!("{flag} without a value in {args:?}"))
}

/// Where a pod spec mounts its one volume, and the claim that volume is.
struct Volume<'a> {
    mount: &'a str,
    claim: &'a str,
}

fn volume(pod_spec: &Value) -> Volume<'_> {
    let containers = pod_spec["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1, "one container per pod");
    let mounts = containers[0]["volumeMounts"]
        .as_array()
        .expect("volumeMounts");
    assert_eq!(mounts.len(), 1, "one volume: the sweep's");
    let volumes = pod_spec["volumes"].as_array().expect("volumes");
    let declared = volumes
        .iter()
        .find(|v| v["name"] == mounts[0]["name"])
        .expect("the mounted volume is declared");
    Volume {
        mount: mounts[0]["mountPath"].as_str().expect("mountPath"),
        claim: declared["persistentVolumeClaim"]["claimName"]
            .as_str()
            .expect("a PersistentVolumeClaim volume"),
    }
}

/// A Job's pod: the arguments its container gives `aisim`, its volume and
/// its cpu request.
struct Pod<'a> {
    args: Vec<&'a str>,
    volume: Volume<'a>,
    cpu_request: &'a str,
}

fn pod(job: &Value) -> Pod<'_> {
    let spec = &job["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert_eq!(strings(&c["command"]), ["aisim"]);
    Pod {
        args: strings(&c["args"]),
        volume: volume(spec),
        cpu_request: c["resources"]["requests"]["cpu"]
            .as_str()
            .expect("a cpu request"),
    }
}

fn under<'a>(path: &'a str, mount: &str) -> &'a str {
    path.strip_prefix(mount)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or_else(|| panic!("{path} is not on the volume mounted at {mount}"))
}

#[test]
fn the_sweep_job_is_indexed_and_its_completions_are_the_shards_it_passes() {
    let docs = documents();
    let job = object(&docs, "Job", "sweep");
    let spec = &job["spec"];
    assert_eq!(
        spec["completionMode"], "Indexed",
        "JOB_COMPLETION_INDEX is set only in an Indexed Job"
    );
    let completions = spec["completions"]
        .as_u64()
        .expect("completions: a whole number");
    assert!(completions >= 1);
    assert!(spec["parallelism"].as_u64().expect("parallelism") <= completions);
    let pod = pod(job);
    assert_eq!(&pod.args[..2], ["sweep", "run"], "{:?}", pod.args);
    let shards: u64 = flag(&pod.args, "--shards")
        .parse()
        .expect("--shards: a whole number");
    assert_eq!(
        shards, completions,
        "--shards and completions must be the same count"
    );
    // Threads match the CPUs the pod asks for.
    assert_eq!(flag(&pod.args, "--threads"), pod.cpu_request);
    // The index comes from Kubernetes, never from the manifest.
    let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
    assert!(
        env.is_null(),
        "the container sets no environment of its own: {env}"
    );
}

#[test]
fn plan_and_results_are_on_the_shared_claim_and_the_merge_reads_them() {
    let docs = documents();
    let claim = object(&docs, "PersistentVolumeClaim", "volume");
    assert!(
        strings(&claim["spec"]["accessModes"]).contains(&"ReadWriteMany"),
        "pods on several nodes write to it"
    );
    let claim_name = claim["metadata"]["name"].as_str().unwrap();

    // The pod for `kubectl cp` sees the files where the Jobs' pods do.
    let files = volume(&object(&docs, "Pod", "volume")["spec"]);
    assert_eq!(files.claim, claim_name);

    let sweep = pod(object(&docs, "Job", "sweep"));
    assert_eq!(sweep.volume.claim, claim_name);
    assert_eq!(sweep.volume.mount, files.mount);
    let plan = sweep.args[2];
    assert!(
        !plan.starts_with('-'),
        "the plan is sweep run's first argument: {:?}",
        sweep.args
    );
    under(plan, sweep.volume.mount);
    let dir = flag(&sweep.args, "--out");
    let dir_on_volume = under(dir, sweep.volume.mount);

    let merge_job = object(&docs, "Job", "merge");
    assert_eq!(
        merge_job["spec"]["completionMode"],
        Value::Null,
        "the merge is one pod"
    );
    let merge = pod(merge_job);
    assert_eq!(merge.volume.claim, claim_name);
    assert_eq!(&merge.args[..2], ["sweep", "merge"], "{:?}", merge.args);
    assert_eq!(
        under(merge.args[2], merge.volume.mount),
        dir_on_volume,
        "merge reads the sweep's DIR"
    );
    under(flag(&merge.args, "--out"), merge.volume.mount);
}

/// A pod's arguments with its mount path swapped for the folder `volume`.
fn on_volume(pod: &Pod, volume: &Path) -> Vec<String> {
    let mount = pod.volume.mount;
    pod.args
        .iter()
        .map(
            |arg| match arg.strip_prefix(mount).filter(|rest| rest.starts_with('/')) {
                Some(rest) => format!("{}{rest}", volume.display()),
                None => arg.to_string(),
            },
        )
        .collect()
}

/// The sweep Job's pods, run here one after another: the volume is a scratch
/// folder, each pod is the container's own arguments with the mount path
/// swapped for it and JOB_COMPLETION_INDEX set as Kubernetes sets it.
#[test]
fn each_completion_index_runs_its_own_share_and_together_they_cover_the_plan_once() {
    let docs = documents();
    let job = object(&docs, "Job", "sweep");
    let completions = job["spec"]["completions"].as_u64().unwrap() as usize;
    let sweep = pod(job);
    let volume = common::temp_dir("k8s-volume");
    let ids = sweep_share::ci_plan(&volume.join(under(sweep.args[2], sweep.volume.mount)));
    let dir = volume.join(under(flag(&sweep.args, "--out"), sweep.volume.mount));
    let args = on_volume(&sweep, &volume);
    let mut shards = sweep_share::Shards::new(ids, completions);
    for index in 0..completions {
        let out = common::command()
            .args(&args)
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("SLURM_ARRAY_TASK_COUNT")
            .env_remove("SLURM_ARRAY_TASK_MIN")
            .output()
            .unwrap();
        shards.ran(index, &format!("index {index}"), &out, &dir);
    }
    shards.ran_all();

    // The merge Job over what they wrote gives what a complete `sweep run` wrote.
    let merge = pod(object(&docs, "Job", "merge"));
    let merged = volume.join(under(flag(&merge.args, "--out"), merge.volume.mount));
    let written_by_last_shard = std::fs::read(dir.join("results.jsonl"))
        .expect("the shard that completed DIR wrote results.jsonl");
    // The manifest merges into that very file: written again, not kept.
    let _ = std::fs::remove_file(&merged);
    let out = common::command()
        .args(on_volume(&merge, &volume))
        .output()
        .unwrap();
    assert!(out.status.success(), "merge: {}", common::stderr(&out));
    assert_eq!(std::fs::read(&merged).unwrap(), written_by_last_shard);
}
