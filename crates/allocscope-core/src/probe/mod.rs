//! The heap probe (C, `probe/probe.c`): which build a run preloads, where it
//! is written on disk, and the launch environment that loads it before the
//! allocator under test. The shared-memory reader lives in
//! `sample::probe_shm`; the protocol is in `probe/PROTOCOL.md`.
//!
//! Two builds are embedded: stats mode (a probe thread polls the allocator's
//! own counters; nothing on the hot path) and count mode (the malloc family
//! is interposed and counted). Which one a configuration gets is decided
//! from the library's exported symbols, never from the allocator's name.

mod install;

/// Returns the path of `build`'s shared object, writing it if needed; falls
/// back to the temp directory when the cache directory is not writable.
pub fn install(build: ProbeBuild) -> anyhow::Result<PathBuf> {
    install::install_named(&format!("probe-{}", build.as_str()), build.bytes())
}

/// Where the glibc shim (`probe/glibc_shim.c`) is installed: preloaded into a
/// program that links another allocator, it sends the malloc family to
/// glibc's own, so a glibc configuration measures glibc.
pub fn install_glibc_shim() -> anyhow::Result<PathBuf> {
    install::install_named("glibc-shim", GLIBC_SHIM_SO)
}

/// Whether `path` is one of the heap probe's builds as `install` names
/// them: an interposer that passes the malloc family on, never what serves.
pub(crate) fn is_probe_library(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("probe-stats-") || n.starts_with("probe-count-"))
}

use crate::model::Config;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Variables read by the probe (see PROTOCOL.md).
pub const ENV_SHM: &str = "ALLOCSCOPE_PROBE_SHM";
pub const ENV_INTERVAL_MS: &str = "ALLOCSCOPE_PROBE_INTERVAL_MS";
/// `1`: the reclaim test from the exit handler (a batch run's default).
pub(crate) const ENV_RECLAIM_AT_EXIT: &str = "ALLOCSCOPE_PROBE_RECLAIM_AT_EXIT";
/// Set by a configuration's `trim=DUR` key (the allocator table owns it).
pub(crate) const ENV_TRIM_MS: &str = crate::alloc::keys::PROBE_TRIM_MS_ENV;

static STATS_SO: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/probe-stats.so"));
static COUNT_SO: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/probe-count.so"));
static GLIBC_SHIM_SO: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/glibc-shim.so"));

/// Which build of the probe a run preloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeBuild {
    Stats,
    Count,
}

impl ProbeBuild {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeBuild::Stats => "stats",
            ProbeBuild::Count => "count",
        }
    }

    pub fn bytes(self) -> &'static [u8] {
        match self {
            ProbeBuild::Stats => STATS_SO,
            ProbeBuild::Count => COUNT_SO,
        }
    }
}

/// What `--heap[=MODE]` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapRequest {
    /// Stats where the allocator has counters, else count.
    Auto,
    Stats,
    Count,
}

/// The heap probe's setting: the mode, and whether a run whose workload
/// cannot load the probe is `not_loaded` (required) or measured from /proc
/// alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapOptions {
    pub request: HeapRequest,
    pub required: bool,
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error(
    "--heap={0} is not a mode; use --heap, --heap=stats, --heap=count, --heap=optional or --heap=off"
)]
pub struct HeapModeError(pub String);

impl HeapOptions {
    /// Without `--heap`: on, in the auto mode, and never the reason a run
    /// fails (the user did not ask for the probe).
    pub const DEFAULT: HeapOptions = HeapOptions {
        request: HeapRequest::Auto,
        required: false,
    };

    /// `--heap` alone gives "auto", required; `off` gives None.
    pub fn parse(text: &str) -> Result<Option<HeapOptions>, HeapModeError> {
        let (request, required) = match text.trim() {
            "" | "auto" => (HeapRequest::Auto, true),
            "stats" => (HeapRequest::Stats, true),
            "count" => (HeapRequest::Count, true),
            "optional" => (HeapRequest::Auto, false),
            "off" => return Ok(None),
            other => return Err(HeapModeError(other.to_string())),
        };
        Ok(Some(HeapOptions { request, required }))
    }
}

/// How one run loads the probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeLaunch {
    pub build: ProbeBuild,
    /// The installed shared object.
    pub library: PathBuf,
    /// Publish to shared memory (the heap is measured); false when the probe
    /// is loaded only for a periodic `malloc_trim`.
    pub measure: bool,
    /// A workload that cannot load it is `not_loaded` rather than measured
    /// from /proc alone.
    pub required: bool,
}

