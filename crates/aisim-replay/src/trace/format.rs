//! The trace formats aisim reads. Detection returns one and `mod.rs` reads
//! by it, so it lives below both.

use serde::{Deserialize, Serialize};

/// A supported trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Mooncake JSONL: `timestamp` (ms), lengths, `hash_ids`.
    Mooncake,
    /// Qwen Bailian / agentic-coder JSONL: `chat_id`, `parent_chat_id`, `timestamp` (s).
    Bailian,
    /// Azure LLM inference CSV: `TIMESTAMP`, `ContextTokens`, `GeneratedTokens`.
    Azure,
    /// BurstGPT CSV: `Timestamp` (s), `Request tokens`, `Response tokens`, ...
    Burstgpt,
}

impl TraceFormat {
    /// Tokens per trace block when the user does not say.
    pub fn default_block_size(self) -> u32 {
        match self {
            TraceFormat::Bailian => 16,
            _ => 512,
        }
    }

    /// The field that holds a row's arrival, as errors name it.
    pub fn timestamp_field(self) -> &'static str {
        match self {
            TraceFormat::Mooncake | TraceFormat::Bailian => "timestamp",
            TraceFormat::Azure => "TIMESTAMP",
            TraceFormat::Burstgpt => "Timestamp",
        }
    }

    /// The field that holds a turn's think time, as errors name it.
    pub fn think_field(self) -> &'static str {
        match self {
            TraceFormat::Bailian => "time_to_parent_chat",
            _ => "delay_ms",
        }
    }

    /// Name as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mooncake => "mooncake",
            TraceFormat::Bailian => "bailian",
            TraceFormat::Azure => "azure",
            TraceFormat::Burstgpt => "burstgpt",
        }
    }
}
