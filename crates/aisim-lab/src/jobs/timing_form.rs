//! The text form of a timing model (`--timing physics`, `fixed:20,5`, ...)
//! and `--profile`, shared by every job that takes them (replay flags,
//! `validate`, `calibrate`, `measured import`, the fleet's engine checks).

use aisim_core::timing::{PhysicsCoefficients, TimingSpec};

use super::JobError;
use crate::fidelity::calibrate::FittedFile;

/// What `--timing` accepts, for help texts and errors.
pub const TIMING_FORMS: &str =
    "polynomial, fixed:PREFILL_MS,DECODE_MS, table:FILE, physics, fitted:FITTED.json or layers:DIR[,LAYERS]";

/// The timing `--timing s` and `--profile` describe; the physics forms take
/// their profile from `--profile`, else from `base` (the spec's timing).
pub fn parse_timing(
    s: &str,
    profile: Option<&str>,
    base: &TimingSpec,
) -> Result<TimingSpec, JobError> {
    let physics = |coefficients: PhysicsCoefficients,
                   fitted_on: Vec<String>|
     -> Result<TimingSpec, JobError> {
        let profile = profile.or(base.profile_key()).ok_or_else(|| {
            JobError::msg(format!("--timing {s} needs a computed profile: give --profile HARDWARE/MODEL (e.g. h100/llama-3.1-8b)"))
        })?;
        Ok(TimingSpec::Physics {
            profile: profile.to_string(),
            coefficients,
            fitted_on,
        })
    };
    let timing = if s == "polynomial" {
        TimingSpec::Polynomial
    } else if let Some(path) = s.strip_prefix("fitted:") {
        // What the file was fitted on goes with its coefficients: a replay
        // with another profile warns (`TimingSpec::fit_warning`).
        let fitted = read_fitted(path)?;
        physics(fitted.coefficients, fitted.profiles)?
    } else if s == "physics" {
        physics(PhysicsCoefficients::default(), Vec::new())?
    } else if let Some(rest) = s.strip_prefix("layers:") {
        let (dir, layers) = match rest.rsplit_once(',') {
            Some((d, n)) => {
                let n: u32 = n.trim().parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    JobError::msg(format!("--timing layers:DIR,LAYERS: `{n}` is not a decoder layer count of 1 or more"))
                })?;
                (d, Some(n))
            }
            None => (rest, None),
        };
        TimingSpec::Layers {
            dir: dir.into(),
            layers,
        }
    } else if let Some(rest) = s.strip_prefix("fixed:") {
        let (p, d) = rest.split_once(',').ok_or_else(|| {
            JobError::msg("fixed timing is written fixed:PREFILL_MS,DECODE_MS, e.g. fixed:20,5")
        })?;
        let ms = |v: &str| -> Result<f64, JobError> {
            v.trim().parse().map_err(|e: std::num::ParseFloatError| {
                JobError::from(e).context(format!("`{v}` is not a number of milliseconds"))
            })
        };
        TimingSpec::Fixed {
            prefill_ms: ms(p)?,
            decode_ms: ms(d)?,
        }
    } else if let Some(path) = s.strip_prefix("table:") {
        TimingSpec::Table { path: path.into() }
    } else {
        return Err(JobError::msg(format!("--timing `{s}`: use {TIMING_FORMS}")));
    };
    if let (Some(p), None) = (profile, timing.profile_key()) {
        return Err(JobError::msg(format!("--profile {p} has no effect with --timing {s}: it names the profile of --timing physics or fitted:FILE")));
    }
    Ok(timing)
}

/// The forms of `--timing` that carry a path (a file or folder).
const PATH_FORMS: [&str; 3] = ["table:", "fitted:", "layers:"];

