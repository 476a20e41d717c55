//! Jobs: each in `jobs/ID/` with `job.json` (its kind, request, state and
//! times) and, once done, its outputs (`report.json`, `report.html`,
//! `requests.jsonl`). A job is told to its client only after `job.json` is
//! on disk; its state moves queued -> running -> done | failed | cancelled,
//! each move written atomically. On a start, jobs found queued or running
//! are queued again in the order they were submitted (a run is
//! deterministic, so the rerun writes the same bytes) and their partial
//! outputs removed.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use aisim_report::job::{JobKind, JobSink};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ServeError};
use crate::resolve::resolve;
use crate::store::atomic::{commit, remove_temporaries, sync_dir, write_atomic, TMP_PREFIX};
use crate::store::ids::{is_id, IdMaker};
use crate::traces::{now_ms, TraceStore};

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a worker.
    Queued,
    /// A worker runs it.
    Running,
    /// Finished; its outputs are there.
    Done,
    /// Stopped by an error (`error` says which).
    Failed,
    /// Cancelled by a client.
    Cancelled,
}

impl JobState {
    /// Whether it will not change again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Failed | JobState::Cancelled
        )
    }
}

/// What `job.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Its id (`j` and 16 hex digits).
    pub id: String,
    /// Submission order (the queue's order, also after a restart).
    pub seq: u64,
    /// The job.
    pub kind: JobKind,
    /// A name the client gave, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where it is.
    pub state: JobState,
    /// The request as submitted (uploads named `upload:ID`); left out of lists.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub request: Value,
    /// Why it failed (for a job cancelled while it ran, how its run ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A client asked to cancel it while it ran: a restart does not run it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_requested: bool,
    /// When it was submitted, ms since the Unix epoch.
    pub submitted_unix_ms: u64,
    /// When its (last) run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_unix_ms: Option<u64>,
    /// Per-request records written (a replay's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<u64>,
    /// The outputs it has: `report.json`, `report.html`, `requests.jsonl`,
    /// `fitted.json`.
    #[serde(default)]
    pub outputs: Vec<String>,
}

impl JobRecord {
    /// The record without its request (which may be large), for lists.
    pub fn without_request(&self) -> JobRecord {
        JobRecord {
            id: self.id.clone(),
            seq: self.seq,
            kind: self.kind,
            name: self.name.clone(),
            state: self.state,
            request: Value::Null,
            error: self.error.clone(),
            cancel_requested: self.cancel_requested,
            submitted_unix_ms: self.submitted_unix_ms,
            started_unix_ms: self.started_unix_ms,
            finished_unix_ms: self.finished_unix_ms,
            records: self.records,
            outputs: self.outputs.clone(),
        }
    }
}

/// How far a running job got, in its kind's unit.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    /// `u64::MAX` while unknown.
    total: AtomicU64,
}

/// A job's progress as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ProgressView {
    /// Done so far.
    pub done: u64,
    /// Of how many, when known.
    pub total: Option<u64>,
    /// What is counted.
    pub unit: &'static str,
}

struct Entry {
    record: JobRecord,
    cancel: Arc<AtomicBool>,
    progress: Arc<Progress>,
}

struct Inner {
    jobs: BTreeMap<String, Entry>,
    queue: VecDeque<String>,
    next_seq: u64,
    stopping: bool,
}

/// The jobs of the data folder, their queue and their workers' handshake.
pub struct JobStore {
    dir: PathBuf,
    inner: Mutex<Inner>,
    wake: Condvar,
    ids: Arc<IdMaker>,
    traces: Arc<TraceStore>,
    allow_local: bool,
}

/// The outputs a job may have, with their media types.
pub const OUTPUTS: [(&str, &str); 4] = [
    ("report.json", "application/json"),
    ("report.html", "text/html; charset=utf-8"),
    ("requests.jsonl", "application/x-ndjson"),
    ("fitted.json", "application/json"),
];

const RECORD: &str = "job.json";

/// Writes a job's record into its folder.
fn save(dir: &Path, r: &JobRecord) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(r).expect("a job record is JSON");
    write_atomic(&dir.join(&r.id).join(RECORD), &json)
}

