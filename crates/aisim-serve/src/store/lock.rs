//! One service per data folder: a lock file holding the owner's pid,
//! created exclusively. A lock whose pid is no longer running (a killed
//! service) is taken over; a live one refuses the start.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::ServeError;

/// The lock, removed when dropped.
#[derive(Debug)]
pub struct DataLock {
    path: PathBuf,
}

/// The lock file's name in the data folder.
pub const LOCK_FILE: &str = "lock";

/// Whether a process with this pid runs (Linux's /proc; elsewhere any pid
/// is taken as running, so a stale lock must be removed by hand).
fn running(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

impl DataLock {
    /// Takes the lock of `data`.
    pub fn acquire(data: &Path) -> Result<DataLock, ServeError> {
        let path = data.join(LOCK_FILE);
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    writeln!(f, "{}", std::process::id())
                        .and_then(|_| f.sync_all())
                        .map_err(|e| ServeError::io(format!("writing {}", path.display()), e))?;
                    return Ok(DataLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    match text.trim().parse::<u32>() {
                        Ok(pid) if pid != std::process::id() && running(pid) => {
                            return Err(ServeError::Config(format!(
                                "{}: another aisim serve (pid {pid}) uses this data folder; stop it or give another --data",
                                data.display()
                            )))
                        }
                        // Its owner is gone (or the file is torn): take it over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(ServeError::io(format!("creating {}", path.display()), e)),
            }
        }
        Err(ServeError::Config(format!(
            "{}: cannot take the lock {LOCK_FILE}",
            data.display()
        )))
    }
}

impl Drop for DataLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_owner_refuses_a_dead_one_is_replaced() {
        let scratch = aisim_core::scratch::ScratchDir::new("serve-lock");
        let dir = scratch.path();
        // pid 1 runs on any Linux.
        std::fs::write(dir.join(LOCK_FILE), "1\n").unwrap();
        if Path::new("/proc/1").exists() {
            let e = DataLock::acquire(dir).unwrap_err();
            assert!(e.to_string().contains("pid 1"), "{e}");
        }
        // No process has pid 4294967295.
        std::fs::write(dir.join(LOCK_FILE), "4294967295\n").unwrap();
        let lock = DataLock::acquire(dir).unwrap();
        let mine = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert_eq!(mine.trim(), std::process::id().to_string());
        drop(lock);
        assert!(!dir.join(LOCK_FILE).exists());
    }
}
