//! `demo`'s arguments checked, and each scenario's `compare` settings built
//! the way `compare` builds its own: from `compare` arguments, through
//! `CompareSettings::from_args`, so the demo has no defaults or checks of
//! its own.

use super::compare::{compare_args, CompareSettings};
use crate::cli::DemoArgs;
use allocscope_core::usage_error::UsageError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A scenario as the demo runs it.
pub struct DemoScenario {
    pub name: &'static str,
    pub models: &'static str,
    /// Knobs for `--quick` (the README's command: all of the demo within 3
    /// minutes on a 2-core machine) and for the full run.
    quick: &'static [&'static str],
    full: &'static [&'static str],
    /// A server: run with `compare --server` and the built-in generator,
    /// `(quick, full)` requests per run, on a free port of 127.0.0.1.
    requests: Option<(u32, u32)>,
}

const SCENARIOS: &[DemoScenario] = &[
    DemoScenario {
        name: "churn",
        models: "the RocksDB-based service (seed 004): 25 threads, objects freed by another \
                 thread than the one that allocated them, a working set replaced in random \
                 order, a hot set of threads that rotates. Under glibc's default this grows \
                 many arenas and holds RSS well above the live data.",
        // By operations, not seconds: a time-bounded run would compare
        // different amounts of work under fast and slow allocators.
        quick: &["--ops", "3000000", "--seconds", "0"],
        full: &["--seconds", "0"],
        requests: None,
    },
    DemoScenario {
        name: "events",
        models: "the physics reconstruction job (seed 001): events of widely varying memory \
                 need, a few objects surviving each; one marker per event; 4 worker processes \
                 so the tree's total PSS is compared.",
        quick: &["--procs", "4", "--events", "40"],
        full: &["--procs", "4"],
        requests: None,
    },
    DemoScenario {
        name: "kv",
        models: "the key-value server (seed 003): items with 16-256 B values inserted into a \
                 hash table; a marker at 0, 100, 1k, 10k, 100k and 1M items gives the \
                 items -> memory table.",
        quick: &["--items", "100000"],
        full: &[],
        requests: None,
    },
    DemoScenario {
        name: "server",
        models: "the threaded Ruby web app (seed 002): 16 worker threads serving HTTP/1.1 \
                 pages built from many small strings, cached and freed across threads; \
                 driven by allocscope's own load generator, judged like the Ruby report: \
                 RSS at the end of the load against median and p95 response time.",
        quick: &["--threads", "16", "--cache-entries", "4000"],
        full: &["--threads", "16", "--cache-entries", "4000"],
        requests: Some((20_000, 60_000)),
    },
];

/// The most rounds `--runs auto` takes with `--quick` and without.
const AUTO_MAX_RUNS: (u32, u32) = (8, 12);

/// `demo`, checked.
pub struct DemoSettings {
    pub scenarios: Vec<&'static DemoScenario>,
    pub quick: bool,
    /// `--runs` (and `--full`) as `compare` takes them.
    runs: Vec<String>,
    pub db: PathBuf,
    /// Where each scenario's JSON, CSV and HTML go.
    pub out: PathBuf,
    /// `--cpus N`, checked, as `compare` takes it.
    cpus: Option<String>,
}

impl DemoSettings {
    pub fn from_args(args: &DemoArgs) -> Result<DemoSettings, UsageError> {
        let scenarios: Vec<&DemoScenario> = match (&args.scenario, args.all) {
            (_, true) => SCENARIOS.iter().collect(),
            (None, false) => SCENARIOS.iter().take(1).collect(),
            (Some(name), false) => SCENARIOS.iter().filter(|s| s.name == name.word()).collect(),
        };
        let max_runs = if args.quick {
            AUTO_MAX_RUNS.0
        } else {
            AUTO_MAX_RUNS.1
        };
        let mut runs = vec![
            "--runs".to_string(),
            args.runs.to_string(),
            "--max-runs".to_string(),
            max_runs.to_string(),
        ];
        if args.full {
            runs.push("--full".to_string());
        }
        Ok(DemoSettings {
            scenarios,
            quick: args.quick,
            runs,
            db: args.db.clone(),
            out: args.out.clone(),
            cpus: args.cpus.map(|n| n.to_string()),
        })
    }

