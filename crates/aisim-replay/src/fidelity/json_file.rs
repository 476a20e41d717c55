//! Reading the small JSON files of this module (measured runs, fitted
//! coefficients, run metadata): bounded in size, parse errors naming the
//! file, line and column.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::FidelityError;
use crate::ReplayError;

pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, FidelityError> {
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| ReplayError::from(aisim_core::CoreError::from(e)))?;
    serde_json::from_str(&text).map_err(|e| {
        FidelityError::field(
            path,
            format!("line {} column {}", e.line(), e.column()),
            e.to_string(),
        )
    })
}
