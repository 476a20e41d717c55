//! Reading the small JSON files of this module (measured runs, fitted
//! coefficients, run metadata): bounded in size, parse errors naming the
//! file, line and column.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::FidelityError;
use aisim_replay::ReplayError;

pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, FidelityError> {
    let text = aisim_core::text_file::read_text_file(path)
        .map_err(|e| ReplayError::from(aisim_core::CoreError::from(e)))?;
    // `FILE: line L column C: WHAT`, the place said once, as every JSON reader.
    serde_json::from_str(&text).map_err(|e| {
        FidelityError::from(ReplayError::SpecFile {
            path: path.to_path_buf(),
            reason: aisim_core::text_file::json_error_text(&e),
        })
    })
}
