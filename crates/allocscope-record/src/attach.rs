//! `record --pid`: whether the attached process is still the one that was
//! checked (`options::record` checks it before anything is stored).

use allocscope_core::sample::proc;

/// True while `pid` is still the process that started at `start_ticks`.
pub fn same_process(pid: i32, start_ticks: u64) -> bool {
    proc::read_stat(pid)
        .is_some_and(|s| s.start_ticks == start_ticks && !matches!(s.state, 'Z' | 'X'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_the_same_only_with_its_own_start_time() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        let start = proc::read_stat(parent).expect("our parent").start_ticks;
        assert!(same_process(parent, start));
        assert!(!same_process(parent, start + 1));
    }
}
