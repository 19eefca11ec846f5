//! The scenarios' random numbers: the shared SplitMix64 with the draws they
//! need. Seeded, so every allocator sees the same allocation sequence.

use allocscope_core::rng::SplitMix64;

pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..bound` (bound > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    /// A size from 16 B to 64 KiB, skewed to small: log-uniform.
    pub(crate) fn skewed_size(&mut self) -> usize {
        let shift = 4 + self.below(13); // 2^4 .. 2^16
        let base = 1u64 << shift;
        (base + self.below(base)).min(65_536) as usize
    }
}