/// `--timing s` with the relative path its form carries (`table:FILE`,
/// `fitted:FILE`, `layers:DIR[,LAYERS]`) taken from `folder` (a sweep
/// grid's): such a path is read, at flag-parse time for `fitted:`, relative
/// to the grid and not to the current folder. Other forms as they are.
pub fn timing_in(s: &str, folder: &std::path::Path) -> Result<String, JobError> {
    let Some(form) = PATH_FORMS.iter().find(|f| s.starts_with(**f)) else {
        return Ok(s.to_string());
    };
    let joined = folder.join(&s[form.len()..]);
    let path = joined.to_str().ok_or_else(|| {
        JobError::msg(format!(
            "--timing {s}: the grid's folder {} is not unicode, so the path cannot be written into the flag",
            folder.display()
        ))
    })?;
    Ok(format!("{form}{path}"))
}

/// A fitted file, read as `--timing fitted:FILE` names it.
fn read_fitted(path: &str) -> Result<FittedFile, JobError> {
    FittedFile::from_file(path.as_ref())
        .map_err(|e| JobError::from(e).context("--timing fitted:FILE"))
}

/// The time outside the engine a `--timing fitted:FILE` was fitted with
/// (runs served over HTTP), if it was; other forms have none.
pub fn fitted_frontend_ms(timing: Option<&str>) -> Result<Option<f64>, JobError> {
    match timing.and_then(|t| t.strip_prefix("fitted:")) {
        Some(path) => Ok(read_fitted(path)?.frontend_ms),
        None => Ok(None),
    }
}

/// The front end `--frontend SERVED` and `--frontend-ms MS` set over
/// `spec`'s: where requests come from, and the time outside the engine,
/// which is `ms` when given, else a `--timing fitted:FILE`'s fitted one for a
/// server that has a front end, else the spec's (or its default).
pub fn apply_frontend(
    spec: &mut aisim_replay::ReplaySpec,
    served: Option<aisim_replay::frontend::Served>,
    ms: Option<f64>,
    timing: Option<&str>,
) -> Result<(), JobError> {
    if let Some(s) = served {
        spec.frontend.served = s;
    }
    let fitted = if spec.frontend.served.is_in_process() {
        None
    } else {
        fitted_frontend_ms(timing)?
    };
    if let Some(ms) = ms.or(fitted) {
        spec.frontend.request_ms = Some(ms);
    }
    Ok(())
}

/// The coefficients of `--timing physics` (the defaults) or `fitted:FILE`,
/// where the profile comes from elsewhere (the fleet's pools).
pub fn physics_coefficients(s: &str) -> Result<PhysicsCoefficients, JobError> {
    if s == "physics" {
        return Ok(PhysicsCoefficients::default());
    }
    match s.strip_prefix("fitted:") {
        Some(path) => Ok(read_fitted(path)?.coefficients),
        None => Err(JobError::msg(format!(
            "--timing `{s}`: use physics or fitted:FITTED.json"
        ))),
    }
}

/// The timing `--timing` / `--profile` set over `base`, if either is given:
/// `--profile` alone is the iteration model of that profile.
pub fn timing_flags(
    timing: Option<&str>,
    profile: Option<&str>,
    base: &TimingSpec,
) -> Result<Option<TimingSpec>, JobError> {
    Ok(match (timing, profile) {
        (Some(t), p) => Some(parse_timing(t, p, base)?),
        (None, Some(p)) => Some(TimingSpec::Iteration {
            profile: p.to_string(),
        }),
        (None, None) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_path_form_is_taken_from_the_folder_and_the_rest_kept() {
        let g = Path::new("/grids/a");
        for (given, want) in [
            ("fitted:f.json", "fitted:/grids/a/f.json"),
            ("table:t.json", "table:/grids/a/t.json"),
            ("layers:prof,32", "layers:/grids/a/prof,32"),
            ("fitted:/abs/f.json", "fitted:/abs/f.json"),
            ("fixed:20,5", "fixed:20,5"),
            ("physics", "physics"),
        ] {
            assert_eq!(timing_in(given, g).unwrap(), want);
        }
    }
}
