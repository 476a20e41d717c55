//! Small data files (specs, configs, tables, fleet files) as text, read the
//! same way by every crate: never more than [`MAX_TEXT_FILE_BYTES`] held in
//! memory, a UTF-8 byte-order mark dropped, and bytes that are not UTF-8
//! reported with their line and column instead of "stream did not contain
//! valid UTF-8".

use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest small data file read (real ones are kilobytes).
pub const MAX_TEXT_FILE_BYTES: u64 = 64 << 20;

const BOM: &str = "\u{feff}";

/// Why a small data file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum TextFileError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_TEXT_FILE_BYTES`].
    #[error("{}: larger than {} MiB", path.display(), MAX_TEXT_FILE_BYTES >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// A byte that is not UTF-8.
    #[error("{}:{line}: byte 0x{byte:02x} at column {column} is not UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line of the byte.
        line: usize,
        /// 1-based byte column within the line.
        column: usize,
        /// The byte.
        byte: u8,
    },
}

/// Reads `path` whole as text (see the module doc).
pub fn read_text_file(path: &Path) -> Result<String, TextFileError> {
    let io = |source| TextFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(TextFileError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    text_of(bytes, path)
}

/// `bytes` as text, its byte-order mark dropped; `path` names it in errors.
pub fn text_of(bytes: Vec<u8>, path: &Path) -> Result<String, TextFileError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with(BOM) {
                text.drain(..BOM.len());
            }
            Ok(text)
        }
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line_start = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            Err(TextFileError::NotUtf8 {
                path: path.to_path_buf(),
                line: 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count(),
                column: at - line_start + 1,
                byte: bytes[at],
            })
        }
    }
}

/// What a JSON parse error says, without serde_json's trailing "at line L
/// column C": callers name the place once, before the message.
pub fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&place) {
        Some(what) => what.to_string(),
        None => text,
    }
}

/// Where a JSON parse error is and what it says, once: `line L column C: what`.
pub fn json_error_text(e: &serde_json::Error) -> String {
    format!(
        "line {} column {}: {}",
        e.line(),
        e.column(),
        json_message(e)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_errors_name_their_place_once() {
        for text in ["{\"a\": }", "nonsense", "[1, 2", "{\"a\": 1}\n  x"] {
            let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            let shown = super::json_error_text(&e);
            assert_eq!(shown.matches("line ").count(), 1, "{shown}");
            assert!(
                shown.starts_with(&format!("line {} column {}: ", e.line(), e.column())),
                "{shown}"
            );
            assert!(!super::json_message(&e).is_empty());
        }
    }

    use super::*;

    fn text(bytes: &[u8]) -> Result<String, String> {
        text_of(bytes.to_vec(), Path::new("f.json")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_bom_is_dropped_and_bad_bytes_are_named_by_line_and_column() {
        assert_eq!(text(b"\xef\xbb\xbf{}\n").unwrap(), "{}\n");
        assert_eq!(
            text(b"{\n\"a\": \"\xef\xbb\xbf\"}").unwrap(),
            "{\n\"a\": \"\u{feff}\"}"
        );
        assert_eq!(
            text(b"{\n  \"a\": \"x\xffy\"\n}").unwrap_err(),
            "f.json:2: byte 0xff at column 10 is not UTF-8"
        );
        assert_eq!(
            text(b"\xc3").unwrap_err(),
            "f.json:1: byte 0xc3 at column 1 is not UTF-8"
        );
    }

    #[test]
    fn a_missing_file_names_it() {
        let e = read_text_file(Path::new("/nonexistent/x.json")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read /nonexistent/x.json: "),
            "{e}"
        );
    }
}
