//! The built-in allocators (what they are called, which sonames provide them,
//! which Debian package installs them, which keys they take) and discovery of
//! the ones this machine has, with their versions.
//!
//! Discovery only reads: `ldconfig -p`, the standard library directories,
//! `/proc/self/maps` and `dpkg-query`. Each step that fails is skipped, so an
//! allocator is "missing" rather than an error.

use super::config::{self, Spec, Target};
use super::elf;
use super::error::AllocError;
use super::keys::{self, Key};
use crate::model::Config;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How an allocator's keys become environment variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvStyle {
    /// One `GLIBC_TUNABLES=glibc.malloc.k=v:...`; glibc is not preloaded.
    GlibcTunables,
    /// One `MALLOC_CONF=k:v,...` (jemalloc).
    MallocConf,
    /// One variable per key: prefix + key in upper case.
    Prefixed(&'static str),
}

#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    /// Tried in order; the first one found wins.
    pub sonames: &'static [&'static str],
    pub package: &'static str,
    pub keys: &'static [Key],
    pub env: EnvStyle,
}

pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "glibc",
        sonames: &["libc.so.6"],
        package: "libc6",
        keys: keys::GLIBC_KEYS,
        env: EnvStyle::GlibcTunables,
    },
    Builtin {
        name: "jemalloc",
        sonames: &["libjemalloc.so.2"],
        package: "libjemalloc2",
        keys: keys::JEMALLOC_KEYS,
        env: EnvStyle::MallocConf,
    },
    Builtin {
        name: "tcmalloc",
        // The minimal build first: it has no profiler hooks to distort memory use.
        sonames: &["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"],
        package: "libtcmalloc-minimal4",
        keys: keys::TCMALLOC_KEYS,
        env: EnvStyle::Prefixed("TCMALLOC_"),
    },
    Builtin {
        name: "mimalloc",
        sonames: &["libmimalloc.so.2"],
        package: "libmimalloc2.0",
        keys: keys::MIMALLOC_KEYS,
        env: EnvStyle::Prefixed("MIMALLOC_"),
    },
];

/// The configurations run when the user gives no `-a`.
pub const DEFAULT_SPECS: &[&str] = &[
    "glibc",
    "glibc:arena_max=2",
    "jemalloc",
    "tcmalloc",
    "mimalloc",
];

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Names the known allocator a library belongs to, from its file name
/// (`libjemalloc.so.2` -> `jemalloc`); used to spot allocators a program
/// links itself. glibc is not reported: every program has it.
pub fn allocator_of_library(path: &Path) -> Option<&'static str> {
    let file = path.file_name()?.to_str()?;
    ["jemalloc", "tcmalloc", "mimalloc"]
        .into_iter()
        .find(|name| file.starts_with(&format!("lib{name}")))
}

/// One line of `ldconfig -p`: soname, its flags (e.g. `libc6,x86-64`), path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdconfigEntry {
    pub soname: String,
    pub flags: String,
    pub path: PathBuf,
}

/// Parses `ldconfig -p` output; the header line and odd lines are skipped.
pub fn parse_ldconfig(text: &str) -> Vec<LdconfigEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, path) = line.split_once(" => ")?;
            let (soname, flags) = left.trim().split_once(" (")?;
            Some(LdconfigEntry {
                soname: soname.trim().to_string(),
                flags: flags.strip_suffix(')')?.to_string(),
                path: PathBuf::from(path.trim()),
            })
        })
        .collect()
}

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
        let ldconfig = run_text(
            &["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"],
            &["-p"],
        )
        .map(|t| parse_ldconfig(&t))
        .unwrap_or_default();
        let mut found = Vec::new();
        for b in BUILTINS {
            let library = if b.env == EnvStyle::GlibcTunables {
                own_libc().or_else(|| locate(b, &ldconfig))
            } else {
                locate(b, &ldconfig)
            };
            let Some(library) = library else { continue };
            let mapped = std::fs::canonicalize(&library).unwrap_or_else(|_| library.clone());
            let version = if b.env == EnvStyle::GlibcTunables {
                glibc_version()
            } else {
                version_of(&library, &mapped)
            };
            found.push(Found {
                name: b.name,
                library,
                mapped,
                version,
                package: b.package,
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
                let b = builtin(name)
                    .ok_or_else(|| AllocError::UnknownAllocator { name: name.clone() })?;
                // Check the keys first: a typo is worth reporting even where
                // the allocator is missing.
                config::build(typed, &spec, b.name, Some(b), None, None)?;
                let f = self.get(b.name).ok_or_else(|| AllocError::NotInstalled {
                    allocator: b.name.to_string(),
                    package: b.package.to_string(),
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
        for spec in DEFAULT_SPECS {
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

/// Runs the first program of `programs` that starts; its stdout on success.
fn run_text(programs: &[&str], args: &[&str]) -> Option<String> {
    programs.iter().find_map(|p| {
        let out = Command::new(p).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })
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

/// The first soname, in the builtin's order, that `ldconfig` or the standard
/// directories provide as a library for this host.
fn locate(b: &Builtin, ldconfig: &[LdconfigEntry]) -> Option<PathBuf> {
    b.sonames.iter().find_map(|soname| {
        let listed = ldconfig
            .iter()
            .filter(|e| e.soname == *soname)
            .map(|e| e.path.clone());
        let searched = multiarch_dirs().into_iter().map(|d| d.join(soname));
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

fn glibc_version() -> Option<String> {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let ptr = unsafe { libc::gnu_get_libc_version() };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null, static and NUL-terminated, per glibc's documentation.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr) };
    Some(text.to_string_lossy().into_owned())
}

/// The Debian package version owning the library, else the numeric suffix of
/// the real file name (`libtcmalloc_minimal.so.4.5.10` -> `4.5.10`).
fn version_of(library: &Path, mapped: &Path) -> Option<String> {
    dpkg_version(library)
        .or_else(|| dpkg_version(mapped))
        .or_else(|| so_suffix_version(mapped))
        .or_else(|| so_suffix_version(library))
}

fn dpkg_version(path: &Path) -> Option<String> {
    // With merged /usr, dpkg knows a file under either /lib or /usr/lib.
    let text = path.to_str()?;
    let other = match text.strip_prefix("/usr") {
        Some(rest) => rest.to_string(),
        None => format!("/usr{text}"),
    };
    let owner = [text, other.as_str()]
        .iter()
        .find_map(|p| run_text(&["dpkg-query"], &["-S", p]))?;
    let package = parse_dpkg_owner(&owner)?;
    let version = run_text(&["dpkg-query"], &["-W", "-f=${Version}", &package])?;
    let version = version.trim();
    (!version.is_empty()).then(|| version.to_string())
}

/// `libjemalloc2:amd64: /usr/lib/...` -> `libjemalloc2:amd64`.
pub fn parse_dpkg_owner(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let (packages, _) = line.split_once(": ")?;
    let first = packages.split(',').next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}

pub fn so_suffix_version(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let (_, suffix) = file.split_once(".so.")?;
    let valid = suffix
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    valid.then(|| suffix.to_string())
}
