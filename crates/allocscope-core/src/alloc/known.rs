//! The one table of built-in allocators. Everything the program knows about
//! an allocator - its `-a` name, the sonames and Debian packages that provide
//! it, the file-name prefix that spots it in a program or a memory map, its
//! keys and how they become environment variables, the counter symbols the
//! heap probe reads, the configurations run by default - is one entry here.
//! Adding an allocator is one entry plus its keys in `keys.rs`.

use super::keys::{self, Key};
use crate::model::Config;
use std::path::{Path, PathBuf};

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

/// Where a machine gets an allocator from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The C library every program already maps: found in our own memory
    /// map, versioned by `gnu_get_libc_version`, nothing to deploy.
    OwnLibc,
    /// A library preloaded from a Debian package.
    Package,
}

/// A library that provides an allocator, and the package that installs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Soname {
    pub soname: &'static str,
    pub package: &'static str,
}

#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub source: Source,
    /// Tried in order; the first one found wins. The first one's package is
    /// the one to install.
    pub sonames: &'static [Soname],
    /// File-name prefix that spots the allocator among a program's needed
    /// libraries or a process's maps; None for libc, which every program has.
    pub file_prefix: Option<&'static str>,
    pub keys: &'static [Key],
    pub env: EnvStyle,
    /// Exported symbols through which the heap probe's stats build reads the
    /// allocator's own counters (see `probe/probe.c`); empty: count build.
    pub counters: &'static [&'static str],
    /// The configurations of this allocator run when the user gives no `-a`.
    pub defaults: &'static [&'static str],
    /// What it sizes by the CPU count, for `--cpus`; `None`: nothing
    /// (docs/usage.md, "Measuring as on another host").
    pub cpu_sizing: Option<CpuRule>,
}

/// A default an allocator derives from the CPU count, and the key that
/// sets it instead.
#[derive(Debug)]
pub struct CpuRule {
    pub key: &'static str,
    /// The allocator's default on a host of that many CPUs.
    pub default_on: fn(u32) -> u64,
    /// An environment variable of its own that sets the same thing.
    pub alias: Option<&'static str>,
}

/// glibc 2.36 on 64 bits: `NARENAS_FROM_NCORES`, 8 arenas per CPU.
fn glibc_arena_max(cpus: u32) -> u64 {
    8 * u64::from(cpus)
}

/// jemalloc 5.3 (`malloc_narenas_default`): 4 arenas per CPU, but one
/// alone on a single CPU.
fn jemalloc_narenas(cpus: u32) -> u64 {
    if cpus > 1 {
        4 * u64::from(cpus)
    } else {
        1
    }
}

impl Builtin {
    /// The Debian package to install when the allocator is missing.
    pub fn package(&self) -> &'static str {
        self.sonames.first().map_or("", |s| s.package)
    }
}

pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "glibc",
        source: Source::OwnLibc,
        sonames: &[Soname {
            soname: "libc.so.6",
            package: "libc6",
        }],
        file_prefix: None,
        keys: keys::GLIBC_KEYS,
        env: EnvStyle::GlibcTunables,
        counters: &["mallinfo2"],
        defaults: &["glibc", "glibc:arena_max=2"],
        cpu_sizing: Some(CpuRule {
            key: "arena_max",
            default_on: glibc_arena_max,
            alias: Some("MALLOC_ARENA_MAX"),
        }),
    },
    Builtin {
        name: "jemalloc",
        source: Source::Package,
        sonames: &[Soname {
            soname: "libjemalloc.so.2",
            package: "libjemalloc2",
        }],
        file_prefix: Some("libjemalloc"),
        keys: keys::JEMALLOC_KEYS,
        env: EnvStyle::MallocConf,
        counters: &["mallctl"],
        defaults: &["jemalloc"],
        cpu_sizing: Some(CpuRule {
            key: "narenas",
            default_on: jemalloc_narenas,
            alias: None,
        }),
    },
    Builtin {
        name: "tcmalloc",
        source: Source::Package,
        // The minimal build first: it has no profiler hooks to distort memory use.
        sonames: &[
            Soname {
                soname: "libtcmalloc_minimal.so.4",
                package: "libtcmalloc-minimal4",
            },
            Soname {
                soname: "libtcmalloc.so.4",
                package: "libgoogle-perftools4",
            },
        ],
        file_prefix: Some("libtcmalloc"),
        keys: keys::TCMALLOC_KEYS,
        env: EnvStyle::Prefixed("TCMALLOC_"),
        counters: &["MallocExtension_GetNumericProperty"],
        defaults: &["tcmalloc"],
        // gperftools 2.10 reads the online CPUs only to decide whether its
        // spin locks spin; its caches are sized without them.
        cpu_sizing: None,
    },
    Builtin {
        name: "mimalloc",
        source: Source::Package,
        sonames: &[Soname {
            soname: "libmimalloc.so.2",
            package: "libmimalloc2.0",
        }],
        file_prefix: Some("libmimalloc"),
        keys: keys::MIMALLOC_KEYS,
        env: EnvStyle::Prefixed("MIMALLOC_"),
        counters: &[],
        defaults: &["mimalloc"],
        // mimalloc 2.0.9 reads the NUMA nodes, never the CPU count.
        cpu_sizing: None,
    },
];

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The configurations run when the user gives no `-a`, in table order.
pub(crate) fn default_specs() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().flat_map(|b| b.defaults.iter().copied())
}

