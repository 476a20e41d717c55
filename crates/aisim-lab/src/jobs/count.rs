//! Counts given as text (a flag's value, a workload form's `N`): a whole
//! number by the readers' rule, every front end with the same words.

use aisim_core::number::Number;

/// A whole number in `T`'s range, by the readers' rule (`300`, `300.0` and
/// `3e2` are 300; `1e300` is out of range, not "not a whole number"), with
/// the reason when it is not. The reason names no lower bound: this parser
/// serves every count flag, and a flag's own least value (`--workers` 1) is
/// checked where it is used, so "0 or more" would be false for some.
pub fn whole<T: TryFrom<i128> + Unsigned>(s: &str) -> Result<T, String> {
    let number = Number::of_text(s.trim())
        .ok_or_else(|| format!("must be a whole number (e.g. 8), not `{s}`"))?;
    let v = number.whole(0, T::LARGEST as i128).map_err(|e| {
        let e = e.to_string();
        if e.contains("is negative") {
            format!("`{}` is negative: a count is expected", s.trim())
        } else if e.contains("out of range") {
            format!("`{}` is out of range (at most {})", s.trim(), T::LARGEST)
        } else {
            e
        }
    })?;
    T::try_from(v).map_err(|_| format!("`{s}` is out of range (at most {})", T::LARGEST))
}

/// The largest value of each unsigned type, widened (std has no trait for it).
pub trait Unsigned {
    /// The type's largest value.
    const LARGEST: u128;
}

macro_rules! unsigned {
    ($($t:ty),*) => { $( impl Unsigned for $t { const LARGEST: u128 = <$t>::MAX as u128; } )* };
}
unsigned!(u8, u16, u32, u64, usize);
