//! A small, fast, deterministic PRNG (SplitMix64): scenarios must allocate
//! the same sequence under every allocator.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (bound > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    /// A size from 16 B to 64 KiB, skewed to small: log-uniform.
    pub fn skewed_size(&mut self) -> usize {
        let shift = 4 + self.below(13); // 2^4 .. 2^16
        let base = 1u64 << shift;
        (base + self.below(base)).min(65_536) as usize
    }
}