    /// Where `scenario`'s export `ext` (json, csv, html) goes.
    pub fn file(&self, scenario: &DemoScenario, ext: &str) -> PathBuf {
        self.out.join(format!("{}.{ext}", scenario.name))
    }

    /// `compare` with the default configurations on `scenario`, run by
    /// `allocscope` (this program) as `allocscope workload NAME`; a server
    /// gets a port nothing listens on now.
    pub fn compare(
        &self,
        scenario: &DemoScenario,
        allocscope: &Path,
        registry: &allocscope_core::alloc::Registry,
    ) -> anyhow::Result<CompareSettings> {
        let mut words: Vec<OsString> = Vec::new();
        let name = format!(
            "demo: {}{}",
            scenario.name,
            if self.quick { " (quick)" } else { "" }
        );
        words.extend(self.runs.iter().map(OsString::from));
        if let Some(cpus) = &self.cpus {
            words.extend(["--cpus".into(), cpus.into()]);
        }
        for (flag, value) in [
            ("--interval", "50ms".into()),
            ("--timeout", "600s".into()),
            ("--name", name.as_str().into()),
            ("--db", self.db.as_os_str().to_owned()),
            (
                "--export-json",
                self.file(scenario, "json").into_os_string(),
            ),
            ("--html", self.file(scenario, "html").into_os_string()),
            ("--export-csv", self.file(scenario, "csv").into_os_string()),
        ] {
            words.extend([flag.into(), value]);
        }
        let knobs = if self.quick {
            scenario.quick
        } else {
            scenario.full
        };
        let mut workload: Vec<OsString> = vec![
            allocscope.as_os_str().to_owned(),
            "workload".into(),
            scenario.name.into(),
        ];
        workload.extend(knobs.iter().map(OsString::from));
        if let Some((quick, full)) = scenario.requests {
            let port = allocscope_soak::launch::free_port()?.to_string();
            let requests = if self.quick { quick } else { full };
            for (flag, value) in [
                (
                    "--http",
                    format!("http://127.0.0.1:{port}/item/{{rand:4000}}"),
                ),
                ("--requests", requests.to_string()),
                ("--concurrency", "16".to_string()),
                ("--settle", "2s".to_string()),
            ] {
                words.extend([flag.into(), value.into()]);
            }
            words.push("--server".into());
            workload.extend(["--port".into(), port.into()]);
        }
        words.push("--".into());
        words.extend(workload);
        // Words of our own making: clap refusing them is a bug, not a usage error.
        let args = compare_args(words).map_err(|e| anyhow::anyhow!("demo arguments: {e}"))?;
        Ok(CompareSettings::from_args(&args, registry)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn demo_args(words: &[&str]) -> DemoArgs {
        let line = ["allocscope", "demo"].iter().chain(words);
        match crate::cli::Cli::try_parse_from(line).map(|c| c.command) {
            Ok(crate::cli::Command::Demo(args)) => args,
            other => panic!("not demo arguments: {other:?}"),
        }
    }

    #[test]
    fn every_scenario_word_has_its_entry() {
        use clap::ValueEnum;
        for name in crate::cli::DemoScenarioName::value_variants() {
            assert!(SCENARIOS.iter().any(|s| s.name == name.word()), "{name:?}");
        }
    }

    #[test]
    fn cpus_reach_each_scenarios_compare_and_bad_ones_stop_the_demo() -> anyhow::Result<()> {
        let settings = DemoSettings::from_args(&demo_args(&["--quick", "--cpus", "4"]))?;
        let registry = allocscope_core::alloc::Registry::discover();
        let compare = settings.compare(settings.scenarios[0], Path::new("/bin/true"), &registry)?;
        assert_eq!(compare.measuring.cpus, Some(4));
        let refused = crate::cli::Cli::try_parse_from(["allocscope", "demo", "--cpus", "0"]);
        let reason = refused.err().and_then(|e| {
            std::error::Error::source(&e)
                .map(|s| matches!(s.downcast_ref(), Some(UsageError::Cpus(_))))
        });
        assert_eq!(reason, Some(true));
        Ok(())
    }
}
