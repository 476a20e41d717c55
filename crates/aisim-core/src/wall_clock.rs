//! Wall-clock timestamps as written in the Azure traces
//! (`2023-11-16 18:15:46.6805900`), to milliseconds since the Unix epoch.
//! Strict: every part has its fixed number of digits and must exist on the
//! proleptic Gregorian calendar (no 30 February, no hour 24, no leap second);
//! a time zone is `Z` or `±HH:MM`, and none means UTC. A reader's piece,
//! like `number.rs`: the trace readers call it on each timestamp cell.

use crate::number::shown;

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `digits` ASCII digits at the start of `s`, as a number, and the rest.
fn take_digits<'a>(s: &'a str, digits: usize, part: &str) -> Result<(i64, &'a str), String> {
    let head = s
        .get(..digits)
        .filter(|h| h.bytes().all(|b| b.is_ascii_digit()));
    match head {
        Some(h) => Ok((h.parse().expect("ASCII digits"), &s[digits..])),
        None => Err(format!("the {part} must be {digits} digits")),
    }
}

/// `sep` at the start of `s`, and the rest.
fn take_sep<'a>(s: &'a str, seps: &[char], after: &str) -> Result<&'a str, String> {
    s.strip_prefix(seps)
        .ok_or_else(|| format!("expected {seps:?} after the {after}"))
}

fn in_range(v: i64, lo: i64, hi: i64, part: &str) -> Result<i64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{part} {v} is not in {lo} ..= {hi}"))
    }
}

/// Parses `YYYY-MM-DD HH:MM:SS[.fraction][Z|±HH:MM]` (a `T` separator is
/// accepted; the fraction may have any number of digits).
pub fn parse_wall_clock_ms(text: &str) -> Result<f64, String> {
    let s = text.trim();
    parse(s).map_err(|why| {
        format!(
            "`{}` is not a timestamp like 2023-11-16 18:15:46.6805900: {why}",
            shown(s)
        )
    })
}

fn parse(s: &str) -> Result<f64, String> {
    let (y, s) = take_digits(s, 4, "year")?;
    let (mo, s) = take_digits(take_sep(s, &['-'], "year")?, 2, "month")?;
    let (d, s) = take_digits(take_sep(s, &['-'], "month")?, 2, "day")?;
    let (h, s) = take_digits(take_sep(s, &[' ', 'T'], "date")?, 2, "hour")?;
    let (mi, s) = take_digits(take_sep(s, &[':'], "hour")?, 2, "minute")?;
    let (se, s) = take_digits(take_sep(s, &[':'], "minute")?, 2, "second")?;
    let mo = in_range(mo, 1, 12, "month")?;
    let last = days_in_month(y, mo);
    if !(1..=last).contains(&d) {
        return Err(format!(
            "day {d} does not exist in {} {y} ({last} days)",
            MONTHS[mo as usize - 1]
        ));
    }
    let (h, mi, se) = (
        in_range(h, 0, 23, "hour")?,
        in_range(mi, 0, 59, "minute")?,
        in_range(se, 0, 59, "second")?,
    );
    let (frac, zone) = match s.strip_prefix('.') {
        Some(rest) => {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return Err("expected digits after the decimal point".into());
            }
            (&rest[..n], &rest[n..])
        }
        None => ("", s),
    };
    let offset_s = zone_offset_s(zone)?;
    let frac_s = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse::<f64>().expect("digits")
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset_s;
    Ok(secs as f64 * 1e3 + frac_s * 1e3)
}

