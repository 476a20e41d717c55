//! Output files that can neither clobber an input nor be left half-written
//! (docs/errors.md, "Output files"). Every front end follows the same two
//! rules, so they live here:
//!
//! - Before any work, every output path is resolved (symlinks, `..`, hard
//!   links) and compared with every input and every other output; a clash
//!   names both flags, and nothing is touched. An output whose folder does
//!   not exist is refused then too, not after the work.
//! - An output is written to a temporary name beside it and renamed over
//!   the final name only when complete: a failed or interrupted run leaves
//!   the final name as it was (at most a `.NAME.tmp-PID-N` file beside it).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output path was refused.
#[derive(Debug, thiserror::Error)]
pub enum OutputPathError {
    /// An output is an input, or another output.
    #[error("{output_flag} {output} is also {other_flag} {other}: {why}")]
    Clash {
        /// The output's flag.
        output_flag: String,
        /// The output as given.
        output: String,
        /// The other flag.
        other_flag: String,
        /// The other path as given.
        other: String,
        /// What would have happened.
        why: &'static str,
    },
    /// An output's folder does not exist (or is not a folder).
    #[error("{flag} {path}: the folder {folder} does not exist")]
    NoFolder {
        /// The output's flag.
        flag: String,
        /// The output as given.
        path: String,
        /// Its folder.
        folder: String,
    },
}

/// A path as one file: the canonical path of what exists (symlinks and
/// `..` resolved), else its canonical folder joined with its name; and the
/// file's identity (device, inode) when it exists, so hard links compare
/// equal too.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolved {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Resolved {
    fn same(&self, other: &Resolved) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

fn resolve(path: &Path) -> Option<Resolved> {
    if let Ok(canonical) = path.canonicalize() {
        let inode = std::fs::metadata(&canonical).ok().and_then(|m| inode(&m));
        return Some(Resolved {
            path: canonical,
            inode,
        });
    }
    let name = path.file_name()?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let folder = folder.canonicalize().ok().filter(|f| f.is_dir())?;
    Some(Resolved {
        path: folder.join(name),
        inode: None,
    })
}

/// Refuses, before any work, an output that is an input or another output,
/// and an output whose folder does not exist. `inputs` and `outputs` are
/// (flag, path) pairs; the flags name them in the error.
pub fn check_outputs(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
) -> Result<(), OutputPathError> {
    let inputs: Vec<(&str, &Path, Option<Resolved>)> =
        inputs.iter().map(|(f, p)| (*f, *p, resolve(p))).collect();
    let mut seen: Vec<(&str, &Path, Resolved)> = Vec::new();
    for (flag, path) in outputs {
        let Some(out) = resolve(path) else {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            return Err(OutputPathError::NoFolder {
                flag: flag.to_string(),
                path: path.display().to_string(),
                folder: folder.display().to_string(),
            });
        };
        let clash = |other_flag: &str, other: &Path, why| OutputPathError::Clash {
            output_flag: flag.to_string(),
            output: path.display().to_string(),
            other_flag: other_flag.to_string(),
            other: other.display().to_string(),
            why,
        };
        for (in_flag, in_path, resolved) in &inputs {
            if resolved.as_ref().is_some_and(|r| r.same(&out)) {
                return Err(clash(
                    in_flag,
                    in_path,
                    "writing it would destroy the input; give the output another name",
                ));
            }
        }
        for (other_flag, other_path, other) in &seen {
            if other.same(&out) {
                return Err(clash(
                    other_flag,
                    other_path,
                    "one output would overwrite the other; give each its own name",
                ));
            }
        }
        seen.push((flag, path, out));
    }
    Ok(())
}

/// Distinguishes the temporary files one process has open at once.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// The temporary name an output is written under: beside it, hidden, with
/// this process's id (so whoever cleans up can tell a live writer's file).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Whether `name` is a temporary file (`.NAME.tmp-PID` or
/// `.NAME.tmp-PID-N`) whose writer is provably gone: its process no longer
/// runs. A live writer's file, or one whose writer cannot be told (no
/// `/proc`), is never taken for stale.
pub fn stale_temp(name: &str) -> bool {
    if !name.starts_with('.') {
        return false;
    }
    let Some(at) = name.rfind(".tmp-") else {
        return false;
    };
    let rest = &name[at + ".tmp-".len()..];
    let pid = rest.split('-').next().unwrap_or("");
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let proc = Path::new("/proc");
    pid != std::process::id() && proc.is_dir() && !proc.join(pid.to_string()).exists()
}

