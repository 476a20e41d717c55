//! A request read from a JSON value (what a service received) with its
//! errors naming the field by its JSON pointer (`request/plan/lam`), not by
//! a line and column of text the user never saw: the value is laid out one
//! field a line, and the error's line is turned back into the field's path.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::JobError;

/// Writes `v` one scalar a line, pushing each line's pointer.
fn layout(v: &Value, at: &str, out: &mut String, lines: &mut Vec<String>) {
    let newline = |out: &mut String, lines: &mut Vec<String>, at: &str| {
        out.push('\n');
        lines.push(at.to_string());
    };
    match v {
        Value::Object(map) => {
            out.push('{');
            newline(out, lines, at);
            for (i, (k, item)) in map.iter().enumerate() {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                layout(item, &here, out, lines);
                if i + 1 < map.len() {
                    out.push(',');
                }
                newline(out, lines, &here);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            newline(out, lines, at);
            for (i, item) in items.iter().enumerate() {
                let here = format!("{at}/{i}");
                layout(item, &here, out, lines);
                if i + 1 < items.len() {
                    out.push(',');
                }
                newline(out, lines, &here);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Reads `value` as `T`; an error names the field under `what`.
pub fn from_value_named<T: DeserializeOwned>(what: &str, value: &Value) -> Result<T, JobError> {
    let mut text = String::new();
    let mut lines = Vec::new();
    layout(value, what, &mut text, &mut lines);
    lines.push(what.to_string());
    serde_json::from_str(&text).map_err(|e| {
        let at = lines
            .get(e.line().saturating_sub(1))
            .map_or(what, String::as_str);
        // serde's own text without its position in the laid-out text.
        let text = e.to_string();
        let text = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(head, _)| head);
        JobError::msg(format!("{at}: {text}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::fleet::{DisaggRequest, OptimizeRequest};
    use serde_json::json;

    fn error<T: DeserializeOwned + std::fmt::Debug>(v: Value) -> String {
        from_value_named::<T>("request", &v)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_the_field_by_its_path() {
        let e = error::<OptimizeRequest>(json!({"plan": {"lam": "fast"}}));
        assert!(
            e.starts_with("request/plan/lam: invalid type: string \"fast\""),
            "{e}"
        );
        let e = error::<OptimizeRequest>(json!({"plan": {"lam": 5}, "verify_tpo": 1}));
        assert!(
            e.starts_with("request/verify_tpo: unknown field `verify_tpo`"),
            "{e}"
        );
        let e = error::<DisaggRequest>(json!({"lam": 5, "gpu_prefill": ["h100"]}));
        assert!(e.starts_with("request/gpu_prefill"), "{e}");
        assert!(!e.contains("line"), "{e}");
        let ok: DisaggRequest = from_value_named("request", &json!({"lam": 5})).unwrap();
        assert_eq!(ok.lam, 5.0);
    }
}
