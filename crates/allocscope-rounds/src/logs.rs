//! Where a run's stdout and stderr files go: one directory per experiment
//! beside the store, one file name per configuration and run.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// Where the runs' stdout and stderr are kept: beside the store, one
/// directory per experiment.
pub(crate) fn log_directory(db: &Path, experiment_id: i64) -> anyhow::Result<PathBuf> {
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent
        .canonicalize()
        .with_context(|| format!("resolving '{}'", parent.display()))?;
    let dir = parent
        .join("allocscope-logs")
        .join(experiment_id.to_string());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
    Ok(dir)
}

/// A configuration name as a file-name part: `glibc:arena_max=2` -> `glibc-arena_max-2`.
pub fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    slug.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug("glibc:arena_max=2"), "glibc-arena_max-2");
        assert_eq!(slug("mine=/opt/lib/libfoo.so"), "mine--opt-lib-libfoo.so");
    }
}
