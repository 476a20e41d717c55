//! Failures and their exit codes (docs/errors.md): 2 for usage, configuration
//! or input errors (the user can fix them), 1 for a failed write or an internal
//! error (a bug), 0 when the reader of stdout went away.

use std::backtrace::BacktraceStatus;
use std::io::Write;
use std::process::ExitCode;

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad usage, configuration or input: exit 2, never a backtrace.
    Input(anyhow::Error),
    /// A broken invariant of the simulator: exit 1, with a backtrace when
    /// `RUST_BACKTRACE` asks for one.
    Internal(anyhow::Error),
    /// An output could not be written (disk full, ...): exit 1, one line.
    Write(String),
    /// Whoever read stdout went away (`aisim ... | head`): exit 0, quietly.
    ClosedPipe,
}

impl CliError {
    /// Prints one clear paragraph (the error and the causes it does not
    /// already say) to stderr and gives the exit code.
    pub fn report(self) -> ExitCode {
        let mut err = std::io::stderr().lock();
        // Nothing sensible is left to do when stderr itself fails.
        let (e, code, backtrace) = match self {
            CliError::ClosedPipe => return ExitCode::SUCCESS,
            CliError::Write(line) => {
                let _ = writeln!(err, "error: {line}");
                return ExitCode::from(1);
            }
            CliError::Input(e) => (e, 2, false),
            CliError::Internal(e) => (e, 1, true),
        };
        let _ = write!(err, "{}", paragraph(&e));
        if backtrace && e.backtrace().status() == BacktraceStatus::Captured {
            let _ = writeln!(err, "{}", e.backtrace());
        }
        ExitCode::from(code)
    }
}

/// Makes a panic (always a bug) read like the other internal errors: one
/// paragraph, a backtrace only when `RUST_BACKTRACE` asks for one; `main`
/// then exits 1.
pub fn report_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic");
        let at = info.location().map(|l| l.to_string()).unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{}", panic_paragraph(what, &at));
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == BacktraceStatus::Captured {
            let _ = writeln!(err, "{backtrace}");
        }
    }));
}

fn panic_paragraph(what: &str, at: &str) -> String {
    format!("error: internal error: {what} (at {at}); this is a bug in aisim, please report it with the command line\n")
}

/// `error: MESSAGE` and a `caused by:` line per cause whose text the lines
/// above do not already contain (thiserror messages often embed their source).
fn paragraph(e: &anyhow::Error) -> String {
    let mut said = vec![e.to_string()];
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
    }
    let mut out = format!("error: {}\n", said[0]);
    for cause in &said[1..] {
        out.push_str(&format!("  caused by: {cause}\n"));
    }
    // A path or value the user gave may carry terminal escapes.
    aisim_core::safe_text::terminal_safe(&out).into_owned()
}

/// An error for the user to fix (exit 2), unless a library error in its chain
/// says it is internal (exit 1): every library error goes through here.
pub fn input<E: Into<anyhow::Error>>(e: E) -> CliError {
    let e = e.into();
    if is_internal(&e) {
        CliError::Internal(e)
    } else {
        CliError::Input(e)
    }
}

fn is_internal(e: &anyhow::Error) -> bool {
    e.chain().any(aisim_lab::jobs::is_internal)
}

/// A job's failure as the CLI reports it: the same chain of causes, exit 2
/// for the user's input, 1 for aisim's bug.
pub fn job(e: aisim_lab::jobs::JobError) -> CliError {
    input(anyhow_of(e))
}

/// A job's failure as an `anyhow` error (its chain of causes kept), for
/// code that adds context before reporting it.
pub fn anyhow_of(e: aisim_lab::jobs::JobError) -> anyhow::Error {
    anyhow::Error::from_boxed(e.into_boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        // The library's I/O errors embed their source in their message.
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(aisim_replay::ReplayError::Io {
            path: "x.json".into(),
            source: io,
        });
        assert_eq!(paragraph(&e), "error: cannot read x.json: no such file\n");
        let e = anyhow::anyhow!("no such file").context("loading the spec");
        assert_eq!(
            paragraph(&e),
            "error: loading the spec\n  caused by: no such file\n"
        );
    }

    #[test]
    fn a_panic_is_reported_as_an_internal_error() {
        assert_eq!(
            panic_paragraph("index out of bounds", "src/x.rs:3:5"),
            "error: internal error: index out of bounds (at src/x.rs:3:5); this is a bug in aisim, please report it with the command line\n"
        );
    }

    #[test]
    fn internal_library_errors_are_not_input_errors() {
        let bug = aisim_replay::ReplayError::Internal {
            reason: "stalled".into(),
        };
        assert!(matches!(
            input(anyhow::Error::new(bug).context("replaying")),
            CliError::Internal(_)
        ));
        let user = aisim_replay::ReplayError::Spec {
            field: "topology.workers".into(),
            reason: "0".into(),
        };
        assert!(matches!(input(user), CliError::Input(_)));
        // A placement policy's out-of-range choice is the policy's bug.
        let placement = aisim_replay::ReplayError::Placement {
            policy: "mine".into(),
            pool: "workers".into(),
            worker: 9,
            rank: 0,
            workers: 2,
            dp_size: 1,
        };
        assert!(matches!(input(placement), CliError::Internal(_)));
    }
}
