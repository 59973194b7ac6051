//! Reproducible pseudo-random numbers for tests (xorshift64): the same
//! cases on every run, without a dependency.

pub struct XorShift(u64);

impl XorShift {
    /// `seed` must not be 0 (xorshift would stay at 0).
    pub fn new(seed: u64) -> XorShift {
        assert_ne!(seed, 0);
        XorShift(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..below`.
    pub fn below(&mut self, below: u64) -> u64 {
        self.next() % below
    }
}
