//! A scratch folder that is removed when dropped (also when a test panics),
//! for the unit tests of every crate: cargo gives integration tests their
//! own `CARGO_TARGET_TMPDIR`, unit tests nothing, so theirs live in the
//! system's temp folder and must not outlive the test.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh, empty folder under the system's temp folder, unique to this
/// process and this call (tests run in parallel threads, binaries at once).
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `aisim-NAME-PID-N`, panicking if it cannot (a test's setup).
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aisim-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        ScratchDir(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a folder already gone is no failure of the test.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_folder_is_fresh_and_gone_once_dropped() {
        let (a, b) = (ScratchDir::new("scratch"), ScratchDir::new("scratch"));
        assert_ne!(a.path(), b.path());
        std::fs::write(a.path().join("f"), "x").unwrap();
        let p = a.path().to_path_buf();
        assert!(p.join("f").exists());
        drop(a);
        assert!(!p.exists());
        let kept = b.path().to_path_buf();
        let r = std::panic::catch_unwind(move || {
            let _b = b;
            panic!("a failing test");
        });
        assert!(r.is_err());
        assert!(!kept.exists(), "removed on a panic too");
    }
}
