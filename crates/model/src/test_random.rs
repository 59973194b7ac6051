//! Reproducible pseudo-random numbers for tests (xorshift64): the same
//! cases on every run, without a dependency. Public (hidden from the docs)
//! so that every crate's tests share it.

pub struct XorShift(u64);

// (`next` is the generator's step, not an iterator's.)
#[allow(clippy::should_implement_trait)]
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

    /// Corrupts `bytes` with 1 to `most_edits` random edits, each a byte
    /// overwritten, the tail cut or a byte removed: what a decoder meets in a
    /// damaged or cut file.
    pub fn corrupt(&mut self, bytes: &mut Vec<u8>, most_edits: u64) {
        for _ in 0..1 + self.below(most_edits) {
            if bytes.is_empty() {
                return;
            }
            let at = self.below(bytes.len() as u64) as usize;
            match self.below(3) {
                0 => bytes[at] = self.below(256) as u8,
                1 => bytes.truncate(at),
                _ => {
                    bytes.remove(at);
                }
            }
        }
    }
}
