//! The one rule every reader applies to counts and ids, whether the number
//! came from JSON, from a CSV cell or from a command-line flag: a number that is exactly whole is read,
//! in any form (`300`, `300.0`, `3e2`); a fraction is an error; a whole number
//! outside the field's range is an error of its own that states the range.
//! A number written with a fraction or an exponent is read as a 64-bit float:
//! exact up to 15 significant digits (`serde_json` rounds longer ones within
//! a unit in the last place), and above 2^53 it may not be the integer that
//! was written at all, so it is refused: such a number must be written as an
//! integer.

use std::fmt;

/// A number as a reader found it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// Written as an integer that fits 64 bits (unsigned).
    Unsigned(u64),
    /// Written as a negative integer that fits 64 bits.
    Negative(i64),
    /// Written with a fraction or exponent, or an integer too large for 64 bits.
    Float(f64),
}

/// Largest integer every float below it represents exactly.
const EXACT_FLOAT: f64 = 9_007_199_254_740_992.0; // 2^53

/// Why a number is not a value of its field.
#[derive(Debug, Clone, PartialEq)]
pub enum NumberError {
    /// Not whole (or not finite).
    NotWhole(String),
    /// Whole, but outside `lo ..= hi`.
    OutOfRange {
        /// The number as written (or as [`float`] quotes it).
        text: String,
        /// Lowest value of the field.
        lo: i128,
        /// Highest value of the field.
        hi: i128,
    },
    /// Whole, written as a float above 2^53: not read exactly.
    Inexact(String),
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::NotWhole(t) => write!(f, "`{t}` is not a whole number"),
            NumberError::OutOfRange { text, lo, hi } => {
                let what = if *lo == 0 && text.starts_with('-') {
                    "negative"
                } else {
                    "out of range"
                };
                write!(f, "`{text}` is {what} (allowed: {lo} ..= {hi})")
            }
            NumberError::Inexact(t) => write!(
                f,
                "`{t}` is beyond 2^53 in float form and cannot be read exactly; write it as an integer"
            ),
        }
    }
}

impl std::error::Error for NumberError {}

