//! Tests of discovery on this machine: the loader cache against `ldconfig
//! -p`, versions from dpkg's files against `dpkg-query`, file-name versions.

use super::elf::check_library;
use super::registry::{so_suffix_version, Registry};
use super::{dpkg, ldcache};
use std::path::Path;
use std::process::Command;

/// Every built-in allocator is installed under `CI=true` (`test_deps`).
fn require_installed(reg: &Registry, name: &str) -> bool {
    let package = super::known::builtin(name).map_or("?", |b| b.package());
    super::test_deps::require(reg.get(name).is_some(), name, package)
}

/// The version dpkg-query reports for an installed package.
fn dpkg_query_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", package])
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !version.is_empty()).then_some(version)
}

#[test]
fn reads_the_loader_cache_as_ldconfig_prints_it() {
    let ours = ldcache::read();
    let Ok(out) = std::process::Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
    else {
        eprintln!("no ldconfig here: nothing to compare with");
        return;
    };
    // `ldconfig -p` prints "soname (flags) => path", in the cache's order.
    let theirs: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (left, path) = l.split_once(" => ")?;
            let (soname, _) = left.trim().split_once(" (")?;
            Some((soname.to_string(), path.trim().to_string()))
        })
        .collect();
    let ours: Vec<(String, String)> = ours
        .into_iter()
        .map(|e| (e.soname, e.path.display().to_string()))
        .collect();
    assert!(!ours.is_empty());
    assert_eq!(ours, theirs);
    assert!(ldcache::parse(b"not a cache").is_empty());
    // A cache cut short keeps the entries that fit and no more.
    let bytes = std::fs::read("/etc/ld.so.cache").expect("cache");
    assert!(ldcache::parse(&bytes[..bytes.len() / 2]).len() < theirs.len());
}

#[test]
fn dpkg_files_give_the_version_dpkg_query_gives() {
    let status = "Package: libfoo1\nStatus: install ok installed\nArchitecture: i386\nVersion: 0.9\n\n\
                  Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.2-3\n\n\
                  Package: libbar\nStatus: deinstall ok config-files\nVersion: 4\n";
    assert_eq!(
        dpkg::status_version(status, "libfoo1", "amd64").as_deref(),
        Some("1.2-3")
    );
    assert_eq!(dpkg::status_version(status, "libbar", "amd64"), None);
    for f in Registry::discover()
        .found()
        .iter()
        .filter(|f| f.name != "glibc")
    {
        let queried = dpkg::query_version(&f.library);
        if queried.is_some() {
            assert_eq!(f.version, queried, "{f:?}");
        }
    }
}

#[test]
fn reads_versions_from_dpkg_and_file_names() {
    assert_eq!(
        dpkg::parse_owner("libjemalloc2:amd64: /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n")
            .as_deref(),
        Some("libjemalloc2:amd64")
    );
    assert_eq!(dpkg::parse_owner("nothing"), None);
    let v = |p: &str| so_suffix_version(Path::new(p));
    assert_eq!(
        v("/lib/libtcmalloc_minimal.so.4.5.10").as_deref(),
        Some("4.5.10")
    );
    assert_eq!(v("/lib/libmimalloc.so.2.0").as_deref(), Some("2.0"));
    assert_eq!(v("/lib/libfoo.so"), None);
}

#[test]
fn a_user_copy_of_a_packaged_allocator_gets_the_package_version() {
    let reg = Registry::discover();
    if !require_installed(&reg, "jemalloc") {
        return;
    }
    let Some(jemalloc) = reg.get("jemalloc") else {
        return;
    };
    // What dpkg itself says, not what discovery found: the same code
    // reading the same file on both sides would agree however wrong it is.
    let packaged = dpkg_query_version(jemalloc.package);
    assert!(packaged.is_some(), "dpkg-query knows {}", jemalloc.package);
    for path in [&jemalloc.library, &jemalloc.mapped] {
        let spec = format!("mine={}", path.display());
        let cfg = reg.resolve(&spec).expect("a real library");
        assert_eq!(cfg.version, packaged, "{spec}");
    }
}

#[test]
fn discovers_installed_allocators_with_versions() {
    let reg = Registry::discover();
    let glibc = reg.get("glibc").expect("glibc is always there");
    assert!(
        glibc
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("2.")),
        "{glibc:?}"
    );
    for f in reg.found() {
        assert!(check_library(&f.library).is_ok(), "{f:?}");
    }
    for b in reg.missing() {
        require_installed(&reg, b.name);
    }
}
