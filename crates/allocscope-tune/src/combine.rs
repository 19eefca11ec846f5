//! Phase two of the race: the keys that helped on their own (a candidate
//! setting one key that round 1's halving kept and that used less memory
//! than its allocator's plain configuration), the best value of each, and
//! their combinations within one allocator; the finalist of phase one
//! races them.

use super::candidates::Candidate;

/// How one candidate of phase one ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Raced {
    pub candidate: Candidate,
    /// Its memory ratio to the baseline (point estimate), when measured.
    pub memory: Option<f64>,
    /// Not dropped: still open or qualifying when the phase ended.
    pub survived: bool,
    /// Kept by round 1's halving (among the best sixth of the field),
    /// whether or not a later look dropped it.
    pub kept_once: bool,
}

/// The most keys of one allocator combined: the two that helped most, one
/// combination, so that phase two stays a few runs a round.
const MAX_KEYS: usize = 2;

/// The memory ratio of `allocator`'s plain configuration: the baseline's
/// own is 1 (the baseline is not among the raced).
fn plain_memory(results: &[Raced], allocator: &str) -> Option<f64> {
    results
        .iter()
        .find(|r| r.candidate.allocator == allocator && r.candidate.settings.is_empty())
        .map_or(Some(1.0), |r| r.memory)
}

/// The best value of each key that helped on its own, in the order the
/// candidates came: among those round 1 kept, since the halving leaves a
/// single finalist and a key helps whether or not it was the one.
pub(crate) fn helpful(results: &[Raced]) -> Vec<&Raced> {
    let mut best: Vec<&Raced> = Vec::new();
    for r in results.iter().filter(|r| r.kept_once) {
        let (Some(key), Some(memory)) = (r.candidate.single_key(), r.memory) else {
            continue;
        };
        if plain_memory(results, r.candidate.allocator).is_some_and(|plain| memory >= plain) {
            continue;
        }
        let same_key = |b: &&Raced| {
            b.candidate.allocator == r.candidate.allocator && b.candidate.single_key() == Some(key)
        };
        match best.iter().position(same_key) {
            Some(i) if best[i].memory.is_some_and(|m| m > memory) => best[i] = r,
            Some(_) => {}
            None => best.push(r),
        }
    }
    best
}

/// Every combination of two or more helpful keys of one allocator, each
/// key at its best value (the `MAX_KEYS` best keys at most), for the
/// allocators of the `finalists` only: a combination of an allocator out of
/// contention would rarely catch up, and each one costs a run per round.
pub fn combinations(results: &[Raced], finalists: &[Candidate]) -> Vec<Candidate> {
    let helpful = helpful(results);
    let mut allocators: Vec<&'static str> = helpful
        .iter()
        .map(|r| r.candidate.allocator)
        .filter(|a| finalists.iter().any(|f| f.allocator == *a))
        .collect();
    allocators.dedup();
    let mut out = Vec::new();
    for allocator in allocators {
        let mut keys: Vec<&Raced> = helpful
            .iter()
            .copied()
            .filter(|r| r.candidate.allocator == allocator)
            .collect();
        keys.sort_by(|a, b| {
            a.memory
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.memory.unwrap_or(f64::INFINITY))
        });
        keys.truncate(MAX_KEYS);
        for mask in 1u32..(1 << keys.len()) {
            if mask.count_ones() < 2 {
                continue;
            }
            let settings = (0..keys.len())
                .filter(|i| mask & (1 << i) != 0)
                .flat_map(|i| keys[i].candidate.settings.iter().cloned())
                .collect();
            out.push(Candidate {
                allocator,
                settings,
            });
        }
    }
    out
}

