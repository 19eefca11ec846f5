//! Describes the machine an experiment runs on (`model::Host`): kernel,
//! glibc, CPUs, transparent huge page mode, cgroup memory limit, hostname.
//! Recorded once per experiment because each of these changes what an
//! allocator's memory figures mean. Anything unreadable becomes empty or
//! `None`, never an error.

use crate::model::Host;
use std::ffi::{c_char, CStr};
use std::fs;
use std::path::{Path, PathBuf};

extern "C" {
    fn gnu_get_libc_version() -> *const c_char;
}

/// Limits at or above this (1 EiB) mean "no limit": cgroup v1 reports
/// unlimited as LONG_MAX rounded down to a page.
const UNLIMITED_THRESHOLD_BYTES: u64 = 1 << 60;

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

pub fn capture() -> Host {
    let (kernel, hostname) = uname();
    Host {
        kernel,
        glibc: glibc_version(),
        cpus: std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1),
        thp: fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .ok()
            .and_then(|text| parse_thp_mode(&text))
            .unwrap_or_default(),
        cgroup_memory_limit_bytes: cgroup_memory_limit_bytes(),
        run_cgroup: None,
        run_memory_limit_bytes: None,
        hostname,
        cpus_emulated: None,
    }
}

/// (release, nodename) from uname(2).
fn uname() -> (String, String) {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return (String::new(), String::new());
    }
    (
        field_to_string(&uts.release),
        field_to_string(&uts.nodename),
    )
}

fn field_to_string(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The running C library's version (`2.36`); empty when unknown.
pub(crate) fn glibc_version() -> String {
    // SAFETY: glibc returns a pointer to a static NUL-terminated string.
    let version = unsafe { gnu_get_libc_version() };
    if version.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated, static lifetime (see above).
    unsafe { CStr::from_ptr(version) }
        .to_string_lossy()
        .into_owned()
}

/// The bracketed word of `always [madvise] never`.
pub(crate) fn parse_thp_mode(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    let mode = text[start..start + len].trim();
    (!mode.is_empty()).then(|| mode.to_string())
}

/// The cgroup v2 path: the `0::/path` line of /proc/self/cgroup.
pub(crate) fn parse_cgroup_v2_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|path| path.trim().to_string())
}

/// The cgroup v1 path of the memory controller (`4:memory:/path`).
pub(crate) fn parse_cgroup_v1_memory_path(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then(|| path.trim().to_string())
    })
}

/// A limit file's value: bytes, or `None` for `max` (v2) and for the huge
/// values v1 uses for "unlimited".
pub fn parse_memory_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < UNLIMITED_THRESHOLD_BYTES).then_some(bytes)
}

/// The tightest limit on this process's cgroup and its ancestors, v2 first
/// then v1 (hybrid hosts mount v1's memory controller).
fn cgroup_memory_limit_bytes() -> Option<u64> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = Path::new(CGROUP_ROOT);
    if let Some(path) = parse_cgroup_v2_path(&text) {
        for mount in [root.to_path_buf(), root.join("unified")] {
            if let Some(limit) = tightest_limit(&mount, &path, "memory.max") {
                return limit;
            }
        }
    }
    let path = parse_cgroup_v1_memory_path(&text)?;
    let mount = root.join("memory");
    // In a cgroup namespace our cgroup may be mounted as the root itself.
    tightest_limit(&mount, &path, "memory.limit_in_bytes")
        .or_else(|| tightest_limit(&mount, "/", "memory.limit_in_bytes"))
        .flatten()
}

/// `None` when no limit file exists under `mount` for `cgroup` or its
/// ancestors; `Some(None)` when they exist and none limits.
fn tightest_limit(mount: &Path, cgroup: &str, file: &str) -> Option<Option<u64>> {
    let relative = PathBuf::from(cgroup.trim_start_matches('/'));
    let mut found = false;
    let mut tightest: Option<u64> = None;
    for dir in relative.ancestors() {
        let Ok(text) = fs::read_to_string(mount.join(dir).join(file)) else {
            continue;
        };
        found = true;
        if let Some(limit) = parse_memory_limit(&text) {
            tightest = Some(tightest.map_or(limit, |t| t.min(limit)));
        }
    }
    found.then_some(tightest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thp_mode_is_bracketed_word() {
        let text = include_str!("sample/fixtures/thp_enabled.txt");
        assert_eq!(parse_thp_mode(text).as_deref(), Some("madvise"));
        assert_eq!(
            parse_thp_mode("[always] madvise never\n").as_deref(),
            Some("always")
        );
        assert_eq!(parse_thp_mode("always madvise never"), None);
        assert_eq!(parse_thp_mode("[]"), None);
    }

    #[test]
    fn cgroup_paths_of_hybrid_host() {
        let text = include_str!("sample/fixtures/cgroup_hybrid.txt");
        assert_eq!(parse_cgroup_v2_path(text).as_deref(), Some("/"));
        assert_eq!(
            parse_cgroup_v1_memory_path(text).as_deref(),
            Some("/process_api/c8bd49f4092717b8cf0b96529b313954")
        );
    }

    #[test]
    fn cgroup_v1_memory_among_joined_controllers() {
        let text = "5:cpu,cpuacct:/a\n4:memory,hugetlb:/b/c\n";
        assert_eq!(parse_cgroup_v1_memory_path(text).as_deref(), Some("/b/c"));
        assert_eq!(parse_cgroup_v2_path(text), None);
        assert_eq!(
            parse_cgroup_v2_path("0::/user.slice/x.scope\n").as_deref(),
            Some("/user.slice/x.scope")
        );
    }

    #[test]
    fn memory_limit_max_and_huge_values_are_unlimited() {
        assert_eq!(parse_memory_limit("max\n"), None);
        assert_eq!(parse_memory_limit("9223372036854771712\n"), None);
        assert_eq!(parse_memory_limit("536870912\n"), Some(512 * 1024 * 1024));
        assert_eq!(parse_memory_limit(""), None);
    }

    #[test]
    fn captures_this_host() {
        let host = capture();
        assert!(!host.kernel.is_empty());
        assert!(host.glibc.starts_with("2."), "{}", host.glibc);
        assert!(host.cpus >= 1);
        assert!(!host.hostname.is_empty());
    }
}
