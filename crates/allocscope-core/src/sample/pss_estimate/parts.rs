//! Per-kind arithmetic of the estimate: resident memory and PSS as
//! `[anon, file, shmem]` figures, and the shares of RSS that count in PSS.

use crate::sample::proc::RssParts;

/// `part / whole` within [0, 1]; 1 when there is no whole (nothing to
/// share).
pub fn ratio(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        1.0
    } else {
        (part / whole).clamp(0.0, 1.0)
    }
}

pub(super) fn kinds(parts: &RssParts) -> [f64; 3] {
    [
        parts.anon_bytes as f64,
        parts.file_bytes as f64,
        parts.shmem_bytes as f64,
    ]
}

pub(super) fn parts_of(kinds: [f64; 3]) -> RssParts {
    let bytes = |x: f64| x.max(0.0).round() as u64;
    RssParts {
        anon_bytes: bytes(kinds[0]),
        file_bytes: bytes(kinds[1]),
        shmem_bytes: bytes(kinds[2]),
    }
}

/// Shares of resident memory that count in PSS, per kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Shares {
    pub(super) anon: f64,
    pub(super) file: f64,
    pub(super) shmem: f64,
}

impl Shares {
    pub(super) fn of(rss: &RssParts, pss: &RssParts) -> Shares {
        let share = |pss: u64, rss: u64| ratio(pss as f64, rss as f64);
        Shares {
            anon: share(pss.anon_bytes, rss.anon_bytes),
            file: share(pss.file_bytes, rss.file_bytes),
            shmem: share(pss.shmem_bytes, rss.shmem_bytes),
        }
    }

    pub(super) fn split(&self, rss: &RssParts) -> RssParts {
        let part = |bytes: u64, share: f64| (bytes as f64 * share).round() as u64;
        RssParts {
            anon_bytes: part(rss.anon_bytes, self.anon),
            file_bytes: part(rss.file_bytes, self.file),
            shmem_bytes: part(rss.shmem_bytes, self.shmem),
        }
    }
}
