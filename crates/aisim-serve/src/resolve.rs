//! A job's request as the library reads it: every `upload:ID` (and
//! `trace:upload:ID`, a fleet planner's `--cdf`) turned into the uploaded
//! trace's file, and, unless the service was started with
//! `--allow-local-files`, any other string naming a file on the server
//! refused: a client reads the traces it uploaded, not the server's disk.

use std::path::Path;

use serde_json::Value;

use crate::error::ApiError;
use crate::traces::TraceStore;

/// How an uploaded trace is named in a request.
pub const UPLOAD: &str = "upload:";

/// Whether `s` looks like a path on the server: absolute, home-relative,
/// climbing, or naming something that exists from the service's folder.
fn names_local_file(s: &str) -> bool {
    let looks = |c: &str| {
        !c.is_empty()
            && (c.starts_with('/')
                || c.starts_with('~')
                || c.starts_with("./")
                || c.starts_with("../")
                || c == ".."
                || c.contains("/../")
                || c.contains('\\')
                || Path::new(c).exists())
    };
    looks(s) || s.split_once(':').is_some_and(|(_, rest)| looks(rest))
}

/// Rewrites the uploads `value` names into their files and refuses local
/// paths unless `allow_local`. `at` is the JSON pointer errors name.
pub fn resolve(
    value: &mut Value,
    at: &str,
    traces: &TraceStore,
    allow_local: bool,
) -> Result<(), ApiError> {
    match value {
        Value::String(s) => {
            let (lead, rest) = match s.strip_prefix("trace:") {
                Some(rest) => ("trace:", rest),
                None => ("", s.as_str()),
            };
            if let Some(id) = rest.strip_prefix(UPLOAD) {
                let path = traces.path(id).ok_or_else(|| {
                    ApiError::bad(format!("{at}: {s}: no uploaded trace has id `{id}`"))
                })?;
                *s = format!("{lead}{}", path.display());
            } else if !allow_local && names_local_file(s) {
                return Err(ApiError::bad(format!(
                    "{at}: {s}: names a file on the server; this service reads only uploaded traces, named upload:ID (start it with --allow-local-files to let jobs read the server's files)"
                )));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                resolve(v, &format!("{at}/{i}"), traces, allow_local)?;
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let key = k.replace('~', "~0").replace('/', "~1");
                resolve(v, &format!("{at}/{key}"), traces, allow_local)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_are_told_from_names() {
        for path in [
            "/etc/passwd",
            "../x",
            "./x",
            "a/../../b",
            "~/.ssh/id",
            "trace:/etc/passwd",
            "fitted:/tmp/f.json",
            "Cargo.toml",
        ] {
            assert!(names_local_file(path), "{path}");
        }
        for name in [
            "h100/llama-3.1-8b",
            "1..8",
            "azure",
            "least_loaded",
            "vllm",
            "",
        ] {
            assert!(!names_local_file(name), "{name}");
        }
    }
}
