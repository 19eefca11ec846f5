//! What a process's smaps_rollup costs to read, learned from every read
//! (full passes, processes read alone, a big tree's scaled reads): what
//! `scaled_reads.rs` prices a full pass of a tree by.

/// The part of a process's smaps_rollup that does not grow with its
/// memory (measured here: 20-70 µs on a process of 3 MiB).
const ROLLUP_EACH_S: f64 = 20e-6;

/// What smaps_rollup costs: `ROLLUP_EACH_S` a process, plus a learned
/// cost per byte of RSS (its page-table walk).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct RollupCost {
    per_byte_s: Option<f64>,
}

impl RollupCost {
    /// Learns from `cost_s` spent on `processes` holding `rss_bytes`.
    pub(super) fn note(&mut self, cost_s: f64, processes: usize, rss_bytes: u64) {
        if processes == 0 || rss_bytes == 0 {
            return;
        }
        let paged_s = (cost_s - processes as f64 * ROLLUP_EACH_S).max(0.0);
        let per_byte_s = paged_s / rss_bytes as f64;
        self.per_byte_s = Some(match self.per_byte_s {
            Some(old) => 0.7 * old + 0.3 * per_byte_s,
            None => per_byte_s,
        });
    }

    /// What reading `processes` holding `rss_bytes` should cost; `None`
    /// before the first read.
    pub(super) fn of(&self, processes: usize, rss_bytes: u64) -> Option<f64> {
        self.per_byte_s
            .map(|b| processes as f64 * ROLLUP_EACH_S + b * rss_bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// Priced from one read of a small process, a tree of 101 workers of
    /// 65 MiB must not look affordable in full passes: per process it did
    /// (101 x 67 us), though a pass of them cost 75 ms.
    #[test]
    fn a_small_first_read_prices_a_tree_of_big_workers_by_their_memory() {
        let mut cost = RollupCost::default();
        assert_eq!(cost.of(1, MIB), None);
        cost.note(67e-6, 1, 3 * MIB);
        let pass_s = cost.of(101, 101 * 65 * MIB).unwrap_or(0.0);
        assert!(pass_s > 0.02, "{pass_s}");
        // A small process alone stays cheap.
        let one_s = cost.of(1, 3 * MIB).unwrap_or(1.0);
        assert!((one_s - 67e-6).abs() < 1e-6, "{one_s}");
    }

    /// What a pass of many cost is learned per byte beyond each process's
    /// fixed part.
    #[test]
    fn a_pass_teaches_the_cost_per_byte_beyond_the_fixed_part() {
        let mut cost = RollupCost::default();
        let bytes = 58 * 65 * MIB;
        cost.note(43e-3, 58, bytes);
        let again_s = cost.of(58, bytes).unwrap_or(0.0);
        assert!((again_s - 43e-3).abs() < 1e-6, "{again_s}");
        // Nothing learned from no process or no memory.
        cost.note(1.0, 0, bytes);
        cost.note(1.0, 3, 0);
        assert_eq!(cost.of(58, bytes), Some(again_s));
    }
}
