//! A large Mooncake file read in two halves at once: this thread reads the
//! lines starting up to the file's middle byte, a second one the rest, and
//! the second half's records follow the first's, renumbered. Reading is
//! most of the time before a replay's threads can start (3 ms of the
//! synthetic trace's 1.1 MB, on one core).
//!
//! The second thread takes only what the canonical-row scanner reads
//! (`mooncake_row`), blank lines and nothing else: at any other line (a row
//! the general path must read, or name as wrong), bytes that are not
//! UTF-8, an overlong line or a read error, it gives up, and this thread
//! reads on from the middle line by line as the ordinary reader does. So
//! records, line numbers and errors are the ordinary reader's (a test
//! compares them on every layout).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use aisim_core::cancel::SetOnDrop;

use super::json_rows::{self, mooncake_record, Shape};
use super::lines::{Lines, MAX_LINE_BYTES};
use super::mooncake_row;
use super::record::{SessionInterner, TraceRecord};
use crate::error::ReplayError;

/// Files smaller than this are read on one thread: a thread's start costs
/// more than reading half of them.
const MIN_SPLIT_BYTES: u64 = 256 << 10;

/// The second half's rows, numbered from its first line.
struct Tail {
    /// Where its first line starts.
    start: u64,
    records: Vec<TraceRecord>,
}

/// The rows of the Mooncake file `path` (`json_rows::read`'s records),
/// read in two halves when the file is large enough and a second core is
/// free (none is on a pool's thread).
pub(crate) fn read_mooncake(
    path: &Path,
    sessions: &mut SessionInterner,
) -> Result<Vec<TraceRecord>, ReplayError> {
    let io = |source| ReplayError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size < MIN_SPLIT_BYTES || !aisim_core::thread_pool::second_core_free() {
        return Ok(json_rows::read(BufReader::new(file), path, Shape::Mooncake, sessions)?.0);
    }
    read_halves(BufReader::new(file), path, size / 2, sessions)
}

/// Reads the lines starting at or before byte `middle` of `first` (the
/// file `path` from its start) here, and the rest on a second thread.
fn read_halves<R: BufRead>(
    first: R,
    path: &Path,
    middle: u64,
    sessions: &mut SessionInterner,
) -> Result<Vec<TraceRecord>, ReplayError> {
    // Set as this thread leaves the scope, whichever way (the second half
    // is joined first when all went well): after an error or a panic here,
    // the second half would be read for nothing.
    let give_up = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let tail = std::thread::Builder::new()
            .name("aisim-read".into())
            .spawn_scoped(scope, || read_tail(path, middle, MAX_LINE_BYTES, &give_up));
        let _give_up = SetOnDrop(&give_up);
        let mut records = Vec::new();
        let mut lines = Lines::new(first, path);
        let stopped = json_rows::read_rows(
            &mut lines,
            path,
            Shape::Mooncake,
            sessions,
            &mut records,
            middle,
        )?;
        let tail = tail.ok().and_then(|h| h.join().ok()).flatten();
        match tail {
            Some(t) if stopped && t.start == lines.consumed() => {
                let before = lines.line();
                records.extend(t.records.into_iter().map(|mut r| {
                    r.line += before;
                    r
                }));
            }
            _ if stopped => {
                json_rows::read_rows(
                    &mut lines,
                    path,
                    Shape::Mooncake,
                    sessions,
                    &mut records,
                    u64::MAX,
                )?;
            }
            _ => {}
        }
        Ok(records)
    })
}

