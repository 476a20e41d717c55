//! `LO..HI`: the range a saturation search covers, both ends finite and
//! above 0, `LO` below `HI`.

use std::fmt;
use std::str::FromStr;

use aisim_core::number::float;
use serde::{Deserialize, Serialize};

/// A searched range, `lo < hi`, both finite and above 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    /// Low end.
    pub lo: f64,
    /// High end.
    pub hi: f64,
}

/// Why a `LO..HI` text is not a range (the flag is named by whoever read it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RangeError(String);

impl FromStr for Range {
    type Err = RangeError;

    fn from_str(text: &str) -> Result<Range, RangeError> {
        let bad = |why: String| RangeError(format!("{why} (give LO..HI, e.g. 1..50)"));
        let Some((lo, hi)) = text.split_once("..") else {
            return Err(bad(format!("`{text}` has no `..`")));
        };
        let end = |name: &str, s: &str| -> Result<f64, RangeError> {
            let s = s.trim();
            if s.is_empty() {
                return Err(bad(format!("{name} is missing")));
            }
            let v: f64 = s
                .parse()
                .map_err(|_| bad(format!("{name} `{s}` is not a number")))?;
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(format!("{name} {s} must be a finite number above 0")));
            }
            Ok(v)
        };
        let (lo, hi) = (end("LO", lo)?, end("HI", hi)?);
        if lo >= hi {
            return Err(bad(format!(
                "LO {} must be below HI {}",
                float(lo),
                float(hi)
            )));
        }
        Ok(Range { lo, hi })
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", float(self.lo), float(self.hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        for (text, why) in [
            ("5..1", "LO 5 must be below HI 1"),
            ("3..3", "LO 3 must be below HI 3"),
            ("0..", "LO 0 must be a finite number above 0"),
            ("1..", "HI is missing"),
            ("..4", "LO is missing"),
            ("a..b", "LO `a` is not a number"),
            ("1..b", "HI `b` is not a number"),
            ("-1..5", "LO -1 must be a finite number above 0"),
            ("1..inf", "HI inf must be a finite number above 0"),
            ("nan..2", "LO nan must be a finite number above 0"),
            ("7", "`7` has no `..`"),
        ] {
            let e = text.parse::<Range>().unwrap_err().to_string();
            assert_eq!(e, format!("{why} (give LO..HI, e.g. 1..50)"), "{text}");
        }
    }

    proptest! {
        #[test]
        fn every_ordered_positive_pair_round_trips(a in 1e-6f64..1e9, b in 1e-6f64..1e9) {
            prop_assume!(a != b);
            let (lo, hi) = (a.min(b), a.max(b));
            let r: Range = format!("{lo}..{hi}").parse().unwrap();
            prop_assert_eq!(r, Range { lo, hi });
            prop_assert_eq!(r.to_string().parse::<Range>().unwrap(), r);
        }
    }
}