/// Seconds east of UTC: nothing or `Z` is UTC, else `±HH:MM`.
fn zone_offset_s(zone: &str) -> Result<i64, String> {
    if zone.is_empty() || zone == "Z" {
        return Ok(0);
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => {
            return Err(format!(
                "`{}` after the seconds is not a time zone (Z or ±HH:MM)",
                shown(zone)
            ))
        }
    };
    let (h, rest) = take_digits(&zone[1..], 2, "zone hour")?;
    let (m, rest) = take_digits(take_sep(rest, &[':'], "zone hour")?, 2, "zone minute")?;
    if !rest.is_empty() {
        return Err(format!("`{}` after the time zone", shown(rest)));
    }
    Ok(sign * (in_range(h, 0, 23, "zone hour")? * 3600 + in_range(m, 0, 59, "zone minute")? * 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn azure_timestamps_with_seven_fractional_digits() {
        let a = parse_wall_clock_ms("2023-11-16 18:15:46.6805900").unwrap();
        let b = parse_wall_clock_ms("2023-11-16 18:15:47").unwrap();
        assert!((b - a - 319.41).abs() < 1e-3, "{}", b - a);
        assert_eq!(
            parse_wall_clock_ms("1970-01-02 00:00:00").unwrap(),
            86_400_000.0
        );
        assert_eq!(
            parse_wall_clock_ms("1970-01-02T01:00:00+01:00").unwrap(),
            86_400_000.0
        );
        assert_eq!(parse_wall_clock_ms("1970-01-01 23:30:00-00:30Z").ok(), None);
        assert_eq!(
            parse_wall_clock_ms("1970-01-01 23:30:00-00:30").unwrap(),
            86_400_000.0
        );
        assert_eq!(
            parse_wall_clock_ms("2024-02-29 00:00:00Z").unwrap(),
            1_709_164_800_000.0
        );
    }

    #[test]
    fn impossible_dates_and_times_say_which_part_is_wrong() {
        for (s, why) in [
            (
                "2023-02-30 00:00:00",
                "day 30 does not exist in February 2023 (28 days)",
            ),
            (
                "2023-02-29 00:00:00",
                "day 29 does not exist in February 2023",
            ),
            (
                "1900-02-29 00:00:00",
                "day 29 does not exist in February 1900",
            ),
            (
                "2023-04-31 00:00:00",
                "day 31 does not exist in April 2023 (30 days)",
            ),
            ("2023-01-00 00:00:00", "day 0 does not exist"),
            ("2023-13-01 00:00:00", "month 13 is not in 1 ..= 12"),
            ("2023-00-01 00:00:00", "month 0 is not in 1 ..= 12"),
            ("2023-11-16 25:00:00", "hour 25 is not in 0 ..= 23"),
            ("2023-11-16 24:00:00", "hour 24 is not in 0 ..= 23"),
            ("2023-11-16 18:60:00", "minute 60 is not in 0 ..= 59"),
            ("2023-12-31 23:59:60", "second 60 is not in 0 ..= 59"),
            ("2023-1-16 18:00:00", "the month must be 2 digits"),
            ("+023-11-16 18:00:00", "the year must be 4 digits"),
            ("2023-11-16 18:00:00.", "digits after the decimal point"),
            ("2023-11-16 18:00:00 PST", "not a time zone"),
            ("2023-11-16 18:00:00+25:00", "zone hour 25"),
            ("2023-11-16", "after the date"),
            ("yesterday", "the year must be 4 digits"),
        ] {
            let e = parse_wall_clock_ms(s).unwrap_err();
            assert!(e.contains(why) && e.contains(s), "{s}: {e}");
        }
    }

    /// Month lengths by table, independent of the parser's.
    fn month_len(y: i64, m: i64) -> i64 {
        let leap = y % 400 == 0 || (y % 4 == 0 && y % 100 != 0);
        [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ][m as usize - 1]
    }

    /// Days since 1970-01-01 by counting, the slow obvious way.
    fn days_by_counting(y: i64, m: i64, d: i64) -> i64 {
        let year_days = |y| (1..=12).map(|mm| month_len(y, mm)).sum::<i64>();
        let mut days: i64 = if y >= 1970 {
            (1970..y).map(year_days).sum()
        } else {
            -(y..1970).map(year_days).sum::<i64>()
        };
        days += (1..m).map(|mm| month_len(y, mm)).sum::<i64>();
        days + d - 1
    }

    proptest! {
        #[test]
        fn timestamps_agree_with_counting_days(
            y in 0i64..=9999, m in 1i64..=12, d in 1i64..=31,
            h in 0i64..24, mi in 0i64..60, s in 0i64..60, micros in 0u32..1_000_000,
        ) {
            let text = format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{micros:06}");
            let got = parse_wall_clock_ms(&text);
            if d > month_len(y, m) {
                prop_assert!(got.is_err(), "{}", text);
            } else {
                let secs = days_by_counting(y, m, d) * 86_400 + h * 3600 + mi * 60 + s;
                let want = secs as f64 * 1e3 + micros as f64 * 1e-3;
                let got = got.unwrap();
                // Within float rounding of milliseconds that large.
                prop_assert!((got - want).abs() <= want.abs() * 1e-15 + 1e-6, "{} -> {} vs {}", text, got, want);
            }
        }
    }
}