/// The `n` survivors of phase one with the least memory, which race the
/// combinations in phase two.
pub fn finalists(results: &[Raced], n: usize) -> Vec<Candidate> {
    let mut survivors: Vec<&Raced> = results.iter().filter(|r| r.survived).collect();
    survivors.sort_by(|a, b| {
        a.memory
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.memory.unwrap_or(f64::INFINITY))
    });
    survivors
        .into_iter()
        .take(n)
        .map(|r| r.candidate.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raced(
        allocator: &'static str,
        set: &[(&'static str, &str)],
        memory: f64,
        survived: bool,
    ) -> Raced {
        Raced {
            candidate: Candidate {
                allocator,
                settings: set.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            },
            memory: Some(memory),
            survived,
            kept_once: survived,
        }
    }

    fn phase_one() -> Vec<Raced> {
        vec![
            raced("glibc", &[("arena_max", "1")], 0.60, false),
            raced("glibc", &[("arena_max", "2")], 0.70, true),
            raced("glibc", &[("arena_max", "4")], 0.80, true),
            raced("glibc", &[("trim", "1s")], 0.90, true),
            raced("glibc", &[("mmap_threshold", "64k")], 1.02, true),
            raced("jemalloc", &[], 0.65, true),
            raced("jemalloc", &[("narenas", "1")], 0.60, true),
            raced("jemalloc", &[("dirty_decay_ms", "0")], 0.70, true),
            raced("tcmalloc", &[], 0.50, true),
            raced("tcmalloc", &[("release_rate", "10")], 0.45, true),
        ]
    }

    #[test]
    fn a_key_helps_when_its_best_surviving_value_beats_the_plain_allocator() {
        let specs: Vec<String> = helpful(&phase_one())
            .iter()
            .map(|r| r.candidate.spec())
            .collect();
        // arena_max=1 was dropped, so 2 is the key's best; mmap_threshold
        // used more than glibc; dirty_decay_ms=0 more than plain jemalloc.
        assert_eq!(
            specs,
            [
                "glibc:arena_max=2",
                "glibc:trim=1s",
                "jemalloc:narenas=1",
                "tcmalloc:release_rate=10"
            ]
        );
    }

    #[test]
    fn a_key_round_one_kept_helps_though_a_later_look_dropped_it() {
        let mut results = phase_one();
        // arena_max=1 was kept by round 1 and dropped after round 2.
        results[0].kept_once = true;
        let specs: Vec<String> = helpful(&results)
            .iter()
            .map(|r| r.candidate.spec())
            .collect();
        assert_eq!(specs[0], "glibc:arena_max=1");
        let finalist: Vec<String> = finalists(&results, 9).iter().map(Candidate::spec).collect();
        assert!(!finalist.contains(&"glibc:arena_max=1".to_string()));
    }

    #[test]
    fn combinations_join_the_helpful_keys_of_one_allocator_only() {
        let specs: Vec<String> = combinations(&phase_one(), &finalists(&phase_one(), 9))
            .iter()
            .map(Candidate::spec)
            .collect();
        assert_eq!(specs, ["glibc:arena_max=2,trim=1s"]);
        let finalists: Vec<String> = finalists(&phase_one(), 2)
            .iter()
            .map(Candidate::spec)
            .collect();
        assert_eq!(finalists, ["tcmalloc:release_rate=10", "tcmalloc"]);
    }

    #[test]
    fn two_keys_give_one_combination_and_a_third_is_left_out() {
        let keys = ["a", "b", "c", "d", "e"];
        let results: Vec<Raced> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| raced("glibc", &[(k, "1")], 0.5 + i as f64 * 0.01, true))
            .collect();
        let combos = combinations(&results, &finalists(&results, 1));
        let specs: Vec<String> = combos.iter().map(Candidate::spec).collect();
        assert_eq!(specs, ["glibc:a=1,b=1"]);
        assert!(combinations(&results[..1], &finalists(&results, 1)).is_empty());
        let jemalloc_only = [raced("jemalloc", &[], 0.4, true)];
        let elsewhere = finalists(&jemalloc_only, 1);
        assert!(combinations(&results, &elsewhere).is_empty());
    }
}
