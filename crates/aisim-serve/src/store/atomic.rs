//! Files written so that a kill at any instant leaves either the old file
//! or the new one, never a torn one: each is written under a temporary
//! name, synced, renamed into place, and its folder synced. Whatever still
//! carries the temporary prefix on a start was never promised to anyone
//! and is removed.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// The prefix of every name not yet committed.
pub const TMP_PREFIX: &str = ".tmp-";

/// Syncs a folder, so that a rename in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes `bytes` to `path` atomically (temporary name, sync, rename, sync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!("{TMP_PREFIX}{name}"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    commit(&tmp, path)
}

/// Renames a finished temporary file or folder into place and syncs the
/// folder that holds it.
pub fn commit(tmp: &Path, path: &Path) -> io::Result<()> {
    std::fs::rename(tmp, path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Removes every entry of `dir` whose name carries [`TMP_PREFIX`]: what a
/// killed service left half-written.
pub fn remove_temporaries(dir: &Path) -> io::Result<u64> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_whole_and_temporaries_are_swept() {
        let scratch = aisim_core::scratch::ScratchDir::new("serve-atomic");
        let dir = scratch.path().to_path_buf();
        let p = dir.join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        std::fs::write(dir.join(".tmp-torn"), b"{\"half").unwrap();
        std::fs::create_dir(dir.join(".tmp-folder")).unwrap();
        assert_eq!(remove_temporaries(&dir).unwrap(), 2);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("a.json")]);
    }
}
