//! Uploaded traces: each in `traces/ID/` with the file as uploaded and
//! `meta.json` (its name and figures). An upload is written into
//! `traces/.tmp-ID/`, read by the replay's own trace readers (a bad row is
//! refused naming its line and field), and only then renamed into place: a
//! trace listed is a trace whole and readable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use aisim_replay::trace::{read_trace, TraceFormat, TraceSummary};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ServeError};
use crate::store::atomic::{commit, remove_temporaries, sync_dir, write_atomic, TMP_PREFIX};
use crate::store::ids::{is_id, IdMaker};

/// Longest trace name, characters.
pub const MAX_NAME_CHARS: usize = 200;

/// The file of a trace's figures in its folder.
const META: &str = "meta.json";

/// What the service keeps of a trace besides its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    /// Its id (`t` and 16 hex digits); jobs name it `upload:ID`.
    pub id: String,
    /// The name it was uploaded under.
    pub name: String,
    /// The file's name in its folder (the extension the name had).
    pub file: String,
    /// Size, bytes.
    pub bytes: u64,
    /// When it was stored, ms since the Unix epoch.
    pub uploaded_unix_ms: u64,
    /// What it holds.
    pub summary: TraceSummary,
}

/// The traces of the data folder.
pub struct TraceStore {
    dir: PathBuf,
    traces: Mutex<BTreeMap<String, TraceInfo>>,
    ids: Arc<IdMaker>,
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A name as the API takes it: 1 to [`MAX_NAME_CHARS`] characters, no
/// control characters (it is shown on the page, escaped).
pub fn check_name(name: &str, what: &str) -> Result<(), ApiError> {
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(ApiError::bad(format!(
            "{what}: 1 to {MAX_NAME_CHARS} characters without control characters"
        )));
    }
    Ok(())
}

/// The stored file's name: `trace` with the name's extension when it is
/// one the readers detect a format by.
fn file_name(name: &str) -> String {
    let ext = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some(e @ ("jsonl" | "json" | "csv")) => format!("trace.{e}"),
        _ => "trace".to_string(),
    }
}

/// An upload begun: its folder under a temporary name, until committed.
pub struct PendingTrace {
    /// The id it will have.
    pub id: String,
    /// The name it was uploaded under.
    pub name: String,
    /// Its temporary folder.
    pub dir: PathBuf,
    /// The file being written.
    pub file: PathBuf,
}

impl PendingTrace {
    /// Throws the upload away.
    pub fn discard(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl TraceStore {
    /// The traces of `data/traces`, what a killed service left half-written removed.
    pub fn open(data: &Path, ids: Arc<IdMaker>) -> Result<TraceStore, ServeError> {
        let dir = data.join("traces");
        std::fs::create_dir_all(&dir)
            .map_err(|e| ServeError::io(format!("creating {}", dir.display()), e))?;
        remove_temporaries(&dir)
            .map_err(|e| ServeError::io(format!("cleaning {}", dir.display()), e))?;
        let mut traces = BTreeMap::new();
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ServeError::io(format!("reading {}", dir.display()), e))?;
        for entry in entries.flatten() {
            let id = entry.file_name().to_string_lossy().into_owned();
            if !is_id(&id, 't') {
                continue;
            }
            let meta = entry.path().join(META);
            match std::fs::read(&meta)
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice::<TraceInfo>(&b).map_err(|e| e.to_string()))
            {
                Ok(info) => {
                    traces.insert(id, info);
                }
                Err(e) => tracing::error!("{}: not read, left as it is: {e}", meta.display()),
            }
        }
        Ok(TraceStore {
            dir,
            traces: Mutex::new(traces),
            ids,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, TraceInfo>> {
        self.traces.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts an upload named `name`.
    pub fn begin(&self, name: &str) -> Result<PendingTrace, ApiError> {
        check_name(name, "name")?;
        let id = self.ids.make('t');
        let dir = self.dir.join(format!("{TMP_PREFIX}{id}"));
        std::fs::create_dir_all(&dir).map_err(|e| ApiError::internal("storing the upload", e))?;
        let file = dir.join(file_name(name));
        Ok(PendingTrace {
            id,
            name: name.to_string(),
            dir,
            file,
        })
    }

    /// Reads the uploaded file as a trace (`format` or detected) and, when
    /// it reads, commits it. Blocking: the whole trace is read.
    pub fn finish(
        &self,
        p: &PendingTrace,
        format: Option<TraceFormat>,
    ) -> Result<TraceInfo, ApiError> {
        let fail = |e: ApiError| {
            p.discard();
            e
        };
        let bytes = std::fs::metadata(&p.file)
            .map_err(|e| fail(ApiError::internal("storing the upload", e)))?
            .len();
        let data = read_trace(&p.file, format, None).map_err(|e| {
            // Named as the user named it, not by the server's path.
            let text = aisim_lab::jobs::JobError::from(e).to_string();
            let text = text.replace(&p.file.display().to_string(), &p.name);
            fail(ApiError::bad(text))
        })?;
        let info = TraceInfo {
            id: p.id.clone(),
            name: p.name.clone(),
            file: p
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            bytes,
            uploaded_unix_ms: now_ms(),
            summary: TraceSummary::of(&data),
        };
        let json = serde_json::to_vec_pretty(&info).expect("a trace's figures are JSON");
        let committed = write_atomic(&p.dir.join(META), &json)
            .and_then(|_| sync_dir(&p.dir))
            .and_then(|_| commit(&p.dir, &self.dir.join(&p.id)));
        committed.map_err(|e| fail(ApiError::internal("storing the upload", e)))?;
        self.lock().insert(p.id.clone(), info.clone());
        Ok(info)
    }

    /// Every trace, by id.
    pub fn list(&self) -> Vec<TraceInfo> {
        self.lock().values().cloned().collect()
    }

    /// One trace.
    pub fn get(&self, id: &str) -> Result<TraceInfo, ApiError> {
        self.lock()
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no trace {id}")))
    }

    /// The file of trace `id`.
    pub fn path(&self, id: &str) -> Option<PathBuf> {
        let traces = self.lock();
        let info = traces.get(id)?;
        Some(self.dir.join(id).join(&info.file))
    }

    /// `text` with each uploaded trace's file named as clients name it,
    /// `upload:ID`: a job's error does not show the server's folders.
    pub fn redact(&self, text: &str) -> String {
        let traces = self.lock();
        let mut out = text.to_string();
        for (id, info) in traces.iter() {
            let path = self.dir.join(id).join(&info.file).display().to_string();
            if out.contains(&path) {
                out = out.replace(&path, &format!("upload:{id}"));
            }
        }
        out
    }

    /// Deletes a trace (jobs that name it fail when they run).
    pub fn delete(&self, id: &str) -> Result<(), ApiError> {
        let mut traces = self.lock();
        if !traces.contains_key(id) {
            return Err(ApiError::not_found(format!("no trace {id}")));
        }
        let gone = self.dir.join(format!("{TMP_PREFIX}deleted-{id}"));
        commit(&self.dir.join(id), &gone)
            .map_err(|e| ApiError::internal("deleting the trace", e))?;
        traces.remove(id);
        drop(traces);
        let _ = std::fs::remove_dir_all(gone);
        Ok(())
    }
}
