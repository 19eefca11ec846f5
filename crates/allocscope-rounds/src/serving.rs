//! Which allocator each configuration's runs really get. A program that
//! links its own allocator (Debian's redis-server links jemalloc) keeps it
//! under a configuration that preloads nothing, so such configurations
//! (glibc and its tunables) preload allocscope's glibc shim, which sends the
//! malloc family to glibc's own; a preloaded allocator takes over as it
//! always did. What then serves `malloc` is found once per configuration
//! from the loader's lookup order (`alloc::served`) and kept with each run.
//! A `--variant` runs its own build with nothing preloaded and never the
//! shim: the allocator that build brings is what it compares.
//!
//! The shim is preloaded too when the command is not a dynamic ELF
//! program (a wrapper script, which may `exec` a daemon that links
//! jemalloc: LD_PRELOAD reaches every process it starts), and when one of
//! the command's arguments is a program that links an allocator (`env`,
//! `taskset`, `setpriv` starting it). In a process that links none it
//! sends the family to the same glibc. What served each process of the
//! tree is found at run time (`run::served_tree`).

use allocscope_core::alloc::served::{served_by, PROGRAM_OWN};
use allocscope_core::model::{Config, ProgramLine};
use std::path::{Path, PathBuf};

/// How one configuration's runs get their allocator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Serving {
    /// The glibc shim, when the configuration preloads nothing and the
    /// program links another allocator.
    pub glibc_shim: Option<PathBuf>,
    /// What serves `malloc` (`alloc::served`).
    pub served_by: Option<String>,
}

/// The allocator the program itself brings (`jemalloc`, ...), when it is
/// neither glibc's nor the program's own (which no preload can replace).
pub(crate) fn linked_allocator(program: &Path) -> Option<String> {
    served_by(program, &[]).filter(|s| s != "glibc" && s != PROGRAM_OWN)
}

/// Whether the glibc shim belongs in the runs of `line` without a preload:
/// a program that links an allocator, a script (what it starts is not
/// known before it runs), or a launcher whose arguments name such a
/// program.
pub(crate) fn wants_shim(line: &ProgramLine) -> bool {
    if linked_allocator(&line.program).is_some() {
        return true;
    }
    if allocscope_core::alloc::inspect_program(&line.program).is_none() {
        return line.program.exists();
    }
    line.args
        .iter()
        .filter_map(|arg| arg.to_str())
        .filter_map(on_path)
        .any(|program| linked_allocator(&program).is_some())
}

/// `word` as the loader's `execvp` would find it: itself when it holds a
/// '/', else the first executable file of that name on PATH.
fn on_path(word: &str) -> Option<PathBuf> {
    if word.is_empty() || word.starts_with('-') {
        return None;
    }
    if word.contains('/') {
        let path = PathBuf::from(word);
        return path.is_file().then_some(path);
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|dir| dir.join(word))
        .find(|p| p.is_file())
}

/// One `Serving` per configuration, in order, each run as `lines` says. A
/// `--variant` (a configuration with a command of its own) never gets the
/// shim: the allocator its build brings is the one it compares.
pub(crate) fn plan(lines: &[ProgramLine], configs: &[Config]) -> anyhow::Result<Vec<Serving>> {
    let mut shim: Option<PathBuf> = None;
    let mut out = Vec::with_capacity(configs.len());
    for (config, line) in configs.iter().zip(lines) {
        let preloaded = preloads(&config.env);
        let wants_shim = config.command.is_none() && preloaded.is_empty() && wants_shim(line);
        let glibc_shim = match (wants_shim, &shim) {
            (false, _) => None,
            (true, Some(path)) => Some(path.clone()),
            (true, None) => {
                let path = allocscope_core::probe::install_glibc_shim()?;
                shim = Some(path.clone());
                Some(path)
            }
        };
        let all: Vec<PathBuf> = glibc_shim.iter().cloned().chain(preloaded).collect();
        out.push(Serving {
            served_by: served_by(&line.program, &all),
            glibc_shim,
        });
    }
    Ok(out)
}

/// The libraries a configuration's LD_PRELOAD names, in order (the loader
/// splits it at spaces and colons).
fn preloads(env: &[(String, String)]) -> Vec<PathBuf> {
    env.iter()
        .filter(|(name, _)| name == "LD_PRELOAD")
        .flat_map(|(_, value)| value.split([' ', ':']))
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str, env: &[(&str, &str)]) -> Config {
        Config {
            name: name.to_string(),
            allocator: name.to_string(),
            library: None,
            version: None,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            command: None,
        }
    }

    fn lines(program: &str, n: usize) -> Vec<ProgramLine> {
        let line = ProgramLine {
            program: PathBuf::from(program),
            args: Vec::new(),
        };
        vec![line; n]
    }

    #[test]
    fn preloads_split_like_the_loader() {
        let env = [("LD_PRELOAD", "/a.so /b.so:/c.so")];
        assert_eq!(preloads(&config("x", &env).env).len(), 3);
    }

    #[test]
    fn only_a_program_that_links_an_allocator_gets_the_shim_and_only_without_a_preload(
    ) -> anyhow::Result<()> {
        let plain = plan(&lines("/bin/sh", 1), &[config("glibc", &[])])?;
        assert_eq!(plain[0].glibc_shim, None);
        assert_eq!(plain[0].served_by.as_deref(), Some("glibc"));
        let redis = Path::new("/usr/bin/redis-server");
        if !allocscope_core::alloc::test_deps::require(
            redis.exists(),
            "redis-server",
            "redis-server",
        ) {
            return Ok(());
        }
        let other = [("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")];
        let mut variant = config("build", &[]);
        variant.command = Some(vec![redis.display().to_string()]);
        let configs = [config("glibc", &[]), config("jemalloc", &other), variant];
        let both = plan(&lines(&redis.display().to_string(), 3), &configs)?;
        assert!(both[0].glibc_shim.is_some());
        assert_eq!(both[0].served_by.as_deref(), Some("glibc"));
        assert_eq!(both[1].glibc_shim, None);
        assert_eq!(both[1].served_by.as_deref(), Some("jemalloc"));
        // A --variant runs the allocator its build links, never the shim.
        assert_eq!(both[2].glibc_shim, None);
        assert_eq!(both[2].served_by.as_deref(), Some("jemalloc"));
        Ok(())
    }

    #[test]
    fn a_script_and_a_launcher_of_a_linking_program_get_the_shim() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let script = dir.path().join("start.sh");
        std::fs::write(&script, "#!/bin/sh\nexec \"$@\"\n")?;
        let served = plan(
            &lines(&script.display().to_string(), 1),
            &[config("glibc", &[])],
        )?;
        assert!(served[0].glibc_shim.is_some(), "a script gets the shim");
        assert_eq!(served[0].served_by.as_deref(), Some("glibc"));
        let redis = Path::new("/usr/bin/redis-server");
        if !allocscope_core::alloc::test_deps::require(
            redis.exists(),
            "redis-server",
            "redis-server",
        ) {
            return Ok(());
        }
        let launcher = ProgramLine {
            program: PathBuf::from("/usr/bin/env"),
            args: vec!["FOO=1".into(), "redis-server".into()],
        };
        assert!(wants_shim(&launcher), "env starting redis-server");
        let plain = ProgramLine {
            program: PathBuf::from("/usr/bin/env"),
            args: vec!["sh".into()],
        };
        assert!(!wants_shim(&plain), "env starting sh");
        Ok(())
    }
}
