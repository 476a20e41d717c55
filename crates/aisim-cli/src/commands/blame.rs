//! A spec error names the spec field (`admission.speedup`); when a flag set
//! that field, the user typed the flag, so the message leads with it.

use std::path::Path;

use aisim_core::CoreError;
use aisim_replay::ReplayError;

/// A spec field, the flag that sets it, and whether that flag was given.
pub type FieldFlag = (&'static str, &'static str, bool);

/// `e`, led by the flag of `fields` that was given and set the field `e`
/// names (the library error stays in the chain; its text, already in the
/// message, is not repeated as a cause).
pub fn blame_flag(e: ReplayError, fields: &[FieldFlag]) -> anyhow::Error {
    let field = match &e {
        ReplayError::Spec { field, .. } => field.as_str(),
        ReplayError::Core(CoreError::InvalidConfig { field, .. }) => field,
        _ => return e.into(),
    };
    match fields.iter().find(|(f, _, given)| *given && *f == field) {
        Some((_, flag, _)) => {
            // Another field the message names, set by a flag, is named by
            // its flag too (two pools' profiles that disagree).
            let mut message = format!("{flag}: {e}");
            for (other, other_flag, _) in fields.iter().filter(|(f, _, g)| *g && *f != field) {
                let quoted = format!("`{other}`");
                // The first flag of a field only (`contains` fails after it).
                if message.contains(&quoted) && !message.contains(&format!("{quoted}, ")) {
                    message = message.replace(&quoted, &format!("{quoted}, {other_flag}"));
                }
            }
            anyhow::Error::new(e).context(message)
        }
        None => e.into(),
    }
}

/// `e` from reading the spec file `path`, naming the file when it does not
/// already (a value out of range names only its field).
pub fn blame_file(e: ReplayError, path: &Path) -> anyhow::Error {
    let message = e.to_string();
    let named = path.display().to_string();
    if message.contains(&named) {
        e.into()
    } else {
        anyhow::Error::new(e).context(format!("{named}: {message}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_error(field: &str) -> ReplayError {
        ReplayError::Spec {
            field: field.into(),
            reason: "-2 must be above 0".into(),
        }
    }

    #[test]
    fn the_given_flag_behind_a_field_leads_the_message() {
        let fields = [
            ("admission.speedup", "--speedup", true),
            ("topology.workers", "--workers", false),
        ];
        let e = blame_flag(spec_error("admission.speedup"), &fields);
        assert_eq!(
            e.to_string(),
            "--speedup: invalid replay spec: `admission.speedup`: -2 must be above 0"
        );
        assert!(e.downcast_ref::<ReplayError>().is_some());
        // Not given: the field came from a spec file or a default.
        let e = blame_flag(spec_error("topology.workers"), &fields);
        assert_eq!(
            e.to_string(),
            "invalid replay spec: `topology.workers`: -2 must be above 0"
        );
        let core = ReplayError::Core(CoreError::InvalidConfig {
            field: "dp_size",
            value: "0".into(),
            reason: "must be at least 1".into(),
        });
        let e = blame_flag(core, &[("dp_size", "--dp-size", true)]);
        assert!(e
            .to_string()
            .starts_with("--dp-size: invalid engine configuration: `dp_size` = 0"));
    }

    #[test]
    fn a_spec_file_error_names_the_file_once() {
        let e = blame_file(spec_error("topology.workers"), Path::new("run.json"));
        assert_eq!(
            e.to_string(),
            "run.json: invalid replay spec: `topology.workers`: -2 must be above 0"
        );
        let parse = ReplayError::SpecFile {
            path: "run.json".into(),
            reason: "line 1 column 2: bad".into(),
        };
        assert_eq!(
            blame_file(parse, Path::new("run.json")).to_string(),
            "run.json: line 1 column 2: bad"
        );
    }
}
