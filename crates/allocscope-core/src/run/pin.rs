//! `--cpus N` with N no more than the CPUs allocscope may run on: the
//! workload pinned to the first N of them (`sched_setaffinity` between
//! fork and exec, so every thread and child it makes inherits the mask).
//! Above that, nothing is pinned: the allocators' sizing is emulated by
//! `alloc::cpus`, CPU contention is not.

use super::extension::{ChildStep, RunExtension};
use anyhow::Context;

/// The CPUs a workload is pinned to.
pub struct CpuPin {
    set: libc::cpu_set_t,
}

impl CpuPin {
    /// The first `n` CPUs of allocscope's own affinity mask (the online
    /// CPUs unless `taskset` or a cpuset narrowed it); `None` when it has
    /// fewer than `n`.
    pub fn first(n: u32) -> anyhow::Result<Option<CpuPin>> {
        let ours = usable_cpus()?;
        let Some(chosen) = ours.get(..n as usize) else {
            return Ok(None);
        };
        // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in chosen {
            // SAFETY: `cpu` came from CPU_ISSET over the same set size.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(Some(CpuPin { set }))
    }
}

/// `--cpus`: a run extension whose child step pins the workload.
impl RunExtension for CpuPin {
    /// Pins the child to these CPUs; it runs between fork and exec, so it
    /// makes one system call and allocates nothing.
    fn child_step(&self) -> Option<ChildStep> {
        let set = self.set;
        Some(Box::new(move || {
            // SAFETY: sched_setaffinity on ourselves with a valid set.
            let rc =
                unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }))
    }
}

/// The CPUs allocscope may run on, in order.
pub(crate) fn usable_cpus() -> anyhow::Result<Vec<usize>> {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable set of the size given.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("reading allocscope's CPU affinity");
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is within the set's size.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_a_child_to_the_first_cpu_and_refuses_more_than_there_are() -> anyhow::Result<()> {
        let ours = usable_cpus()?;
        assert!(!ours.is_empty());
        let more = u32::try_from(ours.len() + 1)?;
        assert!(CpuPin::first(more)?.is_none());
        let pin = CpuPin::first(1)?.context("one CPU is always there")?;
        let hook = pin.child_step().context("a pin has a child step")?;
        let mut command = std::process::Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        // SAFETY: the hook makes one system call.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, hook);
        }
        let output = command.output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            text.split_whitespace().last(),
            Some(ours[0].to_string().as_str()),
            "{text}"
        );
        Ok(())
    }
}
