//! The prompts of an AIPerf run, from `inputs.json` beside its export.
//!
//! Schema read from AIPerf's public source (ai-dynamo/aiperf,
//! `aiperf/common/models/dataset_models.py`: `InputsFile`, a `data` list of
//! `SessionPayloads`, each a `session_id` (the dataset's conversation id,
//! which each record's `metadata.conversation_id` names) and `payloads`,
//! one a turn, the request body as sent: a chat body's `messages` (each a
//! `role` and a `content`, text or a list of parts with `text`), a
//! completion body's `prompt` (text, texts, or token ids)). Facts used,
//! not code.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::json_file::read_json;
use super::FidelityError;

/// A prompt as the request sent it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Prompt {
    /// Its text (a chat's messages, each its role and its content).
    Text(String),
    /// Its token ids.
    Tokens(Vec<u64>),
}

/// Every turn's prompt, by conversation id and turn (0-based).
pub(crate) type Prompts = HashMap<(String, u32), Prompt>;

/// The file's name in an AIPerf artifact folder.
pub(crate) const INPUTS_FILE: &str = "inputs.json";

/// Reads `inputs.json`; every payload must hold a prompt.
pub(crate) fn read_inputs(path: &Path) -> Result<Prompts, FidelityError> {
    let v: Value = read_json(path)?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| FidelityError::field(path, "data", "missing, or not a list of sessions"))?;
    let mut out = Prompts::new();
    for (i, session) in data.iter().enumerate() {
        let at = format!("data[{i}]");
        let id = match session.get("session_id") {
            Some(Value::String(s)) => s.clone(),
            other => {
                return Err(FidelityError::field(
                    path,
                    format!("{at}.session_id"),
                    format!(
                        "{}: must be the conversation's id",
                        other.map_or("missing".into(), Value::to_string)
                    ),
                ))
            }
        };
        let payloads = session
            .get("payloads")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                FidelityError::field(path, format!("{at}.payloads"), "missing, or not a list")
            })?;
        for (turn, p) in payloads.iter().enumerate() {
            let field = format!("{at}.payloads[{turn}]");
            let prompt = prompt(p).map_err(|reason| FidelityError::field(path, field, reason))?;
            out.insert((id.clone(), turn as u32), prompt);
        }
    }
    Ok(out)
}

/// The text of a message's `content`: text, or the text of its parts.
fn content_text(c: &Value) -> Option<String> {
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn prompt(p: &Value) -> Result<Prompt, String> {
    if let Some(messages) = p.get("messages") {
        let messages = messages
            .as_array()
            .ok_or("messages: must be a list of messages")?;
        let mut text = String::new();
        for (k, m) in messages.iter().enumerate() {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            let content = m
                .get("content")
                .and_then(content_text)
                .ok_or_else(|| format!("messages[{k}].content: must be text or a list of parts"))?;
            text.push_str(role);
            text.push('\n');
            text.push_str(&content);
            text.push('\n');
        }
        return Ok(Prompt::Text(text));
    }
    match p.get("prompt") {
        Some(Value::String(s)) => Ok(Prompt::Text(s.clone())),
        Some(Value::Array(a)) if a.iter().all(Value::is_u64) => {
            Ok(Prompt::Tokens(a.iter().filter_map(Value::as_u64).collect()))
        }
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(Prompt::Text(
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        Some(_) => Err("prompt: must be text, texts or token ids".into()),
        None => Err("holds neither messages nor a prompt: the request's prompt is unknown".into()),
    }
}
