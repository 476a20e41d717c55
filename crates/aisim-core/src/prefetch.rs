//! `prefetch`: a hint to start loading a value's cache line without waiting
//! for it, for loops that know the addresses they will need a few steps
//! ahead (the KV pool's evictions, the prefix index, the gaps' table).

/// A hint to start loading `x`'s cache line.
#[inline]
pub fn prefetch<T>(x: &T) {
    let p: *const T = x;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint to the cache: it never faults, reads
    // nothing into the program and writes nothing; the pointer is valid.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
