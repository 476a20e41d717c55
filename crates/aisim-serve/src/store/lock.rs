//! One service per data folder: the lock file `DIR/lock`, held with the
//! operating system's exclusive advisory lock for the life of the process
//! (released by the system however the process ends, a SIGKILL included,
//! so there is no stale lock). The file also holds the owner's pid, for a
//! person to read.

use std::fs::{File, TryLockError};
use std::io::{Seek, Write};
use std::path::Path;

use crate::error::ServeError;

/// The lock, held while this lives.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
}

/// The lock file's name in the data folder.
pub const LOCK_FILE: &str = "lock";

impl DataLock {
    /// Takes the lock of `data`, or says who holds it.
    pub fn acquire(data: &Path) -> Result<DataLock, ServeError> {
        let path = data.join(LOCK_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| ServeError::io(format!("opening {}", path.display()), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let owner = std::fs::read_to_string(&path).unwrap_or_default();
                let owner = owner.trim();
                let who = if owner.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {owner})")
                };
                return Err(ServeError::Config(format!(
                    "{}: another aisim serve{who} uses this data folder; stop it or give another --data",
                    data.display()
                )));
            }
            Err(TryLockError::Error(e)) => {
                return Err(ServeError::io(format!("locking {}", path.display()), e))
            }
        }
        file.set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .map_err(|e| ServeError::io(format!("writing {}", path.display()), e))?;
        Ok(DataLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_released_one_is_taken() {
        let scratch = aisim_core::scratch::ScratchDir::new("serve-lock");
        let dir = scratch.path();
        // A lock file left by a killed service holds no lock.
        std::fs::write(dir.join(LOCK_FILE), "4294967295\n").unwrap();
        let lock = DataLock::acquire(dir).unwrap();
        let mine = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert_eq!(mine.trim(), std::process::id().to_string());
        let e = DataLock::acquire(dir).unwrap_err();
        assert!(e.to_string().contains("another aisim serve"), "{e}");
        assert!(e.is_usage());
        drop(lock);
        DataLock::acquire(dir).unwrap();
    }
}
