//! A small deterministic generator, so synthetic inputs (benchmarks, bags, demo scenes, test
//! arrangements) are reproducible from a seed on every machine.

/// Marsaglia's xorshift64: fast, and the same sequence everywhere.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}
