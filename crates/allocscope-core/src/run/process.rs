//! Starting the workload in its own process group, tied to allocscope's life,
//! and ending its whole tree.

use super::extension::ChildStep;
use crate::alloc::keys::THP_DISABLE_ENV;
use anyhow::Context;
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};

/// Makes orphaned descendants of the workload children of allocscope, so they
/// can be sampled, reaped and ended. Call once, before the first run.
pub fn become_subreaper() -> anyhow::Result<()> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("making allocscope a child subreaper");
    }
    Ok(())
}

/// Starts `program args...` with the caller's environment plus `env`, stdin
/// closed, stdout to a pipe (returned, for the tap to read), stderr to the
/// given file, in a new process group, with a parent-death signal so that a
/// killed allocscope takes the workload with it. The pipe's read end is
/// close-on-exec, so later workloads never inherit it; its write end is
/// inherited by the workload's descendants, so EOF comes when the last of
/// them is gone.
/// Must be called from the thread that lives for the whole experiment: the
/// parent-death signal fires when the forking *thread* exits.
pub fn spawn(
    program: &Path,
    args: &[OsString],
    env: &[(String, String)],
    stderr_path: &Path,
    child_steps: Vec<ChildStep>,
) -> anyhow::Result<(i32, ChildStdout)> {
    let stderr = File::create(stderr_path)
        .with_context(|| format!("creating '{}'", stderr_path.display()))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    for (name, value) in merged_env(env, |name| std::env::var(name).ok()) {
        command.env(name, value);
    }
    let thp_disable = env.iter().any(|(name, _)| name == THP_DISABLE_ENV);
    // SAFETY: only async-signal-safe calls between fork and exec.
    let parent = unsafe { libc::getpid() };
    unsafe {
        command.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // allocscope died before the signal was armed.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            // `thp=never`: inherited by every descendant, kept across exec.
            if thp_disable && libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            child_steps.iter().try_for_each(|step| step())
        });
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting '{}'", program.display()))?;
    let stdout = child
        .stdout
        .take()
        .context("the workload's stdout pipe is missing")?;
    Ok((child.id() as i32, stdout))
}

/// Starts a service run's load command with `sh -c`, with the caller's
/// environment (not the configuration's: the client is not measured),
/// stdin closed, output to files, in a process group of its own and with a
/// parent-death signal. Its exit comes through the reaper like any child's.
pub(crate) fn spawn_load(
    command: &str,
    stdout_path: &Path,
    stderr_path: &Path,
) -> anyhow::Result<i32> {
    let stdout = File::create(stdout_path)
        .with_context(|| format!("creating '{}'", stdout_path.display()))?;
    let stderr = File::create(stderr_path)
        .with_context(|| format!("creating '{}'", stderr_path.display()))?;
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        sh.pre_exec(|| {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = sh
        .spawn()
        .with_context(|| format!("starting the load command '{command}'"))?;
    Ok(child.id() as i32)
}

/// Sends SIGTERM to the workload's process group and to every listed
/// descendant: the polite stop of a service.
pub(crate) fn terminate_tree(group: i32, descendants: &[i32]) {
    // SAFETY: kill with plain integers; errors (already gone) are fine.
    unsafe {
        libc::kill(-group, libc::SIGTERM);
        for &pid in descendants {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

/// Sends SIGKILL to the workload's process group and to every listed
/// descendant (those that left the group with setsid/setpgid included).
pub(crate) fn kill_tree(group: i32, descendants: &[i32]) {
    // SAFETY: kill with plain integers; errors (already gone) are fine.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
        for &pid in descendants {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The configuration's variables merged with the caller's: our allocator
/// goes first in LD_PRELOAD (the first definition of malloc wins), and our
/// tunables go last in GLIBC_TUNABLES (a later setting overrides). The
/// `thp=never` variable is the run's to act on, not the workload's to see.
fn merged_env(
    env: &[(String, String)],
    caller: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    env.iter()
        .filter(|(name, _)| name != THP_DISABLE_ENV)
        .map(|(name, value)| {
            let merged = match (name.as_str(), caller(name).filter(|v| !v.is_empty())) {
                ("LD_PRELOAD", Some(theirs)) => format!("{value} {theirs}"),
                ("GLIBC_TUNABLES", Some(theirs)) => format!("{theirs}:{value}"),
                _ => value.clone(),
            };
            (name.clone(), merged)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::merged_env;

    #[test]
    fn merges_preload_and_tunables_with_the_callers() {
        let ours = vec![
            (
                "LD_PRELOAD".to_string(),
                "/lib/libjemalloc.so.2".to_string(),
            ),
            (
                "GLIBC_TUNABLES".to_string(),
                "glibc.malloc.arena_max=2".to_string(),
            ),
            ("MALLOC_CONF".to_string(), "narenas:1".to_string()),
            (super::THP_DISABLE_ENV.to_string(), "1".to_string()),
        ];
        let caller = |name: &str| match name {
            "LD_PRELOAD" => Some("libtrace.so".to_string()),
            "GLIBC_TUNABLES" => Some("glibc.malloc.check=0".to_string()),
            "MALLOC_CONF" => Some("narenas:4".to_string()),
            _ => None,
        };
        let merged = merged_env(&ours, caller);
        assert_eq!(merged[0].1, "/lib/libjemalloc.so.2 libtrace.so");
        assert_eq!(merged[1].1, "glibc.malloc.check=0:glibc.malloc.arena_max=2");
        assert_eq!(merged[2].1, "narenas:1");
        assert_eq!(merged.len(), 3, "the thp=never variable is not passed on");
    }
}
