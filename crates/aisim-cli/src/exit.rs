//! Failures and their exit codes: 2 for usage, configuration or input errors
//! (the user can fix them), 1 for a run that failed.

use std::process::ExitCode;

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad usage, configuration or input: exit 2.
    Input(anyhow::Error),
    /// The run itself failed: exit 1.
    #[allow(dead_code)]
    Run(anyhow::Error),
}

impl CliError {
    /// Prints one clear paragraph (the error and its causes) and gives the exit code.
    pub fn report(self) -> ExitCode {
        let (e, code) = match self {
            CliError::Input(e) => (e, 2),
            CliError::Run(e) => (e, 1),
        };
        eprintln!("error: {e}");
        for cause in e.chain().skip(1) {
            eprintln!("  caused by: {cause}");
        }
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            eprintln!("{}", e.backtrace());
        }
        ExitCode::from(code)
    }
}

/// Marks any error as an input error.
pub fn input<E: Into<anyhow::Error>>(e: E) -> CliError {
    CliError::Input(e.into())
}