/// A file written under a temporary name and renamed over its final name by
/// [`AtomicFile::commit`]; dropped uncommitted, it removes the temporary.
/// A path that exists and is no regular file (`/dev/null`, a FIFO,
/// `/dev/stdout`) is written in place: it cannot be replaced, only fed.
#[derive(Debug)]
pub struct AtomicFile {
    /// The temporary name, `None` when writing in place.
    temp: Option<PathBuf>,
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file of `path` (or opens `path` itself when it
    /// is a device, FIFO or other non-regular file).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        // Through a symlink, the file it names is replaced, not the link.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let special = std::fs::metadata(&path).is_ok_and(|m| !m.is_file());
        let temp = (!special).then(|| temp_path(&path));
        let file = File::create(temp.as_deref().unwrap_or(&path))?;
        Ok(AtomicFile {
            temp,
            path,
            file: Some(BufWriter::new(file)),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes and syncs the whole file, then renames it over the final name.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("committed once");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        let Some(temp) = self.temp.take() else {
            return Ok(()); // written in place, flushed
        };
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("open until committed").write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("open until committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (Some(_), Some(temp)) = (self.file.take(), &self.temp) {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Writes `bytes` to `path` whole, or leaves `path` as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;

    #[test]
    fn an_output_that_is_an_input_by_any_name_is_refused() {
        let dir = ScratchDir::new("out_file_clash");
        let trace = dir.path().join("t.jsonl");
        std::fs::write(&trace, "x").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dotted = sub.join("../t.jsonl");
        let linked = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&trace, &linked).unwrap();
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&trace, &hard).unwrap();
        for same in [&trace, &dotted, &linked, &hard] {
            let e = check_outputs(&[("TRACE", &trace)], &[("--per-request", same)]).unwrap_err();
            let text = e.to_string();
            assert!(text.starts_with("--per-request "), "{text}");
            assert!(text.contains("is also TRACE"), "{text}");
        }
        // Two outputs, one not yet existing, named two ways.
        let out = dir.path().join("r.json");
        let e =
            check_outputs(&[], &[("--out", &out), ("--html", &sub.join("../r.json"))]).unwrap_err();
        assert!(e.to_string().contains("is also --out"), "{e}");
        // Distinct files pass; a missing folder is refused before any work.
        check_outputs(
            &[("TRACE", &trace)],
            &[("--out", &out), ("--html", &sub.join("r.html"))],
        )
        .unwrap();
        let e = check_outputs(&[], &[("--out", &dir.path().join("none/r.json"))]).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert_eq!(std::fs::read_to_string(&trace).unwrap(), "x");
    }

    #[test]
    fn only_a_dead_writers_temporary_is_stale() {
        let me = std::process::id();
        assert!(!stale_temp(&format!(".r.json.tmp-{me}")), "a live writer's");
        assert!(!stale_temp(&format!(".results.jsonl.tmp-{me}-3")));
        // Pid 1 runs as long as the machine does.
        assert!(!stale_temp(".r.json.tmp-1"));
        // A pid above the kernel's limit (2^22) never runs.
        assert!(stale_temp(".r.json.tmp-4194305"));
        assert!(stale_temp(".results.jsonl.tmp-4194305-0"));
        for not_temp in [
            "r.json",
            ".r.json",
            ".r.json.tmp-",
            ".r.json.tmp-x1",
            "r.json.tmp-4194305",
        ] {
            assert!(!stale_temp(not_temp), "{not_temp}");
        }
    }

    #[test]
    fn a_file_is_replaced_only_when_complete() {
        let dir = ScratchDir::new("out_file_atomic");
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").unwrap();
        {
            let mut f = AtomicFile::create(&path).unwrap();
            f.write_all(b"half").unwrap();
            // Dropped without commit: the old file stays, no temporary is left.
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Through a symlink the file is replaced and the link kept.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        write_atomic(&link, b"linked").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "linked");
        // A device is fed, never replaced (as root, a rename would replace it).
        write_atomic(Path::new("/dev/null"), b"gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }
}
