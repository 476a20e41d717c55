//! The files a plan's runs read (traces, timing tables), recorded in the
//! plan by size and content hash: a run whose input changed since the plan
//! was made is refused, so one results table never mixes runs of two
//! versions of a trace. The plan's digest covers them, so results of
//! plans over different contents never merge either.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SweepError;

/// One input file as the plan saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The path, as the spec names it.
    pub path: PathBuf,
    /// Its size, bytes.
    pub bytes: u64,
    /// FNV-1a 64 of its content, 16 hex digits.
    pub fnv64: String,
}

/// Each file read once, however many runs name it.
#[derive(Debug, Default)]
pub struct Fingerprints {
    seen: HashMap<PathBuf, InputFile>,
}

impl Fingerprints {
    /// The input files of `spec`'s run, fingerprinted now.
    pub fn of(&mut self, spec: &aisim_replay::ReplaySpec) -> Result<Vec<InputFile>, SweepError> {
        spec.input_files()
            .into_iter()
            .map(|(_, path)| self.get(path))
            .collect()
    }

    fn get(&mut self, path: &Path) -> Result<InputFile, SweepError> {
        if let Some(f) = self.seen.get(path) {
            return Ok(f.clone());
        }
        let f = fingerprint(path)?;
        self.seen.insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    /// Refuses run `id` of plan `plan` (read from `plan_path`) when a file
    /// it reads is not what the plan recorded in `inputs`.
    pub fn check(
        &mut self,
        plan_path: &Path,
        plan: &str,
        id: &str,
        inputs: &[InputFile],
    ) -> Result<(), SweepError> {
        for planned in inputs {
            let now = self.get(&planned.path)?;
            if now != *planned {
                return Err(SweepError::file(
                    &planned.path,
                    format!(
                        "changed since plan {} was made (run {} of {}): planned {} bytes with hash {}, now {} bytes with hash {}; restore the file, or plan the grid again",
                        plan,
                        id,
                        plan_path.display(),
                        planned.bytes,
                        planned.fnv64,
                        now.bytes,
                        now.fnv64
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The size and content hash of `path`.
fn fingerprint(path: &Path) -> Result<InputFile, SweepError> {
    let io = |e| SweepError::io("cannot read", path, e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut bytes = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        for &b in &buf[..n] {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    Ok(InputFile {
        path: path.to_path_buf(),
        bytes,
        fnv64: format!("{h:016x}"),
    })
}
