//! User text made safe for where it is shown (docs/errors.md, "Output
//! files"): a terminal never receives a control character a trace path or
//! session id carried (an escape sequence could retitle the window or hide
//! output), and a CSV cell never starts like a spreadsheet formula (OWASP's
//! CSV-injection guidance). JSON and HTML have escapes of their own.

use std::borrow::Cow;

/// `text` with every control character but the line break written as an
/// escape (`\x1b`, `\u{9b}`), for a terminal.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push(c),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A CSV text cell that a spreadsheet would run as a formula (one starting
/// with `=`, `+`, `-`, `@`, a tab or a carriage return) quoted with a
/// leading `'`; numbers (`-1.5`) stay as they are.
pub fn csv_safe(cell: &str) -> Cow<'_, str> {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && cell.parse::<f64>().is_err() {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_for_a_terminal() {
        assert_eq!(terminal_safe("a/b.jsonl"), "a/b.jsonl");
        assert_eq!(
            terminal_safe("t\u{1b}]0;pwned\u{7}.jsonl"),
            "t\\x1b]0;pwned\\x07.jsonl"
        );
        assert_eq!(terminal_safe("a\nb\tc\r"), "a\nb\\x09c\\x0d");
        assert_eq!(terminal_safe("\u{9b}31m"), "\\u{9b}31m");
    }

    #[test]
    fn formulas_are_quoted_and_numbers_kept() {
        assert_eq!(csv_safe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        for risky in ["+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert!(csv_safe(risky).starts_with('\''), "{risky:?}");
        }
        for kept in ["-1.5", "42", "round_robin", "", "a=b"] {
            assert_eq!(csv_safe(kept), kept);
        }
    }
}
