//! Stopping a long job from outside (Ctrl-C in the Python module): a flag
//! the caller sets, which every replay checks between passes. The flag is
//! ambient to the thread that runs the job ([`with_flag`]) and is handed on
//! to the simulation pool's workers (`thread_pool`), so a study of many
//! runs (seeds, sweeps, the saturation search) stops as a lone run does,
//! with no parameter through every layer. Without a flag nothing is checked.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Puts the previous flag back when dropped (also when `f` panics).
struct Restore(Option<Arc<AtomicBool>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let before = self.0.take();
        FLAG.with(|c| *c.borrow_mut() = before);
    }
}

/// Sets its flag when dropped, however its scope is left (a panic
/// included): how a thread tells the helpers it started to stop.
pub struct SetOnDrop<'a>(pub &'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `f` with `flag` as this thread's cancel flag.
pub fn with_flag<T>(flag: Option<Arc<AtomicBool>>, f: impl FnOnce() -> T) -> T {
    let _restore = Restore(FLAG.with(|c| c.replace(flag)));
    f()
}

/// This thread's cancel flag, if a caller set one.
pub fn current() -> Option<Arc<AtomicBool>> {
    FLAG.with(|c| c.borrow().clone())
}

/// Whether `flag` asks to stop.
pub fn is_set(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}
