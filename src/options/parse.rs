//! The checks every command shares: the program to run and the marker
//! patterns, each turning text into a value or a `UsageError` naming the
//! fix (numbers, durations and sizes are typed by clap: `cli/values.rs`).

use allocscope_core::usage_error::UsageError;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Finds the program the way execvp would: a name with a slash is a path,
/// otherwise each PATH entry is tried. Checks it is a runnable file.
pub fn resolve_command(program: &OsString) -> Result<PathBuf, UsageError> {
    let shown = program.to_string_lossy().to_string();
    let candidate = Path::new(program);
    let found = if shown.contains('/') {
        candidate.exists().then(|| candidate.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            (std::env::split_paths(&path).map(|dir| dir.join(candidate)))
                .find(|p| p.is_file() && is_executable(p))
        })
    };
    let path = found.ok_or_else(|| UsageError::CommandNotFound(shown.clone()))?;
    if path.is_dir() {
        return Err(UsageError::CommandIsDirectory(shown));
    }
    if !is_executable(&path) {
        return Err(UsageError::CommandNotExecutable(shown));
    }
    Ok(path)
}

/// Compiles the marker patterns: the built-in one first (pattern 0), then
/// each `--mark` in order (pattern i is the i-th `--mark`).
pub fn parse_marks(marks: &[String]) -> Result<Vec<regex::Regex>, UsageError> {
    std::iter::once(allocscope_core::run::BUILTIN_MARK)
        .chain(marks.iter().map(String::as_str))
        .map(|pattern| {
            regex::Regex::new(pattern).map_err(|e| UsageError::MarkRegex {
                pattern: pattern.to_string(),
                reason: regex_reason(&e),
            })
        })
        .collect()
}

/// The regex crate's error as one line: its syntax errors span several
/// lines (the pattern, a caret, then `error: WHAT`); keep the WHAT.
pub(super) fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().trim_start_matches("error: ").to_string())
        .unwrap_or(text)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_compile_after_the_built_in_one_and_errors_are_one_line() {
        let marks = parse_marks(&[r"MemoryCheck: event (\d+)".to_string()]);
        let marks = marks.unwrap_or_default();
        assert_eq!(marks.len(), 2);
        assert_eq!(marks[0].as_str(), allocscope_core::run::BUILTIN_MARK);
        let err = parse_marks(&["(unclosed".to_string()])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--mark '(unclosed'"), "{err}");
        assert!(err.contains("unclosed group"), "{err}");
    }

    #[test]
    fn resolves_commands_on_path_and_rejects_directories() {
        assert!(resolve_command(&OsString::from("sh")).is_ok());
        assert!(matches!(
            resolve_command(&OsString::from("no-such-program-xyz")),
            Err(UsageError::CommandNotFound(_))
        ));
        assert!(matches!(
            resolve_command(&OsString::from("/tmp")),
            Err(UsageError::CommandIsDirectory(_))
        ));
        assert!(matches!(
            resolve_command(&OsString::from("/etc/passwd")),
            Err(UsageError::CommandNotExecutable(_))
        ));
    }
}
