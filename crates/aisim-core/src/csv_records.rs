//! Streaming CSV records, each with the line it starts on, none held past a
//! byte cap. Every CSV reader of user files shares it, so every error names
//! the same line.
//!
//! The `csv` crate's record position is where its parse began: the blank
//! lines it skips before a record are counted into the record. So the lines
//! are counted here instead, from the bytes as they pass to the parser: a
//! record's line is the line of its first byte after the line ends (`\r`,
//! `\n`) and the leading byte-order mark the parser skips. Lines end at `\n`
//! (CRLF counts once); a quoted cell's line breaks count, so a record that
//! spans lines names its first and the next record its own.

use std::io::Read;

use csv::ByteRecord;

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CsvRecordError {
    /// Reading the underlying file failed.
    #[error(transparent)]
    Io(std::io::Error),
    /// The record starting on `line` grew past `cap` bytes (an unclosed
    /// quote would otherwise read the rest of the file into one cell).
    #[error("a record longer than {cap} bytes (a quote left open?)")]
    TooLong {
        /// The record's first line.
        line: usize,
        /// The cap, in bytes.
        cap: u64,
    },
    /// The parser refused the record starting on `line`.
    #[error("{reason}")]
    Malformed {
        /// The record's first line.
        line: usize,
        /// The parser's reason.
        reason: String,
    },
}

impl CsvRecordError {
    /// The first line of the record at fault (none for a failed read).
    pub fn line(&self) -> Option<usize> {
        match self {
            CsvRecordError::Io(_) => None,
            CsvRecordError::TooLong { line, .. } | CsvRecordError::Malformed { line, .. } => {
                Some(*line)
            }
        }
    }
}

/// CSV records of a reader (no header handling, any number of cells a
/// record, cells untrimmed), each with its first line.
pub struct CsvRecords<R: Read> {
    csv: csv::Reader<Counted<R>>,
    cap: u64,
}

impl<R: Read> CsvRecords<R> {
    /// Records of `reader`, none longer than `cap` bytes.
    pub fn new(reader: R, cap: u64) -> Self {
        let csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(Counted::new(reader, cap));
        CsvRecords { csv, cap }
    }

    /// Reads the next record into `cells`: its first line, or `None` at the end.
    pub fn next(&mut self, cells: &mut ByteRecord) -> Result<Option<usize>, CsvRecordError> {
        let start = self.csv.position().byte();
        self.csv.get_mut().start_record(start);
        let more = self.csv.read_byte_record(cells).map_err(|e| {
            let line = self.csv.get_ref().record_line();
            match e.into_kind() {
                csv::ErrorKind::Io(source)
                    if source.get_ref().is_some_and(|e| e.is::<RecordTooLong>()) =>
                {
                    CsvRecordError::TooLong {
                        line,
                        cap: self.cap,
                    }
                }
                csv::ErrorKind::Io(source) => CsvRecordError::Io(source),
                kind => CsvRecordError::Malformed {
                    line,
                    reason: format!("{kind:?}"),
                },
            }
        })?;
        Ok(more.then(|| self.csv.get_ref().record_line()))
    }
}

#[derive(Debug, thiserror::Error)]
#[error("record too long")]
struct RecordTooLong;

const BOM: &[u8] = b"\xef\xbb\xbf";

/// The parser's input: counts line ends as bytes pass, keeps the last chunk
/// read (the parser's buffer holds at most that much unparsed, so the next
/// record starts inside it), and stops a record at the cap.
struct Counted<R> {
    inner: R,
    /// Bytes read so far.
    read: u64,
    /// The last chunk read, its offset, and the line its first byte is on.
    chunk: Vec<u8>,
    chunk_start: u64,
    chunk_line: usize,
    /// How far into the chunk line ends are counted, and how many there
    /// were: records only move forward, so each byte is counted once.
    scanned_to: usize,
    scanned_lines: usize,
    /// Where the record being read starts parsing, and its first line: found
    /// once a byte that is not a line end is seen, else the line so far.
    record_start: u64,
    line: usize,
    found: bool,
    cap: u64,
}

impl<R: Read> Counted<R> {
    fn new(inner: R, cap: u64) -> Self {
        Counted {
            inner,
            read: 0,
            chunk: Vec::new(),
            chunk_start: 0,
            chunk_line: 1,
            scanned_to: 0,
            scanned_lines: 0,
            record_start: 0,
            line: 1,
            found: false,
            cap,
        }
    }

    /// A record's parse starts at byte `at`, which is inside the last chunk
    /// (or at its end): where it starts in earnest is found from there.
    fn start_record(&mut self, at: u64) {
        let at = at.clamp(self.chunk_start, self.read);
        self.record_start = at;
        let from = (at - self.chunk_start) as usize;
        if from < self.scanned_to {
            (self.scanned_to, self.scanned_lines) = (0, 0);
        }
        self.scanned_lines += newlines(&self.chunk[self.scanned_to..from]);
        self.scanned_to = from;
        self.line = self.chunk_line + self.scanned_lines;
        self.found = false;
        let skip_bom = usize::from(at == 0 && self.chunk.starts_with(BOM)) * BOM.len();
        self.skip_line_ends(from + skip_bom);
    }

