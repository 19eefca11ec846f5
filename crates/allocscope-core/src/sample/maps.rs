//! Which files a process has mapped (/proc/PID/maps), and whether a given
//! library is among them: the run stage uses this to check that the
//! preloaded allocator really loaded (static, setuid and Go binaries ignore
//! LD_PRELOAD).

use std::fs;
use std::path::{Path, PathBuf};

const DELETED_SUFFIX: &str = " (deleted)";

/// File-backed paths of a maps text, in first-seen order, without
/// duplicates. Anonymous and special mappings (`[heap]`, `[vdso]`) are left
/// out; a ` (deleted)` suffix is removed so the file's name still compares.
pub fn parse_maps_paths(text: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for line in text.lines() {
        let Some(path) = path_field(line) else {
            continue;
        };
        let path = Path::new(path.strip_suffix(DELETED_SUFFIX).unwrap_or(path));
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_path_buf());
        }
    }
    paths
}

/// The sixth field (`address perms offset dev inode pathname`); the path may
/// itself contain spaces, so it is everything after the fifth field.
fn path_field(line: &str) -> Option<&str> {
    let mut rest = line;
    for _ in 0..5 {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace)?;
        rest = &rest[end..];
    }
    let path = rest.trim_start();
    path.starts_with('/').then_some(path)
}

/// The mapped file paths of `pid`, and whether the read reached its
/// `[stack]`. A process that exits while its maps are read leaves a short
/// read that ends early without an error; its libraries lie below the
/// stack (either mmap layout), so a read that reached the stack has seen
/// every library, and one that did not may have missed some.
pub fn mapped_paths_whole(pid: i32) -> Option<(Vec<PathBuf>, bool)> {
    let text = fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    Some((parse_maps_paths(&text), text.contains("[stack]")))
}

/// True when `library` is one of `paths`: the same file once symlinks are
/// resolved (so /lib/x/libjemalloc.so.2 matches /usr/lib/x/libjemalloc.so.2
/// on a merged /usr, and libfoo.so -> libfoo.so.1 matches), or a file of the
/// same name (sonames are specific enough, and the workload may see another
/// mount namespace where our paths do not resolve).
pub fn is_mapped(paths: &[PathBuf], library: &Path) -> bool {
    let library_real = canonical(library);
    let library_names = [library.file_name(), library_real.file_name()];
    paths.iter().any(|path| {
        if path == library {
            return true;
        }
        let real = canonical(path);
        real == library_real
            || [path.file_name(), real.file_name()]
                .iter()
                .flatten()
                .any(|name| library_names.iter().flatten().any(|lib| lib == name))
    })
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_file_backed_paths_once_each() {
        let paths = parse_maps_paths(include_str!("fixtures/maps_sleep.txt"));
        assert!(paths.iter().all(|p| p.is_absolute()), "{paths:?}");
        let libc = paths
            .iter()
            .filter(|p| p.to_string_lossy().contains("libc.so.6"))
            .count();
        assert_eq!(libc, 1, "{paths:?}");
        assert!(paths.iter().any(|p| p.ends_with("a b)c")), "{paths:?}");
        assert!(!paths.iter().any(|p| p.to_string_lossy().starts_with('[')));
    }

    #[test]
    fn keeps_spaces_and_strips_deleted_suffix() {
        let paths = parse_maps_paths(include_str!("fixtures/maps_space_deleted.txt"));
        assert!(
            paths.contains(&PathBuf::from("/tmp/map me.bin")),
            "{paths:?}"
        );
        assert!(paths.contains(&PathBuf::from("/tmp/gone.bin")), "{paths:?}");
    }

    #[test]
    fn skips_anonymous_and_malformed_lines() {
        let text = "7ffe-7fff rw-p 00000000 00:00 0 [stack]\n\
                    5555-5556 r--p 00000000 00:00 0\n\
                    garbage\n";
        assert!(parse_maps_paths(text).is_empty());
    }

    #[test]
    fn merged_usr_paths_match() {
        let mapped = [PathBuf::from("/usr/lib/x86_64-linux-gnu/libc.so.6")];
        assert!(is_mapped(
            &mapped,
            Path::new("/lib/x86_64-linux-gnu/libc.so.6")
        ));
        assert!(!is_mapped(
            &mapped,
            Path::new("/usr/lib/x86_64-linux-gnu/libm.so.6")
        ));
    }

    #[test]
    fn symlinked_library_matches_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("libfake.so.1.2");
        let link = dir.path().join("libfake.so");
        fs::write(&target, b"x").expect("write");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(is_mapped(std::slice::from_ref(&target), &link));
        assert!(!is_mapped(&[dir.path().join("libother.so")], &link));
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
    fn own_process_maps_its_libc() {
        let (paths, whole) = mapped_paths_whole(std::process::id() as i32).expect("own maps");
        assert!(is_mapped(
            &paths,
            Path::new("/lib/x86_64-linux-gnu/libc.so.6")
        ));
        assert!(whole, "a live process's read reaches its stack");
        assert_eq!(mapped_paths_whole(i32::MAX), None);
    }
}
