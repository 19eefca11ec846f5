//! Waits for every process of the workload's tree. allocscope is a child
//! subreaper, so orphaned descendants come back to it: `wait4(-1)` returning
//! ECHILD means the whole tree is gone. A thread blocks in wait4 so that exit
//! times are exact rather than rounded to the sampling interval.

use super::event::{Event, Reaped};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// Tree-wide totals from wait4 of every reaped process of a run.
#[derive(Default)]
pub(crate) struct Usage {
    pub user_s: f64,
    pub sys_s: f64,
    pub max_hwm_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// The highest VmHWM read from the workload's own process on a tick.
    main_hwm_bytes: Option<u64>,
}

impl Usage {
    /// The workload's own process's VmHWM as a tick read it.
    pub(crate) fn note_main_hwm(&mut self, bytes: u64) {
        self.main_hwm_bytes = Some(self.main_hwm_bytes.map_or(bytes, |m| m.max(bytes)));
    }

    /// Adds a reaped process. For the workload's own process (`main`),
    /// wait4's maximum resident set also covers its image before exec: a
    /// fork of allocscope itself, whose pages count in the child's RSS
    /// (the kernel keeps the highest across exec). That added about 0.5 MiB
    /// to a 3.4 MiB program, so its own VmHWM, read on every tick, stands in
    /// for it when a tick read one; a spike after the last tick is missed.
    pub fn add(&mut self, reaped: &Reaped, main: bool) {
        self.user_s += reaped.user_s;
        self.sys_s += reaped.sys_s;
        let hwm = match (main, self.main_hwm_bytes) {
            (true, Some(read)) => read,
            _ => reaped.max_rss_bytes,
        };
        self.max_hwm_bytes = self.max_hwm_bytes.max(hwm);
        self.minor_faults += reaped.minor_faults;
        self.major_faults += reaped.major_faults;
    }
}

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

/// Reaps children until none is left, reporting each on the run's event
/// channel (shared with the stdout tap). Call it once the
/// workload has been spawned.
pub(crate) fn spawn_reaper(events: Sender<Event>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || loop {
            let mut status = 0;
            // SAFETY: rusage is plain data, zero is a valid bit pattern.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointers to locals; -1 waits for any child.
            let pid = unsafe { libc::wait4(-1, &mut status, libc::__WALL, &mut usage) };
            let at = Instant::now();
            if pid > 0 {
                let reaped = Reaped {
                    pid,
                    status,
                    user_s: seconds(usage.ru_utime),
                    sys_s: seconds(usage.ru_stime),
                    max_rss_bytes: (usage.ru_maxrss.max(0) as u64) * 1024,
                    minor_faults: usage.ru_minflt.max(0) as u64,
                    major_faults: usage.ru_majflt.max(0) as u64,
                };
                if events.send(Event::Reaped(reaped)).is_err() {
                    return;
                }
            } else if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                let _ = events.send(Event::TreeEnded(at));
                return;
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reaped(pid: i32, max_rss_bytes: u64) -> Reaped {
        Reaped {
            pid,
            status: 0,
            user_s: 0.0,
            sys_s: 0.0,
            max_rss_bytes,
            minor_faults: 0,
            major_faults: 0,
        }
    }

    #[test]
    fn the_workloads_own_high_water_mark_comes_from_its_ticks_not_from_wait4() {
        // wait4 says 4.0 MiB (allocscope's forked image before exec); the
        // program's own VmHWM was 3.4 MiB; a child reaped with 1 MiB.
        let mut usage = Usage::default();
        usage.note_main_hwm(3_000_000);
        usage.note_main_hwm(3_400_000);
        usage.add(&reaped(11, 1_000_000), false);
        usage.add(&reaped(10, 4_000_000), true);
        assert_eq!(usage.max_hwm_bytes, 3_400_000);
        // No tick read it (a run shorter than one tick): wait4's figure.
        let mut short = Usage::default();
        short.add(&reaped(10, 4_000_000), true);
        assert_eq!(short.max_hwm_bytes, 4_000_000);
    }
}