/// `glibc, jemalloc, tcmalloc, mimalloc`: for messages listing the built-ins.
pub fn names() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `libjemalloc2, libtcmalloc-minimal4 or libmimalloc2.0`: the packages that
/// provide the preloaded allocators, for messages saying what to install.
pub fn packages_to_install() -> String {
    let packages: Vec<&str> = BUILTINS
        .iter()
        .filter(|b| b.source == Source::Package)
        .map(Builtin::package)
        .collect();
    match packages.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// Every symbol through which the heap probe can read an allocator's own
/// counters; a library exporting one of them gets the probe's stats build.
pub(crate) fn counter_symbols() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().flat_map(|b| b.counters.iter().copied())
}

/// Names the known allocator a library belongs to, from its file name
/// (`libjemalloc.so.2` -> `jemalloc`); used to spot allocators a program
/// links itself. glibc is not reported: every program has it.
pub fn allocator_of_library(path: &Path) -> Option<&'static str> {
    let file = path.file_name()?.to_str()?;
    BUILTINS
        .iter()
        .find(|b| b.file_prefix.is_some_and(|p| file.starts_with(p)))
        .map(|b| b.name)
}

/// What deploying a configuration takes besides its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Install {
    /// Nothing: the allocator comes with the system (glibc).
    Nothing,
    /// The Debian package that provides the built-in allocator.
    Package(&'static str),
    /// The user's own library, to be copied to the same path.
    Copy(PathBuf),
}

/// How `config` (made by this module's registry) is deployed.
pub fn install_of(config: &Config) -> Install {
    match builtin(&config.allocator) {
        Some(b) if b.source == Source::OwnLibc => Install::Nothing,
        Some(b) => Install::Package(b.package()),
        None => config
            .library
            .clone()
            .map_or(Install::Nothing, Install::Copy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allocator: &str, library: Option<&str>) -> Config {
        Config {
            name: allocator.to_string(),
            allocator: allocator.to_string(),
            library: library.map(PathBuf::from),
            version: None,
            env: Vec::new(),
            command: None,
        }
    }

    #[test]
    fn messages_and_defaults_come_from_the_table() {
        assert_eq!(names(), "glibc, jemalloc, tcmalloc, mimalloc");
        assert_eq!(
            packages_to_install(),
            "libjemalloc2, libtcmalloc-minimal4 or libmimalloc2.0"
        );
        let defaults: Vec<_> = default_specs().collect();
        assert_eq!(
            defaults,
            [
                "glibc",
                "glibc:arena_max=2",
                "jemalloc",
                "tcmalloc",
                "mimalloc"
            ]
        );
        let counters: Vec<_> = counter_symbols().collect();
        assert!(counters.contains(&"mallctl") && counters.contains(&"mallinfo2"));
    }

    #[test]
    fn deploying_installs_the_package_copies_a_user_library_or_nothing() {
        let lib = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
        assert_eq!(
            install_of(&config("glibc", Some("/lib/libc.so.6"))),
            Install::Nothing
        );
        assert_eq!(
            install_of(&config("tcmalloc", Some(lib))),
            Install::Package("libtcmalloc-minimal4")
        );
        assert_eq!(
            install_of(&config("mine", Some(lib))),
            Install::Copy(PathBuf::from(lib))
        );
        assert_eq!(install_of(&config("mine", None)), Install::Nothing);
    }

    #[test]
    fn every_entry_is_complete_and_prefixes_do_not_overlap() {
        for b in BUILTINS {
            assert!(
                !b.sonames.is_empty() && !b.package().is_empty(),
                "{}",
                b.name
            );
            assert!(
                b.defaults.iter().all(|d| d.starts_with(b.name)),
                "{}",
                b.name
            );
            for s in b.sonames {
                assert_eq!(
                    allocator_of_library(Path::new(s.soname)),
                    b.file_prefix.map(|_| b.name)
                );
            }
        }
    }
}
