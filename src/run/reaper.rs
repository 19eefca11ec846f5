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
}

impl Usage {
    pub fn add(&mut self, reaped: &Reaped) {
        self.user_s += reaped.user_s;
        self.sys_s += reaped.sys_s;
        self.max_hwm_bytes = self.max_hwm_bytes.max(reaped.max_rss_bytes);
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
pub fn spawn_reaper(events: Sender<Event>) -> std::io::Result<std::thread::JoinHandle<()>> {
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
