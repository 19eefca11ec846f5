//! Writes an embedded probe build to a cache directory, once per content:
//! the file name carries a hash of the bytes, so two allocscope versions never
//! clash, and it is written to a temporary name and renamed, so a concurrent
//! allocscope never loads a half-written file.

use super::ProbeBuild;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;

/// `$XDG_CACHE_HOME/allocscope`, else `~/.cache/allocscope`, else the temp dir.
pub fn cache_dir() -> PathBuf {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from_env("XDG_CACHE_HOME")
        .or_else(|| from_env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("allocscope")
}

/// FNV-1a, 64 bits: a content tag for a file name, not a security hash.
fn content_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Returns the path of `build`'s shared object, writing it if needed; falls
/// back to the temp directory when the cache directory is not writable.
pub fn install(build: ProbeBuild) -> anyhow::Result<PathBuf> {
    install_named(&format!("probe-{}", build.as_str()), build.bytes())
}

/// Installs embedded bytes as `STEM-<content hash>.so` (the probe builds,
/// the glibc shim).
pub fn install_named(stem: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let name = format!("{stem}-{:016x}.so", content_hash(bytes));
    let primary = cache_dir();
    match install_in(&primary, &name, bytes) {
        Ok(path) => Ok(path),
        Err(first) => install_in(&std::env::temp_dir().join("allocscope"), &name, bytes)
            .with_context(|| format!("{first:#}")),
    }
}

fn install_in(dir: &std::path::Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let temp = dir.join(format!(".{name}.{}", std::process::id()));
    let mut file =
        std::fs::File::create(&temp).with_context(|| format!("writing '{}'", temp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing '{}'", temp.display()))?;
    drop(file);
    std::fs::rename(&temp, &path)
        .with_context(|| format!("renaming '{}' to '{}'", temp.display(), path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_once_under_a_content_named_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let bytes = ProbeBuild::Stats.bytes();
        let name = format!("probe-stats-{:016x}.so", content_hash(bytes));
        let first = install_in(dir.path(), &name, bytes)?;
        assert_eq!(std::fs::read(&first)?, bytes);
        let again = install_in(dir.path(), &name, bytes)?;
        assert_eq!(first, again);
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
        Ok(())
    }
}
