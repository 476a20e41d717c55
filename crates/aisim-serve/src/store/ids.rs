//! Ids the service makes: a letter for what it names (`t` a trace, `j` a
//! job) and 16 lowercase hex digits. Every id in a path is checked against
//! this shape before it touches the disk, so no path can leave the data
//! folder.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// Hex digits after the letter.
const DIGITS: usize = 16;

/// Makes unguessable-enough, never-repeating ids (a counter mixed into a
/// generator seeded from the clock and the process).
pub struct IdMaker {
    rng: Mutex<Pcg64>,
    count: AtomicU64,
}

impl IdMaker {
    /// A maker seeded from the clock and the process id.
    pub fn new() -> IdMaker {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let seed = nanos ^ (u64::from(std::process::id()) << 32);
        IdMaker {
            rng: Mutex::new(Pcg64::seed_from_u64(seed)),
            count: AtomicU64::new(0),
        }
    }

    /// A new id with the letter `kind`.
    pub fn make(&self, kind: char) -> String {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        let r = self
            .rng
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_u64();
        format!("{kind}{:016x}", r ^ n.rotate_left(48))
    }
}

impl Default for IdMaker {
    fn default() -> Self {
        IdMaker::new()
    }
}

/// Whether `id` is an id of kind `kind` as [`IdMaker`] makes them.
pub fn is_id(id: &str, kind: char) -> bool {
    let mut chars = id.chars();
    chars.next() == Some(kind)
        && id.len() == 1 + DIGITS
        && chars.all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_by_shape() {
        let m = IdMaker::new();
        let a = m.make('j');
        let b = m.make('j');
        assert_ne!(a, b);
        assert!(is_id(&a, 'j'));
        assert!(!is_id(&a, 't'));
        for bad in [
            "../../etc/passwd",
            "j",
            "j0123456789abcdeF",
            "j0123456789abcde/",
            "",
        ] {
            assert!(!is_id(bad, 'j'), "{bad}");
        }
    }
}
