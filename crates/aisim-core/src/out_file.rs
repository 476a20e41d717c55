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
//!   the final name as it was (at most a `.NAME.tmp-HOST~PID~N` file beside
//!   it).

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
        // A device, FIFO or terminal is fed, never replaced or read back:
        // two outputs on `/dev/null` destroy nothing.
        if special(path) {
            continue;
        }
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

/// This machine's name as temporary names carry it (`~` and `/` are taken
/// out), or `None` where it cannot be read.
fn host() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name: String = name
        .trim()
        .chars()
        .map(|c| if c == '~' || c == '/' { '_' } else { c })
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Who writes a temporary file, as its name ends: `HOST~PID`. A folder may
/// be shared by processes of several machines (a job array's shards): a PID
/// means something only on the host that gave it.
pub fn temp_owner() -> String {
    format!(
        "{}~{}",
        host().unwrap_or_else(|| "unknown".into()),
        std::process::id()
    )
}

/// The temporary name an output is written under: beside it, hidden, with
/// its writer (`.NAME.tmp-HOST~PID~N`), so whoever cleans up can tell a
/// live writer's file.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.tmp-{}~{n}", temp_owner()))
}

/// Whether `name` is a temporary file (`.NAME.tmp-HOST~PID`, maybe `~N`
/// after) whose writer is provably gone: written on this host, by a process
/// that no longer runs. Another host's file, a live writer's, or one whose
/// writer cannot be told (no `/proc`, no host name) is never stale.
pub fn stale_temp(name: &str) -> bool {
    if !name.starts_with('.') {
        return false;
    }
    let Some(at) = name.rfind(".tmp-") else {
        return false;
    };
    let mut owner = name[at + ".tmp-".len()..].split('~');
    let (Some(their_host), Some(pid)) = (owner.next(), owner.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let proc = Path::new("/proc");
    host().is_some_and(|h| h == their_host)
        && pid != std::process::id()
        && proc.is_dir()
        && !proc.join(pid.to_string()).exists()
}

/// Whether an output at `path` is written where it is, not through a
/// temporary: a path that exists and is no regular file (`/dev/null`, a
/// FIFO, a terminal), anything under `/dev` or `/proc` (`/dev/stdout`, which
/// may lead to the shell's own log file), and a file with other hard links
/// (replacing it would split them).
fn fed_in_place(path: &Path) -> bool {
    special(path) || std::fs::metadata(path).is_ok_and(|m| links(&m) > 1)
}

/// A path no output replaces or reads back: one under `/dev` or `/proc`,
/// or one that exists and is no regular file.
fn special(path: &Path) -> bool {
    path.starts_with("/dev")
        || path.starts_with("/proc")
        || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

#[cfg(unix)]
fn links(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    m.nlink()
}

#[cfg(not(unix))]
fn links(_: &std::fs::Metadata) -> u64 {
    1
}

/// A file written under a temporary name and renamed over its final name by
/// [`AtomicFile::commit`]; dropped uncommitted (or failing to commit), it
/// removes the temporary. The replacement keeps the old file's permissions
/// (and, where allowed, owner); a file the user may not write is refused as
/// before. Where a temporary cannot be used (see `fed_in_place`, a folder
/// that takes no new file, a rename the system refuses), the file is
/// written in place, as a plain create would.
#[derive(Debug)]
pub struct AtomicFile {
    /// The temporary name, `None` when writing in place.
    temp: Option<PathBuf>,
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file of `path` (or opens `path` itself, see above).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        if fed_in_place(path) {
            return Self::in_place(path);
        }
        // Through a symlink, the file it names is replaced, not the link.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let old = std::fs::metadata(&path).ok();
        if let Some(m) = &old {
            // A file the user may not write is not replaced behind their
            // back (a rename needs only the folder): opened for writing,
            // not truncated, as a plain write would have been refused.
            if m.permissions().readonly() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the file is read-only",
                ));
            }
            std::fs::OpenOptions::new().write(true).open(&path)?;
        }
        let temp = temp_path(&path);
        let Ok(file) = File::create(&temp) else {
            return Self::in_place(&path);
        };
        if let Some(m) = &old {
            let _ = file.set_permissions(m.permissions());
            same_owner(&temp, m);
        }
        Ok(AtomicFile {
            temp: Some(temp),
            path,
            file: Some(BufWriter::new(file)),
        })
    }

    fn in_place(path: &Path) -> io::Result<AtomicFile> {
        Ok(AtomicFile {
            temp: None,
            path: path.to_path_buf(),
            file: Some(BufWriter::new(File::create(path)?)),
        })
    }

    /// Flushes and syncs the whole file, then renames it over the final
    /// name (or, where the system refuses the rename, copies it there).
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("committed once");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        let Some(temp) = &self.temp else {
            return Ok(()); // written in place, flushed
        };
        file.sync_all()?;
        drop(file);
        if std::fs::rename(temp, &self.path).is_err() {
            // A bind-mounted file, another file system, a sticky folder:
            // the content goes in place rather than being lost.
            std::fs::copy(temp, &self.path)?;
            let _ = std::fs::remove_file(temp);
        }
        self.temp = None;
        Ok(())
    }
}

#[cfg(unix)]
fn same_owner(temp: &Path, old: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let _ = std::os::unix::fs::chown(temp, Some(old.uid()), Some(old.gid()));
}

#[cfg(not(unix))]
fn same_owner(_: &Path, _: &std::fs::Metadata) {}

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
        // Uncommitted, or a commit that failed: the temporary goes.
        if let Some(temp) = self.temp.take() {
            drop(self.file.take());
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
    fn only_a_dead_writers_temporary_on_this_host_is_stale() {
        let me = temp_owner();
        let host = host().expect("a Linux host has a name");
        assert!(!stale_temp(&format!(".r.json.tmp-{me}")), "a live writer's");
        assert!(!stale_temp(&format!(".results.jsonl.tmp-{me}~3")));
        // Pid 1 runs as long as the machine does.
        assert!(!stale_temp(&format!(".r.json.tmp-{host}~1")));
        // A pid above the kernel's limit (2^22) never runs, here.
        assert!(stale_temp(&format!(".r.json.tmp-{host}~4194305")));
        assert!(stale_temp(&format!(".results.jsonl.tmp-{host}~4194305~0")));
        // On another host it may well run.
        assert!(!stale_temp(".r.json.tmp-elsewhere~4194305"));
        assert!(temp_path(Path::new("/d/r.json"))
            .to_string_lossy()
            .starts_with(&format!("/d/.r.json.tmp-{me}~")));
        for not_temp in [
            "r.json",
            ".r.json",
            ".r.json.tmp-",
            ".r.json.tmp-x1",
            "r.json.tmp-h~1",
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
