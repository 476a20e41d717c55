//! Lines of a text trace as every reader sees them: numbered from 1, a UTF-8
//! byte-order mark at the start of the file dropped, bytes that are not UTF-8
//! reported with their line and byte column, and no line longer than
//! [`MAX_LINE_BYTES`] held in memory.

use std::io::{BufRead, Read};
use std::path::Path;

use super::bad_row::row_error;
use crate::error::ReplayError;

/// Longest line read (the longest real rows are some hundred kilobytes of ids).
pub(crate) const MAX_LINE_BYTES: u64 = 64 << 20;

const BOM: &str = "\u{feff}";

/// Reads numbered lines into one reused buffer.
pub struct Lines<'p, R> {
    reader: R,
    path: &'p Path,
    bytes: Vec<u8>,
    line: usize,
    cap: u64,
    /// Bytes read so far: where the next line starts.
    consumed: u64,
}

impl<'p, R: BufRead> Lines<'p, R> {
    /// Lines of `reader`, errors naming `path`.
    pub fn new(reader: R, path: &'p Path) -> Self {
        Lines {
            reader,
            path,
            bytes: Vec::new(),
            line: 0,
            cap: MAX_LINE_BYTES,
            consumed: 0,
        }
    }

    /// Where the next line starts (bytes from the reader's start).
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Lines read so far (the last one's number).
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The next line (with its end of line) and its number, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>, ReplayError> {
        self.bytes.clear();
        let read = (&mut self.reader)
            .take(self.cap + 1)
            .read_until(b'\n', &mut self.bytes)
            .map_err(|source| ReplayError::Io {
                path: self.path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        self.consumed += read as u64;
        self.line += 1;
        if self.bytes.len() as u64 > self.cap {
            return Err(row_error(
                self.path,
                self.line,
                "(row)",
                format!("line longer than {} bytes", self.cap),
            ));
        }
        let text = utf8(&self.bytes, self.path, self.line, None)?;
        let text = if self.line == 1 {
            text.strip_prefix(BOM).unwrap_or(text)
        } else {
            text
        };
        Ok(Some((self.line, text)))
    }
}

/// `bytes` as text, or an error naming the line, the field if known, and where
/// the first bad byte is (1-based: its column in the line, or its byte in the field).
pub(crate) fn utf8<'b>(
    bytes: &'b [u8],
    path: &Path,
    line: usize,
    field: Option<&str>,
) -> Result<&'b str, ReplayError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        not_utf8(bytes[at], at, path, line, field)
    })
}

/// The error for byte `byte` at 0-based offset `at` of a line or field.
fn not_utf8(byte: u8, at: usize, path: &Path, line: usize, field: Option<&str>) -> ReplayError {
    let (field, place) = match field {
        Some(f) => (f, format!("byte {} of the field", at + 1)),
        None => ("(row)", format!("column {}", at + 1)),
    };
    row_error(
        path,
        line,
        field,
        format!("byte 0x{byte:02x} at {place} is not UTF-8"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Result<Vec<(usize, String)>, String> {
        let mut l = Lines::new(input, Path::new("t.jsonl"));
        let mut out = Vec::new();
        while let Some((n, t)) = l.next_line().map_err(|e| e.to_string())? {
            out.push((n, t.to_string()));
        }
        Ok(out)
    }

    #[test]
    fn drops_a_leading_bom_only_and_names_bad_bytes() {
        assert_eq!(
            all(b"\xef\xbb\xbfa\n\xef\xbb\xbfb\n").unwrap(),
            vec![(1, "a\n".to_string()), (2, "\u{feff}b\n".to_string())]
        );
        let e = all(b"ok\nab\xffc\n").unwrap_err();
        // Whole small files (specs) are read by aisim-core's reader: same place.
        let whole = aisim_core::text_file::text_of(b"ok\nab\xffc\n".to_vec(), Path::new("t.jsonl"));
        assert_eq!(
            whole.unwrap_err().to_string(),
            "t.jsonl:2: byte 0xff at column 3 is not UTF-8"
        );
        assert_eq!(
            e,
            "t.jsonl:2: field `(row)`: byte 0xff at column 3 is not UTF-8"
        );
    }

    /// The JSONL readers' line numbers are the file's, whatever the layout:
    /// blank lines, CRLF, a BOM, no final line end.
    #[test]
    fn lines_are_numbered_as_written_in_every_layout() {
        let table: &[(&str, &[usize])] = &[
            ("a\n\nb", &[1, 2, 3]),
            ("\u{feff}\r\n\r\na\r\nb\r\n", &[1, 2, 3, 4]),
            ("\n\n\na", &[1, 2, 3, 4]),
        ];
        for (text, want) in table {
            let got = all(text.as_bytes()).unwrap();
            assert_eq!(
                got.iter().map(|l| l.0).collect::<Vec<_>>(),
                *want,
                "{text:?}"
            );
            let a = got.iter().find(|l| l.1.trim() == "a").unwrap().0;
            assert_eq!(
                a,
                text.split('\n').position(|l| l.trim() == "a").unwrap() + 1
            );
        }
    }
}
