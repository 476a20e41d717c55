//! Wall-clock timestamps as written in the Azure traces
//! (`2023-11-16 18:15:46.6805900`), to milliseconds since the Unix epoch.

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

/// Parses `YYYY-MM-DD HH:MM:SS[.fraction]` (a `T` separator and a trailing `Z`
/// are accepted; the fraction may have any number of digits).
pub fn parse_wall_clock_ms(s: &str) -> Result<f64, String> {
    let s = s.trim().trim_end_matches('Z');
    let bad = || format!("`{s}` is not a timestamp like 2023-11-16 18:15:46.6805900");
    let (date, time) = s.split_once([' ', 'T']).ok_or_else(bad)?;
    let mut d = date.split('-');
    let (y, mo, da) = (d.next(), d.next(), d.next());
    let num = |x: Option<&str>, lo: i64, hi: i64| -> Result<i64, String> {
        x.and_then(|v| v.parse::<i64>().ok())
            .filter(|v| (lo..=hi).contains(v))
            .ok_or_else(bad)
    };
    let (y, mo, da) = (num(y, 0, 9999)?, num(mo, 1, 12)?, num(da, 1, 31)?);
    if d.next().is_some() {
        return Err(bad());
    }
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, b),
        None => (time, ""),
    };
    let mut t = hms.split(':');
    let (h, mi, se) = (
        num(t.next(), 0, 23)?,
        num(t.next(), 0, 59)?,
        num(t.next(), 0, 60)?,
    );
    if t.next().is_some() || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let frac_s = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse::<f64>().map_err(|_| bad())?
    };
    let secs = days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 + se;
    Ok(secs as f64 * 1e3 + frac_s * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azure_timestamps_with_seven_fractional_digits() {
        let a = parse_wall_clock_ms("2023-11-16 18:15:46.6805900").unwrap();
        let b = parse_wall_clock_ms("2023-11-16 18:15:47").unwrap();
        assert!((b - a - 319.41).abs() < 1e-3, "{}", b - a);
        assert_eq!(
            parse_wall_clock_ms("1970-01-02 00:00:00").unwrap(),
            86_400_000.0
        );
        assert!(parse_wall_clock_ms("2023-13-01 00:00:00").is_err());
        assert!(parse_wall_clock_ms("yesterday").is_err());
    }
}