impl JobStore {
    /// The jobs of `data/jobs`: unfinished ones queued again.
    pub fn open(
        data: &Path,
        ids: Arc<IdMaker>,
        traces: Arc<TraceStore>,
        allow_local: bool,
    ) -> Result<JobStore, ServeError> {
        let dir = data.join("jobs");
        let io = |what: &str, e| ServeError::io(format!("{what} {}", dir.display()), e);
        std::fs::create_dir_all(&dir).map_err(|e| io("creating", e))?;
        remove_temporaries(&dir).map_err(|e| io("cleaning", e))?;
        let mut jobs = BTreeMap::new();
        let mut pending = Vec::new();
        let mut next_seq = 0;
        for entry in std::fs::read_dir(&dir)
            .map_err(|e| io("reading", e))?
            .flatten()
        {
            let id = entry.file_name().to_string_lossy().into_owned();
            if !is_id(&id, 'j') {
                continue;
            }
            let folder = entry.path();
            let read = std::fs::read(folder.join(RECORD))
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice::<JobRecord>(&b).map_err(|e| e.to_string()));
            let mut record = match read {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!("{}: not read, left as it is: {e}", folder.display());
                    continue;
                }
            };
            remove_temporaries(&folder).map_err(|e| io("cleaning", e))?;
            if !record.state.is_final() {
                // Its outputs, if any, are from a run that did not finish.
                for (name, _) in OUTPUTS {
                    let _ = std::fs::remove_file(folder.join(name));
                }
                record.outputs.clear();
                if record.cancel_requested {
                    // Cancelled by a client, then stopped before it could end.
                    record.state = JobState::Cancelled;
                    record.finished_unix_ms = Some(now_ms());
                } else {
                    record.state = JobState::Queued;
                    record.started_unix_ms = None;
                    pending.push((record.seq, id.clone()));
                }
                save(&dir, &record).map_err(|e| io("writing a job in", e))?;
            }
            next_seq = next_seq.max(record.seq + 1);
            jobs.insert(
                id,
                Entry {
                    record,
                    cancel: Arc::default(),
                    progress: Arc::default(),
                },
            );
        }
        pending.sort();
        if !pending.is_empty() {
            tracing::info!(jobs = pending.len(), "jobs queued again after a restart");
        }
        Ok(JobStore {
            dir,
            inner: Mutex::new(Inner {
                jobs,
                queue: pending.into_iter().map(|(_, id)| id).collect(),
                next_seq,
                stopping: false,
            }),
            wake: Condvar::new(),
            ids,
            traces,
            allow_local,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The request as the library will read it, for a job in `folder`:
    /// uploads resolved; a sweep's results kept in the job's folder and an
    /// inline grid written there. With `write` false nothing is written
    /// (the check at submission).
    fn library_request(
        &self,
        kind: JobKind,
        request: &Value,
        folder: &Path,
        write: bool,
    ) -> Result<Value, ApiError> {
        let mut r = request.clone();
        resolve(&mut r, "request", &self.traces, self.allow_local)?;
        if kind == JobKind::Sweep {
            let Value::Object(map) = &mut r else {
                return Err(ApiError::bad("request: a sweep's request is an object"));
            };
            if map.contains_key("out") {
                return Err(ApiError::bad(
                    "request/out: the service keeps a sweep's results in the job's folder; leave `out` out",
                ));
            }
            map.insert(
                "out".into(),
                folder.join("sweep").display().to_string().into(),
            );
            if let Some(grid @ Value::Object(_)) = map.get("grid") {
                let path = folder.join("grid.json");
                if write {
                    let text = serde_json::to_vec_pretty(grid).expect("a grid is JSON");
                    write_atomic(&path, &text)
                        .map_err(|e| ApiError::internal("writing the sweep's grid", e))?;
                }
                map.insert("grid".into(), path.display().to_string().into());
            }
        }
        Ok(r)
    }

    /// Takes a job: checked (its request must read as `kind`'s), written
    /// to disk, then queued. Blocking (a sync to disk).
    pub fn submit(
        &self,
        kind: JobKind,
        request: Value,
        name: Option<String>,
    ) -> Result<JobRecord, ApiError> {
        if let Some(n) = &name {
            crate::traces::check_name(n, "name")?;
        }
        let id = self.ids.make('j');
        let folder = self.dir.join(&id);
        let resolved = self.library_request(kind, &request, &folder, false)?;
        aisim_report::job::check_request(kind, &resolved)
            .map_err(|e| ApiError::bad(e.to_string()))?;
        let tmp = self.dir.join(format!("{TMP_PREFIX}{id}"));
        // The number under the lock, the disk outside it (the HTTP threads
        // read the jobs meanwhile), the queue under it again.
        let seq = {
            let mut inner = self.lock();
            if inner.stopping {
                return Err(ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    "the service is stopping",
                ));
            }
            inner.next_seq += 1;
            inner.next_seq - 1
        };
        let record = JobRecord {
            id: id.clone(),
            seq,
            kind,
            name,
            state: JobState::Queued,
            request,
            error: None,
            cancel_requested: false,
            submitted_unix_ms: now_ms(),
            started_unix_ms: None,
            finished_unix_ms: None,
            records: None,
            outputs: Vec::new(),
        };
        let written = std::fs::create_dir_all(&tmp)
            .and_then(|_| {
                let json = serde_json::to_vec_pretty(&record).expect("a job record is JSON");
                write_atomic(&tmp.join(RECORD), &json)
            })
            .and_then(|_| sync_dir(&tmp))
            .and_then(|_| commit(&tmp, &folder));
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(ApiError::internal("storing the job", e));
        }
        let mut inner = self.lock();
        // Queued by number: a job written faster than an older one waits its turn.
        let at = inner
            .queue
            .iter()
            .position(|q| inner.jobs.get(q).is_some_and(|e| e.record.seq > seq))
            .unwrap_or(inner.queue.len());
        inner.queue.insert(at, id.clone());
        inner.jobs.insert(
            id,
            Entry {
                record: record.clone(),
                cancel: Arc::default(),
                progress: Arc::default(),
            },
        );
        drop(inner);
        self.wake.notify_one();
        Ok(record)
    }

    /// Every job (in submission order, without its request), `state` only
    /// when given.
    pub fn list(&self, state: Option<JobState>) -> Vec<(JobRecord, Option<ProgressView>)> {
        let inner = self.lock();
        let mut all: Vec<_> = inner
            .jobs
            .values()
            .filter(|e| state.is_none_or(|s| e.record.state == s))
            .map(|e| (e.record.without_request(), progress_of(e)))
            .collect();
        all.sort_by_key(|(r, _)| r.seq);
        all
    }

    /// One job, with its progress while it runs.
    pub fn get(&self, id: &str) -> Result<(JobRecord, Option<ProgressView>), ApiError> {
        let inner = self.lock();
        let e = inner
            .jobs
            .get(id)
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))?;
        Ok((e.record.clone(), progress_of(e)))
    }

    /// The file of output `name` of a done job.
    pub fn output(&self, id: &str, name: &str) -> Result<PathBuf, ApiError> {
        let (record, _) = self.get(id)?;
        if record.state != JobState::Done {
            return Err(ApiError::conflict(format!(
                "job {id} is {}: its outputs come when it is done",
                state_name(record.state)
            )));
        }
        if !record.outputs.iter().any(|o| o == name) {
            return Err(ApiError::not_found(format!(
                "job {id} ({}) has no {name}",
                record.kind.name()
            )));
        }
        Ok(self.dir.join(id).join(name))
    }

    /// Cancels a job: a queued one at once, a running one when its run
    /// next checks the flag (between passes).
    pub fn cancel(&self, id: &str) -> Result<JobRecord, ApiError> {
        let mut inner = self.lock();
        let e = inner
            .jobs
            .get_mut(id)
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))?;
        match e.record.state {
            JobState::Queued => {
                let mut record = e.record.clone();
                record.state = JobState::Cancelled;
                record.finished_unix_ms = Some(now_ms());
                save(&self.dir, &record).map_err(|e| ApiError::internal("cancelling", e))?;
                e.record = record.clone();
                inner.queue.retain(|q| q != id);
                Ok(record)
            }
            JobState::Running => {
                // On disk first: a stop before the run ends must not rerun it.
                let mut record = e.record.clone();
                record.cancel_requested = true;
                save(&self.dir, &record).map_err(|e| ApiError::internal("cancelling", e))?;
                e.record = record.clone();
                e.cancel.store(true, Ordering::Relaxed);
                Ok(record)
            }
            s => Err(ApiError::conflict(format!(
                "job {id} is {} already",
                state_name(s)
            ))),
        }
    }

    /// Deletes a job that is not running (cancel it first).
    pub fn delete(&self, id: &str) -> Result<(), ApiError> {
        let mut inner = self.lock();
        let e = inner
            .jobs
            .get(id)
            .ok_or_else(|| ApiError::not_found(format!("no job {id}")))?;
        if e.record.state == JobState::Running {
            return Err(ApiError::conflict(format!(
                "job {id} is running: cancel it first"
            )));
        }
        let gone = self.dir.join(format!("{TMP_PREFIX}deleted-{id}"));
        commit(&self.dir.join(id), &gone).map_err(|e| ApiError::internal("deleting the job", e))?;
        inner.jobs.remove(id);
        inner.queue.retain(|q| q != id);
        drop(inner);
        let _ = std::fs::remove_dir_all(gone);
        Ok(())
    }

    /// Stops handing out jobs and asks running ones to stop; they stay
    /// `running` on disk, so the next start runs them again.
    pub fn stop(&self) {
        let mut inner = self.lock();
        inner.stopping = true;
        for e in inner.jobs.values() {
            if e.record.state == JobState::Running {
                e.cancel.store(true, Ordering::Relaxed);
            }
        }
        drop(inner);
        self.wake.notify_all();
    }

    /// A worker's loop: takes the oldest queued job, runs it, records how
    /// it ended; returns when the store stops.
    pub fn work(&self) {
        while let Some((record, cancel, progress)) = self.next() {
            let id = record.id.clone();
            let outcome = self.run(&record, &cancel, &progress);
            self.finish(&id, outcome, &cancel);
        }
    }

    /// The next job to run, marked running; `None` once stopping.
    fn next(&self) -> Option<(JobRecord, Arc<AtomicBool>, Arc<Progress>)> {
        let mut inner = self.lock();
        loop {
            if inner.stopping {
                return None;
            }
            if let Some(id) = inner.queue.pop_front() {
                let Some(e) = inner.jobs.get_mut(&id) else {
                    continue;
                };
                e.record.state = JobState::Running;
                e.record.started_unix_ms = Some(now_ms());
                e.cancel.store(false, Ordering::Relaxed);
                e.progress.done.store(0, Ordering::Relaxed);
                e.progress.total.store(u64::MAX, Ordering::Relaxed);
                let record = e.record.clone();
                if let Err(err) = save(&self.dir, &record) {
                    tracing::error!("job {id}: cannot record its start: {err}");
                }
                return Some((record, e.cancel.clone(), e.progress.clone()));
            }
            inner = self.wake.wait(inner).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Runs a job into its folder: outputs under temporary names, each
    /// committed when whole.
    fn run(
        &self,
        record: &JobRecord,
        cancel: &Arc<AtomicBool>,
        progress: &Arc<Progress>,
    ) -> Result<Outcome, String> {
        let folder = self.dir.join(&record.id);
        let request = self
            .library_request(record.kind, &record.request, &folder, true)
            .map_err(|e| e.message)?;
        let records_tmp = folder.join(format!("{TMP_PREFIX}requests.jsonl"));
        let wants_records = record.kind == JobKind::Replay;
        let file = if wants_records {
            Some(BufWriter::new(
                std::fs::File::create(&records_tmp).map_err(|e| format!("writing records: {e}"))?,
            ))
        } else {
            None
        };
        let mut sink = Sink {
            progress: progress.clone(),
            file,
        };
        let kind = record.kind;
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            aisim_core::cancel::with_flag(Some(cancel.clone()), || {
                aisim_report::job::run_job(kind, &request, &mut sink)
            })
        }));
        let output =
            match ran {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => {
                    let internal = e.is_internal();
                    let text = aisim_lab::jobs::paragraph(e.into_boxed().as_ref());
                    let text = self.traces.redact(&text);
                    return Err(if internal {
                        format!("internal error: {text}; this is a bug in aisim, please report it")
                    } else {
                        text
                    });
                }
                Err(_) => return Err(
                    "internal error: the job panicked; this is a bug in aisim, please report it"
                        .into(),
                ),
            };
        let io = |e: std::io::Error| format!("writing the outputs: {e}");
        let mut outputs = Vec::new();
        if let Some(mut f) = sink.file.take() {
            f.flush().map_err(io)?;
            f.get_ref().sync_all().map_err(io)?;
            drop(f);
            commit(&records_tmp, &folder.join("requests.jsonl")).map_err(io)?;
            outputs.push("requests.jsonl".to_string());
        }
        write_atomic(&folder.join("report.json"), output.report.as_bytes()).map_err(io)?;
        outputs.insert(0, "report.json".to_string());
        if let Some(html) = &output.html {
            write_atomic(&folder.join("report.html"), html.as_bytes()).map_err(io)?;
            outputs.insert(1, "report.html".to_string());
        }
        if let Some(fitted) = &output.fitted {
            write_atomic(&folder.join("fitted.json"), fitted.as_bytes()).map_err(io)?;
            outputs.push("fitted.json".to_string());
        }
        Ok(Outcome {
            outputs,
            records: wants_records.then_some(output.records),
        })
    }

    /// Records how a run ended: unless the store is stopping (the run was
    /// cut short to stop the service: it stays `running` on disk, to run
    /// again on the next start).
    fn finish(&self, id: &str, outcome: Result<Outcome, String>, cancel: &AtomicBool) {
        let mut inner = self.lock();
        let stopping = inner.stopping;
        let Some(e) = inner.jobs.get_mut(id) else {
            return;
        };
        if stopping && outcome.is_err() && !e.record.cancel_requested {
            return;
        }
        match outcome {
            Ok(o) => {
                e.record.state = JobState::Done;
                e.record.outputs = o.outputs;
                e.record.records = o.records;
            }
            // How the run ended is kept: a failure met while stopping shows.
            Err(text) if cancel.load(Ordering::Relaxed) || e.record.cancel_requested => {
                e.record.state = JobState::Cancelled;
                e.record.error = Some(text);
            }
            Err(text) => {
                e.record.state = JobState::Failed;
                e.record.error = Some(text);
            }
        }
        e.record.finished_unix_ms = Some(now_ms());
        if let Err(err) = save(&self.dir, &e.record) {
            tracing::error!("job {id}: cannot record its end: {err}");
        }
        let folder = self.dir.join(id);
        if e.record.state != JobState::Done {
            let _ = remove_temporaries(&folder);
        }
    }
}

