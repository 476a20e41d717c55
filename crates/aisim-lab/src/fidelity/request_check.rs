//! The checks every imported request passes, whatever file it came from:
//! times on aisim's clock and in order, lengths, token gaps, ids and
//! conversation turns seen once. Each reader names the fields as its file
//! does (a column, or a JSON path), and places the error (a line, or the
//! path alone).

use std::collections::HashSet;

use super::timed_request::{TimedRequest, Turn};

/// What a file calls a request's fields, for errors.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    pub send: String,
    pub first: String,
    pub end: String,
    pub output: String,
    pub itl: String,
    pub id: String,
    pub turn: String,
}

impl Names {
    /// The generic shape's own names.
    pub fn generic(send: &str, first: &str, end: &str, output: &str) -> Names {
        Names {
            send: send.into(),
            first: first.into(),
            end: end.into(),
            output: output.into(),
            itl: "itl_s".into(),
            id: "request_id".into(),
            turn: "turn_index".into(),
        }
    }
}

/// A field that fails a check, and why.
#[derive(Debug, Clone)]
pub(crate) struct Bad {
    pub field: String,
    pub reason: String,
}

fn bad(field: &str, value: impl std::fmt::Display, need: &str) -> Bad {
    Bad {
        field: field.to_string(),
        reason: format!("{value}: {need}"),
    }
}

/// The ids, and the conversations' turns, a file has measured so far.
#[derive(Default)]
pub(crate) struct Seen {
    ids: HashSet<String>,
    turns: HashSet<Turn>,
}

/// Checks a request's times and lengths, and that its id (and its turn of a
/// conversation) is new. A request that did not complete is checked for
/// its times and lengths only: the trace replays it.
pub(crate) fn check(r: &TimedRequest, n: &Names, seen: &mut Seen) -> Result<(), Bad> {
    let float = aisim_core::number::float;
    for (field, v) in [
        (&n.send, r.send_s),
        (&n.first, r.first_token_s),
        (&n.end, r.end_s),
    ] {
        // Within aisim's clock (2^63 ns), so the trace written from these
        // times never has to clamp one.
        if aisim_replay::workload::clock::checked_ms(v * 1e3).is_none() {
            return Err(bad(
                field,
                float(v),
                "must be a time of 0 ..= 9223372036 seconds (aisim's clock, 2^63 ns)",
            ));
        }
    }
    // Each time at or after the one before it.
    for (field, v, before, what) in [
        (&n.first, r.first_token_s, r.send_s, "the send time"),
        (&n.end, r.end_s, r.first_token_s, "the first token"),
    ] {
        if v < before {
            return Err(bad(field, v, &format!("is before {what} {before}")));
        }
    }
    // Tokens after the first take time: several in no time is no measurement.
    if r.completed() && r.output_tokens > 1 && r.end_s == r.first_token_s {
        return Err(bad(
            &n.end,
            r.end_s,
            &format!(
                "is the first token's time, yet {} tokens came after it: a measured request takes time per token",
                r.output_tokens - 1
            ),
        ));
    }
    if r.output_tokens == 0 {
        return Err(bad(
            &n.output,
            0,
            "a measured request has at least 1 output token",
        ));
    }
    if let Some(gaps) = &r.itl_s {
        if let Some(g) = gaps.iter().find(|g| !g.is_finite() || **g < 0.0) {
            return Err(bad(&n.itl, g, "must be gaps of 0 seconds or more"));
        }
        if r.completed() {
            let want = r.output_tokens as usize - 1;
            if gaps.len() != want {
                return Err(bad(
                    &n.itl,
                    format!("{} gaps", gaps.len()),
                    &format!("every token's gap is {want} of them ({} − 1)", n.output),
                ));
            }
            // The last token comes by the end (to a microsecond); a stream
            // may close a little after its last token.
            let last = r.first_token_s + gaps.iter().sum::<f64>();
            if last - r.end_s > 1e-6 {
                return Err(bad(
                    &n.itl,
                    format!("gaps adding up to {} s", float(last - r.first_token_s)),
                    &format!(
                        "must add up to at most {} − {} ({} s)",
                        n.end,
                        n.first,
                        float(r.end_s - r.first_token_s)
                    ),
                ));
            }
        }
    }
    if !seen.ids.insert(r.id.clone()) {
        return Err(bad(&n.id, &r.id, "is measured twice"));
    }
    if let Some(t) = &r.session {
        if !seen.turns.insert(t.clone()) {
            return Err(bad(
                &n.turn,
                t.turn_index,
                &format!("conversation {} has this turn twice", t.session_id),
            ));
        }
    }
    Ok(())
}

/// [`check`] of a request read from line `r.line` of `path`: the error
/// names the file, the line and the field.
pub(crate) fn check_line(
    path: &std::path::Path,
    r: &TimedRequest,
    n: &Names,
    seen: &mut Seen,
) -> Result<(), aisim_replay::ReplayError> {
    check(r, n, seen).map_err(|b| aisim_replay::trace::row_error(path, r.line, &b.field, b.reason))
}

/// [`check`] of a request of a JSON document: the error names the file and
/// the field's JSON path (the names are paths).
pub(crate) fn check_path(
    path: &std::path::Path,
    r: &TimedRequest,
    n: &Names,
    seen: &mut Seen,
) -> Result<(), super::FidelityError> {
    check(r, n, seen).map_err(|b| super::FidelityError::field(path, b.field, b.reason))
}
