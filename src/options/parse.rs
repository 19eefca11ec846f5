//! The checks every command shares: counts, durations, sizes, the program
//! to run and the marker patterns, each turning text into a value or a
//! `UsageError` naming the fix.

use crate::units::parse_duration;
use crate::usage_error::UsageError;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const MIN_INTERVAL: Duration = Duration::from_millis(10);
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);

pub fn parse_count(flag: &'static str, value: &str, min: u32) -> Result<u32, UsageError> {
    match value.trim().parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(UsageError::Count {
            flag,
            value: value.to_string(),
            min,
        }),
    }
}

pub fn parse_interval(text: &str) -> Result<Duration, UsageError> {
    let interval = parse_duration(text)?;
    if !(MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
        return Err(UsageError::IntervalRange(text.to_string()));
    }
    Ok(interval)
}

/// At least 1 MiB: below that nothing starts.
pub fn parse_memory_limit(text: &str) -> Result<u64, UsageError> {
    let bytes = crate::units::parse_size(text)?;
    if bytes < 1 << 20 {
        return Err(UsageError::MemoryLimitRange(text.to_string()));
    }
    Ok(bytes)
}

/// `--cpus N`: from 1 to `MAX_CPUS`.
pub fn parse_cpus(text: &str) -> Result<u32, UsageError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=crate::usage_error::MAX_CPUS).contains(&n) => Ok(n),
        _ => Err(UsageError::Cpus(text.to_string())),
    }
}

pub fn parse_timeout(text: &str) -> Result<Duration, UsageError> {
    let timeout = parse_duration(text)?;
    if timeout < MIN_INTERVAL {
        return Err(UsageError::TimeoutRange(text.to_string()));
    }
    Ok(timeout)
}

/// Finds the program the way execvp would: a name with a slash is a path,
/// otherwise each PATH entry is tried. Checks it is a runnable file.
pub fn resolve_command(program: &OsString) -> Result<PathBuf, UsageError> {
    let shown = program.to_string_lossy().to_string();
    let candidate = Path::new(program);
    let found = if shown.contains('/') {
        candidate.exists().then(|| candidate.to_path_buf())
    } else {
        std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join(candidate))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .find(|p| p.is_file() && is_executable(p))
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
    std::iter::once(crate::run::BUILTIN_MARK)
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
fn regex_reason(error: &regex::Error) -> String {
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
    fn interval_must_be_between_10ms_and_1h() {
        assert_eq!(parse_interval("10ms").ok(), Some(Duration::from_millis(10)));
        assert_eq!(parse_interval("1h").ok(), Some(Duration::from_secs(3600)));
        for bad in ["0", "9ms", "2h", "fast"] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpus_take_1_to_1024_and_errors_name_the_fix() {
        assert_eq!(parse_cpus("16").ok(), Some(16));
        assert_eq!(parse_cpus("1024").ok(), Some(1024));
        for bad in ["0", "-1", "abc", "1.5", "1025", ""] {
            let message = parse_cpus(bad).map(|_| ()).unwrap_err().to_string();
            assert!(message.contains(&format!("--cpus '{bad}'")), "{message}");
            assert!(message.contains("e.g. --cpus 16"), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
        }
    }

    #[test]
    fn counts_reject_negative_and_garbage() {
        assert_eq!(parse_count("--runs", "3", 1).ok(), Some(3));
        assert!(parse_count("--runs", "-1", 1).is_err());
        assert!(parse_count("--runs", "0", 1).is_err());
        assert_eq!(parse_count("--warmup", "0", 0).ok(), Some(0));
        let message = parse_count("--runs", "x", 1)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(message.contains("--runs 'x'"), "{message}");
    }

    #[test]
    fn marks_compile_after_the_built_in_one_and_errors_are_one_line() {
        let marks = parse_marks(&[r"MemoryCheck: event (\d+)".to_string()]);
        let marks = marks.unwrap_or_default();
        assert_eq!(marks.len(), 2);
        assert_eq!(marks[0].as_str(), crate::run::BUILTIN_MARK);
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
