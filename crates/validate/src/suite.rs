//! A directory of validations: every `NAME.parv` with a `NAME.trace` beside it, as
//! DiskSim's `valid/` directory holds them (`headway validate DIR`).

use std::path::{Path, PathBuf};

use crate::error::ValidateError;

/// The `NAME.parv` files of `dir` that have a `NAME.trace` beside them, by name.
pub fn suite(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>, ValidateError> {
    let mut pairs = Vec::new();
    let unreadable = |err| ValidateError::ReadDir { dir: dir.to_path_buf(), err };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.extension().is_some_and(|e| e == "parv") {
            let trace = path.with_extension("trace");
            if trace.is_file() {
                pairs.push((path, trace));
            }
        }
    }
    pairs.sort();
    if pairs.is_empty() {
        return Err(ValidateError::EmptySuite { dir: dir.to_path_buf() });
    }
    Ok(pairs)
}
