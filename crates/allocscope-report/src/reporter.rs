//! What every output format implements, `Reporter`: an `Analysis` in, bytes
//! out; and `write_output`, which decides where the bytes go (`-` is
//! stdout).

use allocscope_analyze::types::Analysis;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Renders an analysis in one output format.
pub trait Reporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>>;
}

/// Writes rendered bytes to `path`, or to stdout when `path` is `-`. A
/// reader that stopped reading stdout (`allocscope report | head`) ends the
/// output quietly: it has what it asked for, and nothing measured is lost.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return match out.write_all(bytes).and_then(|()| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            written => written.context("writing the report to stdout"),
        };
    }
    std::fs::write(path, bytes)
        .with_context(|| format!("writing the report to '{}'", path.display()))
}

/// `text` on stdout, as `write_output` writes it.
pub fn print(text: &str) -> Result<()> {
    write_output(Path::new("-"), text.as_bytes())
}
