//! Which Debian package version installed a library, read from dpkg's own
//! files for the one package we expect (`info/PKG:ARCH.list` says whether it
//! owns the file, `status` gives its version) instead of two `dpkg-query`
//! processes per library (about 50 ms each). `dpkg-query` remains the
//! fallback for a library whose package we cannot guess (a user's `.so`).

use std::path::Path;
use std::process::Command;

const DPKG_DIR: &str = "/var/lib/dpkg";

/// The version of `package` if it owns `library` (either spelling under
/// merged /usr), from dpkg's files; None when it does not or dpkg is absent.
pub(crate) fn package_version(package: &str, library: &Path) -> Option<String> {
    let arch = dpkg_arch();
    let list = [format!("{package}:{arch}.list"), format!("{package}.list")]
        .into_iter()
        .find_map(|f| std::fs::read_to_string(Path::new(DPKG_DIR).join("info").join(f)).ok())?;
    let spellings = spellings(library)?;
    if !list.lines().any(|line| spellings.iter().any(|s| s == line)) {
        return None;
    }
    let status = std::fs::read_to_string(Path::new(DPKG_DIR).join("status")).ok()?;
    status_version(&status, package, arch)
}

/// The version `dpkg-query` reports for the package owning `library`.
pub(crate) fn query_version(library: &Path) -> Option<String> {
    let owner = spellings(library)?.iter().find_map(|p| run(&["-S", p]))?;
    let package = parse_owner(&owner)?;
    let version = run(&["-W", "-f=${Version}", &package])?;
    let version = version.trim();
    (!version.is_empty()).then(|| version.to_string())
}

/// With merged /usr, dpkg knows a file under either /lib or /usr/lib.
fn spellings(path: &Path) -> Option<[String; 2]> {
    let text = path.to_str()?;
    let other = match text.strip_prefix("/usr") {
        Some(rest) => rest.to_string(),
        None => format!("/usr{text}"),
    };
    Some([text.to_string(), other])
}

fn run(args: &[&str]) -> Option<String> {
    let out = Command::new("dpkg-query").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// dpkg's name for this machine's architecture.
fn dpkg_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "i386",
        "arm" => "armhf",
        "powerpc64" => "ppc64el",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// The `Version:` of the installed `package` for `arch` (or `all`) in the
/// text of dpkg's `status` file.
pub(crate) fn status_version(status: &str, package: &str, arch: &str) -> Option<String> {
    status.split("\n\n").find_map(|stanza| {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(str::trim)
        };
        let installed = field("Status").is_some_and(|s| s.ends_with(" installed"));
        let arch_ok = field("Architecture").is_none_or(|a| a == arch || a == "all");
        (field("Package") == Some(package) && installed && arch_ok)
            .then(|| field("Version").map(str::to_string))
            .flatten()
    })
}

/// `libjemalloc2:amd64: /usr/lib/...` -> `libjemalloc2:amd64`.
pub(crate) fn parse_owner(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let (packages, _) = line.split_once(": ")?;
    let first = packages.split(',').next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}
