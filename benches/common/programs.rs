//! The test programs the benches run, compiled from tests/programs: one
//! helper for every bench that needs one (each includes this file).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/programs/NAME.c` compiled into `dir`, as the e2e tests build it.
pub fn compile(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let out = dir.join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    let status = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .map_err(|e| format!("running cc: {e}"))?;
    status
        .success()
        .then_some(out)
        .ok_or_else(|| format!("compiling {}", source.display()))
}