/// Decides whether and how a configuration's runs load the probe: unless
/// `--heap=off`, and for a configuration that asks the probe to trim. A
/// probe nobody required that cannot be written to disk is left out.
pub fn plan(config: &Config, heap: Option<HeapOptions>) -> anyhow::Result<Option<ProbeLaunch>> {
    let trims = config.env.iter().any(|(name, _)| name == ENV_TRIM_MS);
    let build = match heap.map(|h| h.request) {
        None if !trims => return Ok(None),
        None | Some(HeapRequest::Stats) => ProbeBuild::Stats,
        Some(HeapRequest::Count) => ProbeBuild::Count,
        Some(HeapRequest::Auto) => {
            if has_counters(config.library.as_deref()) {
                ProbeBuild::Stats
            } else {
                ProbeBuild::Count
            }
        }
    };
    // Trimming is what the configuration is: without it the run is not
    // that configuration.
    let required = trims || heap.is_some_and(|h| h.required);
    let library = match install(build) {
        Ok(library) => library,
        Err(_) if !required => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(ProbeLaunch {
        build,
        library,
        measure: heap.is_some(),
        required,
    }))
}

/// True when the library exports one of the allocator counters the stats
/// build reads (each allocator's are listed in `alloc::known`). No library (glibc's own malloc) counts as having them.
fn has_counters(library: Option<&Path>) -> bool {
    let Some(path) = library else {
        return true;
    };
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok(elf) = goblin::elf::Elf::parse(&bytes) else {
        return false;
    };
    elf.dynsyms.iter().any(|sym| {
        sym.st_shndx != 0
            && elf
                .dynstrtab
                .get_at(sym.st_name)
                .is_some_and(|name| crate::alloc::known::counter_symbols().any(|c| c == name))
    })
}

/// `env` with `library` first in LD_PRELOAD.
pub(crate) fn preload_first(env: &[(String, String)], library: &Path) -> Vec<(String, String)> {
    let ours = library.display().to_string();
    let mut out: Vec<(String, String)> = env.to_vec();
    match out.iter_mut().find(|(name, _)| name == "LD_PRELOAD") {
        Some((_, value)) => *value = format!("{ours} {value}"),
        None => out.insert(0, ("LD_PRELOAD".to_string(), ours)),
    }
    out
}

/// The configuration's environment with the probe loaded first: the probe
/// goes before the allocator in LD_PRELOAD, so that its `dlsym(RTLD_NEXT)`
/// finds the allocator under test.
pub(crate) fn launch_env(
    env: &[(String, String)],
    probe: &ProbeLaunch,
    shm_dir: Option<&Path>,
    interval_ms: u64,
) -> Vec<(String, String)> {
    let mut out = preload_first(env, &probe.library);
    if let (true, Some(dir)) = (probe.measure, shm_dir) {
        out.push((ENV_SHM.to_string(), dir.display().to_string()));
        // Poll about twice per sampling tick (the probe's CPU budget may
        // space polls further apart).
        out.push((
            ENV_INTERVAL_MS.to_string(),
            (interval_ms / 2).max(5).to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_modes_parse_and_unknown_ones_say_which_exist() {
        let auto = HeapOptions::parse("").ok().flatten();
        assert_eq!(
            auto.map(|h| (h.request, h.required)),
            Some((HeapRequest::Auto, true))
        );
        let optional = HeapOptions::parse("optional").ok().flatten();
        assert_eq!(optional, Some(HeapOptions::DEFAULT));
        assert_eq!(
            HeapOptions::parse("count")
                .ok()
                .flatten()
                .map(|h| h.request),
            Some(HeapRequest::Count)
        );
        assert_eq!(HeapOptions::parse("off"), Ok(None));
        let err = HeapOptions::parse("fast")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("--heap=stats"), "{err}");
    }

    #[test]
    fn probe_goes_before_the_allocator_in_ld_preload() {
        let probe = ProbeLaunch {
            build: ProbeBuild::Stats,
            library: "/c/probe.so".into(),
            measure: true,
            required: true,
        };
        let env = vec![(
            "LD_PRELOAD".to_string(),
            "/lib/libjemalloc.so.2".to_string(),
        )];
        let out = launch_env(&env, &probe, Some(Path::new("/dev/shm/x")), 100);
        assert_eq!(out[0].1, "/c/probe.so /lib/libjemalloc.so.2");
        assert!(out.contains(&(ENV_SHM.to_string(), "/dev/shm/x".to_string())));
        let glibc = launch_env(
            &[],
            &ProbeLaunch {
                measure: false,
                ..probe
            },
            None,
            100,
        );
        assert_eq!(
            glibc,
            vec![("LD_PRELOAD".to_string(), "/c/probe.so".to_string())]
        );
    }

    #[test]
    fn counters_are_found_in_exported_symbols() {
        assert!(has_counters(None));
        assert!(!has_counters(Some(Path::new("/no/such/lib.so"))));
        // The count build exports malloc but none of the counters.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("count.so");
        std::fs::write(&path, ProbeBuild::Count.bytes()).expect("write");
        assert!(!has_counters(Some(&path)));
    }
}
