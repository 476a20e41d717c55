//! The service's errors: those that stop it from starting (the user's, the
//! CLI's exit 2, or the machine's), and an API call's, answered as JSON.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why the service cannot start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The flags, the token or the data folder (exit 2).
    #[error("{0}")]
    Config(String),
    /// The machine refused something (exit 1).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

impl ServeError {
    /// An I/O failure while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> ServeError {
        ServeError::Io {
            what: what.into(),
            source,
        }
    }

    /// Whether the user can fix it (the CLI's exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, ServeError::Config(_))
    }
}

/// An API call's failure: a status and a message, sent as
/// `{"error": message}`, never a backtrace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for the user.
    pub message: String,
}

impl ApiError {
    /// 400: the request is wrong.
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such trace, job or output.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: not in a state that allows it.
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    /// 500: the service failed (a disk error); the message says what it did.
    pub fn internal(what: &str, e: impl std::fmt::Display) -> ApiError {
        tracing::error!("{what}: {e}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{what}: {e}"))
    }

    /// Any status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}
