//! Writes an embedded shared object (a probe build, the glibc shim) to a
//! cache directory, once per content:
//! the file name carries a hash of the bytes, so two allocscope versions never
//! clash, and it is written to a temporary name and renamed, so a concurrent
//! allocscope never loads a half-written file.

use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

/// `$XDG_CACHE_HOME/allocscope`, else `~/.cache/allocscope`, else the temp dir.
pub(crate) fn cache_dir() -> PathBuf {
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

/// Where root installs when its own cache is out of other users' reach.
const SHARED_CACHE: &str = "/var/cache/allocscope";

/// The directory to install in. As root, the workload may drop its
/// privileges (`runuser -u postgres`, a server's workers), and its loader
/// must still open the library: root's own cache, under a 0700 `/root`,
/// is out of its reach (the loader then ignores the preload), so root
/// installs in a directory every user can traverse.
fn install_dir() -> PathBuf {
    let primary = cache_dir();
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 || traversable_by_all(&primary) {
        primary
    } else {
        let shared = PathBuf::from(SHARED_CACHE);
        // Whatever root's umask: an error surfaces when installing.
        let _ = std::fs::create_dir_all(&shared).and_then(|()| {
            std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755))
        });
        shared
    }
}

/// Every existing directory on the way to `dir`, `dir` included, lets
/// other users through (mode o+x).
fn traversable_by_all(dir: &std::path::Path) -> bool {
    dir.ancestors()
        .filter_map(|d| std::fs::metadata(d).ok())
        .all(|m| m.permissions().mode() & 0o001 != 0)
}

/// Installs embedded bytes as `STEM-<content hash>.so` (the probe builds,
/// the glibc shim), falling back to the temp directory when the cache
/// directory is not writable.
pub(crate) fn install_named(stem: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let name = format!("{stem}-{:016x}.so", content_hash(bytes));
    let primary = install_dir();
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
    // Readable by all whatever the umask: a workload that dropped its
    // privileges loads it too (it is no secret).
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(&temp)
        .and_then(|f| {
            f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            Ok(f)
        })
        .with_context(|| format!("writing '{}'", temp.display()))?;
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
    use crate::probe::ProbeBuild;

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
        // Readable by every user, so a workload that dropped its
        // privileges can load it.
        assert_eq!(
            std::fs::metadata(&first)?.permissions().mode() & 0o777,
            0o644
        );
        Ok(())
    }

    #[test]
    fn a_private_directory_on_the_way_is_not_traversable_by_all() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o755))?;
        assert!(traversable_by_all(&cache.join("allocscope")));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
        assert!(!traversable_by_all(&cache.join("allocscope")));
        Ok(())
    }

    /// As root, the library is installed where another uid can load it.
    #[test]
    fn as_root_the_install_directory_lets_every_user_through() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            assert!(
                traversable_by_all(&install_dir()),
                "{}",
                install_dir().display()
            );
        }
    }
}