/// The canonical rows of the lines of `path` after the one holding byte
/// `middle`, or `None` where the ordinary reader must take over (a line
/// longer than `cap` bytes among them) or `give_up` is set.
fn read_tail(path: &Path, middle: u64, cap: u64, give_up: &AtomicBool) -> Option<Tail> {
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(middle)).ok()?;
    let mut reader = BufReader::new(file);
    // The rest of the line holding `middle`: the first half's (skipped,
    // not held: it may be any length, and past the cap it is the first
    // half's error).
    let skipped = (&mut reader).take(cap + 1).skip_until(b'\n').ok()? as u64;
    if skipped > cap {
        return None;
    }
    let start = middle + skipped;
    let mut bytes = Vec::new();
    let (mut records, mut ids, mut line) = (Vec::new(), Vec::new(), 0);
    loop {
        bytes.clear();
        let read = (&mut reader)
            .take(cap + 1)
            .read_until(b'\n', &mut bytes)
            .ok()?;
        if read == 0 {
            return Some(Tail { start, records });
        }
        line += 1;
        if read as u64 > cap || give_up.load(Ordering::Relaxed) {
            return None;
        }
        let text = std::str::from_utf8(&bytes).ok()?;
        if text.trim().is_empty() {
            continue;
        }
        let row = mooncake_row::parse(text, &mut ids)?;
        records.push(mooncake_record(line, row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The ordinary reader's records, or its error, as text.
    fn ordinary(text: &[u8], path: &Path) -> String {
        let mut sessions = SessionInterner::default();
        match json_rows::read(text, path, Shape::Mooncake, &mut sessions) {
            Ok((records, _)) => format!("{records:?} {:?}", sessions.into_names()),
            Err(e) => e.to_string(),
        }
    }

    /// Two halves split at every byte give the ordinary reader's records,
    /// line numbers, sessions and errors, whatever the second half holds.
    #[test]
    fn halves_split_anywhere_read_as_one_reader_does() {
        let row = |t: u32| {
            format!("{{\"timestamp\": {t}, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [{t}, 7]}}")
        };
        let layouts: Vec<Vec<u8>> = vec![
            // canonical rows, blank lines, CRLF, no final line end
            format!("{}\n\n{}\r\n{}\n  \n{}", row(1), row(2), row(3), row(4)).into_bytes(),
            // a row only the general path reads (a session), late in the file
            format!("{}\n{}\n{{\"timestamp\": 9, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [], \"session_id\": 4}}\n{}\n", row(1), row(2), row(3)).into_bytes(),
            // a bad row, then bytes that are not UTF-8, in the second half
            format!("{}\n{}\n{{\"timestamp\": -1}}\n", row(1), row(2)).into_bytes(),
            [format!("{}\n{}\n", row(1), row(2)).as_bytes(), b"{\"timestamp\": 1\xff}\n"].concat(),
            // a byte-order mark inside the file (kept: only the first line's goes)
            format!("\u{feff}{}\n\u{feff}{}\n", row(1), row(2)).into_bytes(),
        ];
        let dir = std::env::temp_dir().join(format!("aisim-halves-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (k, text) in layouts.iter().enumerate() {
            let path = dir.join(format!("t{k}.jsonl"));
            std::fs::File::create(&path)
                .unwrap()
                .write_all(text)
                .unwrap();
            let want = ordinary(text, &path);
            for middle in 0..text.len() as u64 + 2 {
                let mut sessions = SessionInterner::default();
                let got = match read_halves(&text[..], &path, middle, &mut sessions) {
                    Ok(records) => format!("{records:?} {:?}", sessions.into_names()),
                    Err(e) => e.to_string(),
                };
                assert_eq!(got, want, "layout {k} split at byte {middle}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Once the first half has failed, the second stops at its next line
    /// instead of reading the rest of the file.
    #[test]
    fn the_second_half_gives_up_once_the_first_failed() {
        let row =
            "{\"timestamp\": 1, \"input_length\": 6, \"output_length\": 3, \"hash_ids\": [1]}\n";
        let path =
            std::env::temp_dir().join(format!("aisim-halves-stop-{}.jsonl", std::process::id()));
        std::fs::write(&path, row.repeat(10_000)).unwrap();
        let read = |give_up: bool| read_tail(&path, 0, MAX_LINE_BYTES, &AtomicBool::new(give_up));
        assert_eq!(read(false).map(|t| t.records.len()), Some(9_999));
        assert!(read(true).is_none());
        std::fs::remove_file(&path).unwrap();
    }

    /// A line longer than the cap, whether it holds the middle byte or
    /// comes after it, is left to the first half (which names it): the
    /// second half neither holds it nor reads past it.
    #[test]
    fn the_second_half_leaves_overlong_lines_to_the_first() {
        let row =
            "{\"timestamp\": 1, \"input_length\": 6, \"output_length\": 3, \"hash_ids\": [1]}\n";
        let ids = vec!["1"; 100].join(", ");
        let long = format!("{{\"timestamp\": 1, \"input_length\": 6, \"output_length\": 3, \"hash_ids\": [{ids}]}}\n");
        let path =
            std::env::temp_dir().join(format!("aisim-halves-cap-{}.jsonl", std::process::id()));
        let never = AtomicBool::new(false);
        std::fs::write(&path, format!("{row}{long}{row}")).unwrap();
        let middle = row.len() as u64 + 10; // inside the long line
        let cap = row.len() as u64;
        assert!(read_tail(&path, middle, cap, &never).is_none());
        assert_eq!(
            read_tail(&path, middle, 1000, &never).map(|t| t.records.len()),
            Some(1)
        );
        std::fs::write(&path, format!("{row}{row}{long}")).unwrap();
        assert!(read_tail(&path, 0, cap, &never).is_none());
        assert_eq!(
            read_tail(&path, 0, 1000, &never).map(|t| t.records.len()),
            Some(2)
        );
        std::fs::remove_file(&path).unwrap();
    }
}
