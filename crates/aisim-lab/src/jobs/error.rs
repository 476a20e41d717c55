//! Why a job failed, and whose fault it is: the user's input (the CLI's exit
//! 2, the service's 400, Python's `ValueError`) or a bug in aisim (exit 1,
//! 500, `RuntimeError`). The library's own error types say which; a job
//! keeps them whole, so every front end prints the same chain of causes.

use std::error::Error;
use std::fmt;

/// A job's failure: the library error (or a message about the request),
/// with the context the job added around it.
#[derive(Debug)]
pub struct JobError {
    error: Box<dyn Error + Send + Sync + 'static>,
}

/// A message about the request itself (a flag with no effect, a value out of range).
#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Message {}

/// A cause with what was being done when it happened.
#[derive(Debug)]
struct Context {
    text: String,
    source: Box<dyn Error + Send + Sync + 'static>,
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Error for Context {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(self.source.as_ref())
    }
}

impl JobError {
    /// An error in the request, said in `text` (an input error).
    pub fn msg(text: impl Into<String>) -> JobError {
        JobError {
            error: Box::new(Message(text.into())),
        }
    }

    /// An error a front end took apart with [`JobError::into_boxed`].
    pub fn from_boxed(error: Box<dyn Error + Send + Sync + 'static>) -> JobError {
        JobError { error }
    }

    /// This error as the cause of `text` (what was being done).
    pub fn context(self, text: impl Into<String>) -> JobError {
        JobError {
            error: Box::new(Context {
                text: text.into(),
                source: self.error,
            }),
        }
    }

    /// Whether this is aisim's bug rather than the user's input.
    pub fn is_internal(&self) -> bool {
        is_internal(self.error.as_ref())
    }

    /// The error and its causes, for a front end's own error type.
    pub fn into_boxed(self) -> Box<dyn Error + Send + Sync + 'static> {
        self.error
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl<E: Error + Send + Sync + 'static> From<E> for JobError {
    fn from(e: E) -> JobError {
        JobError { error: Box::new(e) }
    }
}

/// Whether any error in the chain from `e` is one a library marks internal.
pub fn is_internal(e: &(dyn Error + 'static)) -> bool {
    std::iter::successors(Some(e), |e: &&(dyn Error + 'static)| (*e).source()).any(|c| {
        c.downcast_ref::<aisim_replay::ReplayError>()
            .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<aisim_core::CoreError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<aisim_fleet::FleetError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<crate::fidelity::FidelityError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<aisim_core::cache_lab::CacheLabError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<crate::seeds::SeedsError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<crate::sweep::SweepError>()
                .is_some_and(|r| r.is_internal())
            || c.downcast_ref::<crate::saturate::SaturateError>()
                .is_some_and(|r| r.is_internal())
    })
}

/// `Err(msg)` when a field was given that has no effect here (`why`): an
/// error, never a silent no-op.
pub(crate) fn no_effect(given: bool, flag: &str, why: &str) -> Result<(), JobError> {
    if given {
        Err(JobError::msg(format!("{flag} has no effect here: {why}")))
    } else {
        Ok(())
    }
}

/// The error and the causes it does not already say, one per line, as the
/// front ends word a failure (the CLI's `error:` paragraph, Python's
/// exception, the service's job error), without a lead.
pub fn paragraph(e: &(dyn Error + 'static)) -> String {
    let mut said = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        cause = c.source();
    }
    said.join("\n  caused by: ")
}