impl Number {
    /// A JSON number.
    pub fn of_json(n: &serde_json::Number) -> Number {
        if let Some(u) = n.as_u64() {
            Number::Unsigned(u)
        } else if let Some(i) = n.as_i64() {
            Number::Negative(i)
        } else {
            Number::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// A CSV cell or a flag's value (already trimmed), or `None` when it is
    /// not a number.
    pub fn of_text(s: &str) -> Option<Number> {
        if let Ok(u) = s.parse::<u64>() {
            return Some(Number::Unsigned(u));
        }
        if let Ok(i) = s.parse::<i64>() {
            return Some(Number::Negative(i));
        }
        // Only what JSON would call a number (no `inf`, `nan`, hex...).
        let numeric = !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        numeric.then(|| s.parse::<f64>().ok().map(Number::Float))?
    }

    /// The value as a whole number within `lo ..= hi`.
    pub fn whole(self, lo: i128, hi: i128) -> Result<i128, NumberError> {
        let text = self.to_string();
        let v = match self {
            Number::Unsigned(u) => u as i128,
            Number::Negative(i) => i as i128,
            Number::Float(x) if !x.is_finite() || x.fract() != 0.0 => {
                return Err(NumberError::NotWhole(text))
            }
            // Beyond i128 (1e300): surely out of range; saturating is fine here.
            Number::Float(x) => {
                let v = x as i128;
                if (lo..=hi).contains(&v) && x.abs() > EXACT_FLOAT {
                    return Err(NumberError::Inexact(text));
                }
                v
            }
        };
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(NumberError::OutOfRange { text, lo, hi })
        }
    }

    /// A whole number that fits `u32`.
    pub fn to_u32(self) -> Result<u32, NumberError> {
        self.whole(0, u32::MAX as i128).map(|v| v as u32)
    }

    /// A whole number that fits `u64`.
    pub fn to_u64(self) -> Result<u64, NumberError> {
        self.whole(0, u64::MAX as i128).map(|v| v as u64)
    }

    /// A whole number that fits `i64`.
    pub fn to_i64(self) -> Result<i64, NumberError> {
        self.whole(i64::MIN as i128, i64::MAX as i128)
            .map(|v| v as i64)
    }
}

/// A text as messages quote it: at most 40 characters of it.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// A float as messages quote it: in exponent form when the plain one would
/// run to many digits (`1e300`, not three hundred zeros).
pub fn float(x: f64) -> String {
    if x.abs() >= 1e16 || (x != 0.0 && x.abs() < 1e-6) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Below this magnitude a figure in human output is floating-point noise
/// around zero (what is left of a difference of two nearly equal doubles,
/// 1.4e-17): no figure aisim reports (ms, tokens, rates, shares,
/// coefficients) means anything there, and [`rounded`] shows it as `0`.
pub const NOISE: f64 = 1e-9;

/// The significant digits of human output (tables, HTML, progress,
/// messages): [`rounded`]'s usual precision.
pub const HUMAN_DIGITS: usize = 4;

/// `x` for a person to read: `significant` significant digits but every
/// digit before the point (97,804.2286 is `97804` at 4, 2.3900002 is
/// `2.39`), trailing zeros dropped, noise around zero ([`NOISE`]) as `0`,
/// the exponent form beyond 10^15, `inf`, `-inf` and `NaN` as such. JSON
/// keeps the full value; this is for tables, pages and messages.
pub fn rounded(x: f64, significant: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x.abs() < NOISE {
        return "0".into();
    }
    let significant = significant.max(1);
    if x.abs() >= 1e15 {
        let s = format!("{:.*e}", significant - 1, x);
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{exponent}", trim_zeros(mantissa));
    }
    let magnitude = x.abs().log10().floor() as i64;
    let decimals = (significant as i64 - 1 - magnitude).max(0) as usize;
    let s = trim_zeros(&format!("{x:.decimals$}")).to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A decimal without the zeros (and point) that end its fraction.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A value as an error message quotes it: floats through [`float`], so
/// `1e308` is not three hundred digits; the rest as they display.
pub trait Quoted {
    /// The quoted text.
    fn quoted(&self) -> String;
}

impl Quoted for f64 {
    fn quoted(&self) -> String {
        float(*self)
    }
}

impl Quoted for f32 {
    fn quoted(&self) -> String {
        float(f64::from(*self))
    }
}

macro_rules! quoted_as_displayed {
    ($($t:ty),*) => { $( impl Quoted for $t { fn quoted(&self) -> String { self.to_string() } } )* };
}
quoted_as_displayed!(u8, u16, u32, u64, usize, i32, i64, str, String);

impl<T: Quoted + ?Sized> Quoted for &T {
    fn quoted(&self) -> String {
        (**self).quoted()
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Unsigned(u) => write!(f, "{u}"),
            Number::Negative(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{}", float(*x)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_figures_keep_their_meaningful_digits() {
        for (x, want) in [
            (2.3900002241470846, "2.39"),
            (97_804.228_6, "97804"),
            (0.000_005_322_610_499_292_057_5, "0.000005323"),
            (0.000_000_000_000_000_013_877_787_807_814_457, "0"),
            (-1.4e-17, "0"),
            (0.0, "0"),
            (-0.00004, "-0.00004"),
            (9.99996, "10"),
            (123.456_789, "123.5"),
            (1.0, "1"),
            (1e300, "1e300"),
            (-2.5e16, "-2.5e16"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(rounded(x, HUMAN_DIGITS), want, "{x:e}");
        }
        assert_eq!(rounded(0.123_456, 2), "0.12");
        assert_eq!(rounded(0.123_456, 0), "0.1", "at least one digit");
    }
    use proptest::prelude::*;

    fn json(s: &str) -> Number {
        Number::of_json(&serde_json::from_str(s).unwrap())
    }

    #[test]
    fn whole_forms_agree_and_range_is_its_own_error() {
        for s in ["300", "300.0", "3e2", "3E2", "30000e-2", "3.0e+2"] {
            assert_eq!(json(s).to_u32(), Ok(300), "{s}");
            assert_eq!(Number::of_text(s).unwrap().to_u32(), Ok(300), "{s}");
        }
        for s in ["300.5", "3.5e0", "1e-3"] {
            assert!(
                matches!(json(s).to_u32(), Err(NumberError::NotWhole(_))),
                "{s}"
            );
            assert!(
                matches!(
                    Number::of_text(s).unwrap().to_u32(),
                    Err(NumberError::NotWhole(_))
                ),
                "{s}"
            );
        }
        for s in ["1e300", "18446744073709551616", "4294967296", "-1", "-1.0"] {
            let e = json(s).to_u32().unwrap_err();
            assert!(matches!(e, NumberError::OutOfRange { .. }), "{s}: {e}");
            assert!(e.to_string().contains("0 ..= 4294967295"), "{e}");
            let word = if s.starts_with('-') {
                "negative"
            } else {
                "out of range"
            };
            assert!(e.to_string().contains(word), "{e}");
            assert_eq!(Number::of_text(s).unwrap().to_u32().unwrap_err(), e, "{s}");
        }
        assert_eq!(json("18446744073709551615").to_u64(), Ok(u64::MAX));
        assert!(matches!(
            json("18446744073709551616").to_u64(),
            Err(NumberError::OutOfRange { .. })
        ));
        assert!(matches!(
            json("9007199254740994.0").to_u64(),
            Err(NumberError::Inexact(_))
        ));
        assert_eq!(json("9007199254740992.0").to_u64(), Ok(1 << 53));
        assert_eq!(json("-1.0").to_i64(), Ok(-1));
        for s in ["", "inf", "NaN", "0x10", "ten", "1,5"] {
            assert_eq!(Number::of_text(s), None, "{s}");
        }
    }

    proptest! {
        /// Any integer of up to 14 digits, written as an integer, a float or
        /// with an exponent, reads as itself in JSON and in CSV.
        #[test]
        fn every_written_form_of_a_whole_number_reads_as_it(v in 0u64..100_000_000_000_000, form in 0..3) {
            let s = match form {
                0 => v.to_string(),
                1 => format!("{v}.0"),
                _ => format!("{:e}", v as f64),
            };
            prop_assert_eq!(json(&s).to_u64(), Ok(v));
            prop_assert_eq!(Number::of_text(&s).unwrap().to_u64(), Ok(v));
        }
    }
}