    /// Counts the line ends of the last chunk from `from` until a record's byte.
    fn skip_line_ends(&mut self, from: usize) {
        for &b in self.chunk.get(from..).unwrap_or_default() {
            match b {
                b'\n' => self.line += 1,
                b'\r' => {}
                _ => {
                    self.found = true;
                    return;
                }
            }
        }
    }

    fn record_line(&self) -> usize {
        self.line
    }
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read - self.record_start > self.cap {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                RecordTooLong,
            ));
        }
        let n = self.inner.read(buf)?;
        self.chunk_line += newlines(&self.chunk);
        self.chunk_start = self.read;
        (self.scanned_to, self.scanned_lines) = (0, 0);
        self.chunk.clear();
        self.chunk.extend_from_slice(&buf[..n]);
        self.read += n as u64;
        if !self.found {
            let skip_bom = usize::from(self.chunk_start == 0 && self.chunk.starts_with(BOM));
            self.skip_line_ends(skip_bom * BOM.len());
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `(line, cells)` of every record, read through a reader that hands
    /// out `step` bytes at a time (chunks cut anywhere).
    fn records(bytes: &[u8], step: usize) -> Result<Vec<(usize, Vec<String>)>, CsvRecordError> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut r = CsvRecords::new(Trickle(bytes, step), 1 << 20);
        let mut cells = ByteRecord::new();
        let mut out = Vec::new();
        while let Some(line) = r.next(&mut cells)? {
            let texts = cells
                .iter()
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect();
            out.push((line, texts));
        }
        Ok(out)
    }

    fn lines_of(text: &str) -> Vec<usize> {
        records(text.as_bytes(), 8192)
            .unwrap()
            .into_iter()
            .map(|r| r.0)
            .collect()
    }

    #[test]
    fn each_shape_names_the_first_line_of_its_record() {
        let table: &[(&str, &[usize])] = &[
            ("a\nb\nc", &[1, 2, 3]),
            ("a\n\nb\n", &[1, 3]),
            ("\n\n\na\n\n\n\nb\n\n", &[4, 8]),
            ("a\r\n\r\nb\r\nc", &[1, 3, 4]),
            ("\u{feff}a\nb\n", &[1, 2]),
            ("\u{feff}\n\na\n\nb", &[3, 5]),
            ("a,\"x\ny\nz\"\n\nb\n", &[1, 5]),
            ("\"x\r\ny\"\r\n\r\nb,\"\n\"\r\nc\r\n", &[1, 4, 6]),
            (" \n\n", &[1]),
        ];
        for (text, want) in table {
            assert_eq!(&lines_of(text), want, "{text:?}");
        }
    }

    #[test]
    fn a_record_past_the_cap_names_its_first_line() {
        let mut text = String::from("a\n\n\"open\n");
        text.push_str(&"x\n".repeat(1000));
        let mut r = CsvRecords::new(text.as_bytes(), 100);
        let mut cells = ByteRecord::new();
        assert_eq!(r.next(&mut cells).unwrap(), Some(1));
        match r.next(&mut cells) {
            Err(CsvRecordError::TooLong { line, cap }) => assert_eq!((line, cap), (3, 100)),
            other => panic!("{other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Records written with any cells (commas, quotes, line breaks),
        /// separated by any blank lines, with LF or CRLF, a BOM or not, a
        /// final line end or not, read in chunks of any size: each read
        /// back as written on the line it starts on. (Chunks of 4 bytes or
        /// more: the parser takes a chunk of just the BOM for the end.)
        #[test]
        fn lines_match_the_text_for_any_layout(
            rows in proptest::collection::vec(
                (proptest::collection::vec("[a-z ,\"\n]{0,6}", 1..4), 0usize..3),
                1..12,
            ),
            crlf in any::<bool>(),
            bom in any::<bool>(),
            final_end in any::<bool>(),
            step in 4usize..40,
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = String::from(if bom { "\u{feff}" } else { "" });
            let mut line = 1;
            let mut want = Vec::new();
            for (i, (cells, blanks)) in rows.iter().enumerate() {
                text.push_str(&end.repeat(*blanks));
                line += blanks;
                // Every cell quoted, so no record reads as blank.
                let record: Vec<String> = cells
                    .iter()
                    .map(|c| format!("\"{}\"", c.replace('"', "\"\"").replace('\n', end)))
                    .collect();
                text.push_str(&record.join(","));
                want.push((line, cells.iter().map(|c| c.replace('\n', end)).collect::<Vec<_>>()));
                line += cells.iter().map(|c| c.matches('\n').count()).sum::<usize>();
                if i + 1 < rows.len() || final_end {
                    text.push_str(end);
                    line += 1;
                }
            }
            let got = records(text.as_bytes(), step).unwrap();
            prop_assert_eq!(got, want);
        }
    }
}