/// What a finished run left.
struct Outcome {
    outputs: Vec<String>,
    records: Option<u64>,
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Done => "done",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

fn progress_of(e: &Entry) -> Option<ProgressView> {
    if e.record.state != JobState::Running {
        return None;
    }
    let unit = e.record.kind.progress_unit()?;
    let total = e.progress.total.load(Ordering::Relaxed);
    Some(ProgressView {
        done: e.progress.done.load(Ordering::Relaxed),
        total: (total != u64::MAX).then_some(total),
        unit,
    })
}

/// A running job's sink: its progress, and its records file.
struct Sink {
    progress: Arc<Progress>,
    file: Option<BufWriter<std::fs::File>>,
}

impl JobSink for Sink {
    fn progress(&self, done: u64, total: Option<u64>) {
        self.progress.done.store(done, Ordering::Relaxed);
        self.progress
            .total
            .store(total.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    fn records(&mut self) -> Option<&mut dyn Write> {
        self.file.as_mut().map(|f| f as &mut dyn Write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, seq: u64, state: JobState, cancel_requested: bool) -> JobRecord {
        JobRecord {
            id: id.to_string(),
            seq,
            kind: JobKind::Disagg,
            name: None,
            state,
            request: serde_json::json!({"lam": 5}),
            error: None,
            cancel_requested,
            submitted_unix_ms: 0,
            started_unix_ms: None,
            finished_unix_ms: None,
            records: None,
            outputs: Vec::new(),
        }
    }

    #[test]
    fn a_restart_requeues_unfinished_jobs_in_order_but_not_cancelled_ones() {
        let scratch = aisim_core::scratch::ScratchDir::new("serve-jobs");
        let data = scratch.path();
        let jobs = data.join("jobs");
        let written = [
            record("j0000000000000002", 2, JobState::Running, false),
            record("j0000000000000001", 1, JobState::Queued, false),
            record("j0000000000000003", 3, JobState::Running, true),
            record("j0000000000000004", 4, JobState::Done, false),
        ];
        for r in &written {
            std::fs::create_dir_all(jobs.join(&r.id)).unwrap();
            save(&jobs, r).unwrap();
        }
        // A partial report of the running job, and a job folder never committed.
        std::fs::write(jobs.join("j0000000000000002/report.json"), "{").unwrap();
        std::fs::create_dir_all(jobs.join(".tmp-j0000000000000005")).unwrap();
        let ids = Arc::new(IdMaker::new());
        let traces = Arc::new(TraceStore::open(data, ids.clone()).unwrap());
        let store = JobStore::open(data, ids, traces, false).unwrap();
        let inner = store.lock();
        let queue: Vec<&str> = inner.queue.iter().map(String::as_str).collect();
        assert_eq!(queue, ["j0000000000000001", "j0000000000000002"]);
        assert_eq!(inner.next_seq, 5);
        let state = |id: &str| inner.jobs[id].record.state;
        assert_eq!(state("j0000000000000002"), JobState::Queued);
        assert_eq!(state("j0000000000000003"), JobState::Cancelled);
        assert_eq!(state("j0000000000000004"), JobState::Done);
        assert!(!jobs.join("j0000000000000002/report.json").exists());
        assert!(!jobs.join(".tmp-j0000000000000005").exists());
        let on_disk: JobRecord = serde_json::from_slice(
            &std::fs::read(jobs.join("j0000000000000003/job.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(on_disk.state, JobState::Cancelled);
    }
}
