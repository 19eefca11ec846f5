//! Discovery of the built-in allocators (`known.rs`) this machine has, with
//! their versions, and resolution of a `-a` value into a `model::Config`.
//!
//! Discovery only reads: `/etc/ld.so.cache`, the standard library
//! directories, `/proc/self/maps` and dpkg's files for the expected package.
//! Each step that fails is skipped, so an allocator is "missing" rather than
//! an error. No process is started for a built-in allocator.

use super::config::{self, Spec, Target};
use super::dpkg;
use super::elf;
use super::error::AllocError;
use super::known::{allocator_of_library, builtin, default_specs, Builtin, Source, BUILTINS};
use super::ldcache::{self, CacheEntry};
use crate::model::Config;
use std::path::{Path, PathBuf};

/// An allocator found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: &'static str,
    /// As found (usually the soname link); this is what gets preloaded.
    pub library: PathBuf,
    /// Symlinks resolved: what `/proc/PID/maps` will show once it is loaded.
    pub mapped: PathBuf,
    pub version: Option<String>,
    pub package: &'static str,
}

#[derive(Debug, Clone, Default)]
pub struct Registry {
    found: Vec<Found>,
}

impl Registry {
    /// Looks for every built-in allocator on this machine.
    pub fn discover() -> Registry {
        let cache = ldcache::read();
        let mut found = Vec::new();
        for b in BUILTINS {
            let located = match b.source {
                Source::OwnLibc => own_libc().or_else(|| locate(b, &cache)),
                Source::Package => locate(b, &cache),
            };
            let Some(library) = located else {
                continue;
            };
            let mapped = std::fs::canonicalize(&library).unwrap_or_else(|_| library.clone());
            let version = match b.source {
                Source::OwnLibc => Some(crate::host::glibc_version()).filter(|v| !v.is_empty()),
                Source::Package => version_of(&library, &mapped),
            };
            found.push(Found {
                name: b.name,
                library,
                mapped,
                version,
                package: b.package(),
            });
        }
        Registry { found }
    }

    /// A registry with exactly these allocators, for tests and scripted runs.
    pub fn from_found(found: Vec<Found>) -> Registry {
        Registry { found }
    }

    pub fn found(&self) -> &[Found] {
        &self.found
    }

    pub fn get(&self, name: &str) -> Option<&Found> {
        self.found.iter().find(|f| f.name == name)
    }

    /// The built-ins this machine lacks.
    pub fn missing(&self) -> Vec<&'static Builtin> {
        BUILTINS
            .iter()
            .filter(|b| self.get(b.name).is_none())
            .collect()
    }

    /// Every built-in in table order, with what was found for it.
    pub fn entries(&self) -> Vec<(&'static Builtin, Option<&Found>)> {
        BUILTINS.iter().map(|b| (b, self.get(b.name))).collect()
    }

    /// Turns one `-a` value into a configuration.
    pub fn resolve(&self, typed: &str) -> Result<Config, AllocError> {
        let spec: Spec = config::parse_spec(typed)?;
        match &spec.target {
            Target::Named(name) => {
                let b = builtin(name).ok_or_else(|| AllocError::UnknownAllocator {
                    name: name.clone(),
                    builtins: super::known::names(),
                })?;
                // Check the keys first: a typo is worth reporting even where
                // the allocator is missing.
                config::build(typed, &spec, b.name, Some(b), None, None)?;
                let f = self.get(b.name).ok_or_else(|| AllocError::NotInstalled {
                    allocator: b.name.to_string(),
                    package: b.package().to_string(),
                })?;
                let mut cfg = config::build(
                    typed,
                    &spec,
                    b.name,
                    Some(b),
                    Some(&f.library),
                    f.version.clone(),
                )?;
                cfg.library = Some(f.mapped.clone());
                Ok(cfg)
            }
            Target::Library { label, path } => {
                if builtin(label).is_some() {
                    return Err(AllocError::LabelIsBuiltin {
                        label: label.clone(),
                        path: path.clone(),
                    });
                }
                let path = expand_home(path);
                let path = path.as_path();
                elf::check_library(path)?;
                // Absolute, so the preload still works from the workload's directory.
                let mapped =
                    std::fs::canonicalize(path).map_err(|e| AllocError::LibraryUnreadable {
                        path: path.to_path_buf(),
                        reason: e.to_string(),
                    })?;
                if mapped.to_string_lossy().contains(char::is_whitespace) {
                    return Err(AllocError::PathNotPreloadable { path: mapped });
                }
                let version = version_of(path, &mapped);
                config::build(typed, &spec, label, None, Some(&mapped), version)
            }
        }
    }

    /// The default configurations this machine can run, and one warning line
    /// (no "warning:" prefix) per allocator skipped because it is missing.
    pub fn default_configs(&self) -> (Vec<Config>, Vec<String>) {
        let mut configs = Vec::new();
        let mut warnings = Vec::new();
        for spec in default_specs() {
            match self.resolve(spec) {
                Ok(cfg) => configs.push(cfg),
                Err(e) => {
                    let line = format!("skipping {spec}: {e}");
                    if !warnings.contains(&line) {
                        warnings.push(line);
                    }
                }
            }
        }
        (configs, warnings)
    }
}

/// `~/lib.so` -> `$HOME/lib.so`: the shell leaves a `~` after `LABEL=` alone.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn multiarch_dirs() -> Vec<PathBuf> {
    let triplet = format!("{}-linux-gnu", std::env::consts::ARCH);
    let mut dirs = Vec::new();
    for prefix in ["/lib", "/usr/lib", "/usr/local/lib"] {
        dirs.push(PathBuf::from(format!("{prefix}/{triplet}")));
        dirs.push(PathBuf::from(prefix));
    }
    dirs.extend(["/lib64", "/usr/lib64"].map(PathBuf::from));
    dirs
}

/// The first soname, in the builtin's order, that the loader's cache or the
/// standard directories provide as a library for this host.
fn locate(b: &Builtin, cache: &[CacheEntry]) -> Option<PathBuf> {
    b.sonames.iter().find_map(|s| {
        let listed = cache
            .iter()
            .filter(|e| e.soname == s.soname)
            .map(|e| e.path.clone());
        let searched = multiarch_dirs().into_iter().map(|d| d.join(s.soname));
        // check_library rejects other-architecture copies (e.g. i386 multiarch).
        listed
            .chain(searched)
            .find(|p| elf::check_library(p).is_ok())
    })
}

/// The libc this process runs with: the one workloads will map too.
fn own_libc() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| p.file_name().is_some_and(|f| f == "libc.so.6"))
}

/// The version of the Debian package owning the library: first the packages
/// the table expects for a file of that name (from dpkg's files, no process),
/// then as `dpkg-query` says, else the numeric suffix of the real file name
/// (`libtcmalloc_minimal.so.4.5.10` -> `4.5.10`).
fn version_of(library: &Path, mapped: &Path) -> Option<String> {
    let expected = || {
        let b = builtin(allocator_of_library(mapped)?)?;
        b.sonames.iter().find_map(|s| {
            dpkg::package_version(s.package, library)
                .or_else(|| dpkg::package_version(s.package, mapped))
        })
    };
    expected()
        .or_else(|| dpkg::query_version(library))
        .or_else(|| dpkg::query_version(mapped))
        .or_else(|| so_suffix_version(mapped))
        .or_else(|| so_suffix_version(library))
}

pub(crate) fn so_suffix_version(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let (_, suffix) = file.split_once(".so.")?;
    let valid = suffix
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    valid.then(|| suffix.to_string())
}
