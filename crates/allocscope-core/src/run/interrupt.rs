//! Ctrl-C and SIGTERM: remembered in flags that the run loop polls, so the
//! workload can be ended cleanly and finished runs kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Clone)]
pub struct Interrupt {
    sigint: Arc<AtomicBool>,
    sigterm: Arc<AtomicBool>,
}

impl Interrupt {
    pub fn install() -> anyhow::Result<Interrupt> {
        let interrupt = Interrupt {
            sigint: Arc::new(AtomicBool::new(false)),
            sigterm: Arc::new(AtomicBool::new(false)),
        };
        signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupt.sigint))?;
        signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&interrupt.sigterm))?;
        Ok(interrupt)
    }

    pub fn requested(&self) -> bool {
        self.sigint.load(Ordering::Relaxed) || self.sigterm.load(Ordering::Relaxed)
    }

    /// The conventional exit code: 128 + the signal number.
    pub fn exit_code(&self) -> i32 {
        if self.sigterm.load(Ordering::Relaxed) {
            128 + libc::SIGTERM
        } else {
            128 + libc::SIGINT
        }
    }
}

#[cfg(test)]
impl Interrupt {
    /// Flags no signal handler sets, for tests that raise them by hand.
    pub(crate) fn unregistered() -> Interrupt {
        Interrupt {
            sigint: Arc::new(AtomicBool::new(false)),
            sigterm: Arc::new(AtomicBool::new(false)),
        }
    }

    /// What Ctrl-C does.
    pub(crate) fn raise_sigint(&self) {
        self.sigint.store(true, Ordering::Relaxed);
    }
}
