//! The layer profiles' CSV files, read by a CSV parser: quoted cells (which
//! may hold commas and line breaks; a record's line is its first), cells
//! trimmed, the columns found by their header names in any order. Every
//! error names the file, the line and the field.

use std::path::Path;

use super::table::bad;
use crate::error::CoreError;

/// Rows of a numeric CSV, each `(line, name, numbers)`: `numbers` in the
/// order of the columns asked for; `name` is the text column's, when one is
/// asked for.
pub(super) type Rows = Vec<(usize, String, Vec<f64>)>;

/// Reads `path`: a header naming every column of `numeric` (and `text`,
/// when given) once, in any order, and nothing else; then one record a
/// row, blank records skipped. Numbers must be finite and 0 or more.
pub(super) fn read_rows(
    path: &Path,
    text: Option<&str>,
    numeric: &[&str],
) -> Result<Rows, CoreError> {
    // Bounded, BOM dropped, bad bytes named by line and column.
    let content = crate::text_file::read_text_file(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(content.as_bytes());
    let expected: Vec<&str> = text.into_iter().chain(numeric.iter().copied()).collect();
    let mut records = reader.records();
    // Lines counted from byte offsets, incrementally (`(offset, line)` of
    // the last record): the parser's own count, and its record start, take
    // no account of the blank lines it skips before a record.
    let bytes = content.as_bytes();
    let mut at = (0usize, 1usize);
    let mut line_of = |offset: u64| {
        let mut offset = (offset as usize).min(bytes.len());
        while offset < bytes.len() && matches!(bytes[offset], b'\n' | b'\r') {
            offset += 1;
        }
        if offset >= at.0 {
            at.1 += bytes[at.0..offset].iter().filter(|&&b| b == b'\n').count();
            at.0 = offset;
        }
        at.1
    };
    let mut next = |records: &mut csv::StringRecordsIter<&[u8]>| -> Result<Option<(usize, csv::StringRecord)>, CoreError> {
        for r in records.by_ref() {
            let r = r.map_err(|e| {
                let line = e.position().map_or(0, |p| line_of(p.byte()));
                bad(path, format!("line {line}"), format!("not CSV: {e}"))
            })?;
            let line = r.position().map_or(0, |p| line_of(p.byte()));
            if r.iter().all(str::is_empty) {
                continue;
            }
            return Ok(Some((line, r)));
        }
        Ok(None)
    };
    let header = next(&mut records)?;
    let header_line = header.as_ref().map_or(1, |h| h.0);
    let names: Vec<String> = header
        .map(|(_, r)| r.iter().map(String::from).collect())
        .unwrap_or_default();
    let want = || format!("expected the columns {}", expected.join(","));
    let mut columns = Vec::with_capacity(expected.len());
    for name in &expected {
        match names.iter().position(|n| n == name) {
            Some(i) => columns.push(i),
            None => {
                return Err(bad(
                    path,
                    format!("line {header_line}: field `{name}`"),
                    format!("missing from the header `{}`: {}", names.join(","), want()),
                ))
            }
        }
    }
    for (i, n) in names.iter().enumerate() {
        if !expected.contains(&n.as_str()) || names[..i].contains(n) {
            let what = if expected.contains(&n.as_str()) {
                "named twice"
            } else {
                "not a column of this profile"
            };
            return Err(bad(
                path,
                format!("line {header_line}: field `{n}`"),
                format!("{what}: {}", want()),
            ));
        }
    }
    let mut rows = Vec::new();
    while let Some((line, r)) = next(&mut records)? {
        if r.len() != names.len() {
            return Err(bad(
                path,
                format!("line {line}"),
                format!("{} cells: the header has {}", r.len(), names.len()),
            ));
        }
        let skip = usize::from(text.is_some());
        let mut numbers = Vec::with_capacity(numeric.len());
        for (&i, field) in columns.iter().zip(&expected).skip(skip) {
            let cell = &r[i];
            let v = cell
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    bad(
                        path,
                        format!("line {line}: field `{field}`"),
                        format!("`{cell}` is not a number of 0 or more"),
                    )
                })?;
            numbers.push(v);
        }
        let name = if text.is_some() {
            r[columns[0]].to_string()
        } else {
            String::new()
        };
        rows.push((line, name, numbers));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(tag: &str, text: &str) -> Result<Rows, CoreError> {
        let dir =
            std::env::temp_dir().join(format!("aisim-profile-csv-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dense.csv");
        std::fs::write(&path, text).unwrap();
        let rows = read_rows(&path, Some("layer"), &["tokens", "time_us"]);
        std::fs::remove_dir_all(&dir).ok();
        rows
    }

    #[test]
    fn quoted_cells_and_any_column_order() {
        let rows = read(
            "order",
            "time_us, layer ,tokens\n\"1.5\",\"qkv, fused\",4\n\n2,\"two\nlines\",8\n",
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                (2, "qkv, fused".to_string(), vec![4.0, 1.5]),
                (4, "two\nlines".to_string(), vec![8.0, 2.0]),
            ]
        );
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let cases = [
            ("layer,tokens\n", "line 1: field `time_us`"),
            ("layer,tokens,time_us,extra\n", "line 1: field `extra`"),
            ("layer,tokens,time_us,tokens\n", "named twice"),
            ("layer,tokens,time_us\nqkv,4\n", "line 2"),
            (
                "layer,tokens,time_us\n\"a\nb\",4,x\n",
                "line 2: field `time_us`",
            ),
            (
                "layer,tokens,time_us\nqkv,4,1\nqkv,-1,1\n",
                "line 3: field `tokens`",
            ),
            ("layer,tokens,time_us\nqkv,4,NaN\n", "`NaN`"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let e = read(&format!("bad{i}"), text).unwrap_err().to_string();
            assert!(e.contains("dense.csv") && e.contains(want), "{text:?}: {e}");
        }
    }
}
