//! One call per job. Every subcommand that computes something is one
//! function here: it takes a request (the subcommand's parameters as a
//! serde struct, named as the CLI's flags in snake case, with the CLI's
//! defaults, what the CLI requires required, unknown fields refused, and an
//! optional `version`) and returns the report
//! the CLI prints with `--format json`. The front ends (the CLI, and the
//! service and Python module to come) only turn their input into a request,
//! call the function and render what it returns: no front end holds logic
//! of its own, so all of them give the same bytes for the same request.

pub mod catalog;
pub mod count;
mod error;
pub mod fidelity;
pub mod flags;
pub mod fleet;
mod named;
pub mod replay;
pub mod replay_flags;
pub mod sweep;
pub mod synthetic_flags;
pub mod timing_form;

pub use error::{is_internal, paragraph, JobError};
pub use named::from_value_named;

use serde::{Deserialize, Deserializer};

/// Version of every job request.
pub const JOB_VERSION: u32 = 1;

/// A request's `version`: optional (it defaults to [`JOB_VERSION`]), and
/// only [`JOB_VERSION`] is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Version(u32);

impl Version {
    /// The version this aisim reads.
    pub const CURRENT: Version = Version(JOB_VERSION);
}

impl Default for Version {
    fn default() -> Version {
        Version::CURRENT
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Version, D::Error> {
        let v = u32::deserialize(d)?;
        if v != JOB_VERSION {
            return Err(serde::de::Error::custom(format!(
                "request version {v} is not supported; this aisim reads version {JOB_VERSION}"
            )));
        }
        Ok(Version(v))
    }
}

/// A request read from JSON, its errors naming the line, column and field.
pub fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, JobError> {
    serde_json::from_str(text).map_err(|e| JobError::msg(format!("{what}: {e}")))
}
