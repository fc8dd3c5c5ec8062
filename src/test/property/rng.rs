//! The seeded generator behind `--property` (SplitMix64): small, fast, the same sequence for
//! the same seed on every platform, and no dependency.

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The generator of run `run` of a property test seeded `seed`: each run has its own
    /// stream, so run 17 draws the same answers whatever the runs before it drew.
    pub fn for_run(seed: u64, run: u64) -> Rng {
        let mut mix = Rng::new(seed.wrapping_add(run.wrapping_mul(0xD1B5_4A32_D192_ED03)));
        Rng::new(mix.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.next_u64() % 100 < pct
    }

    /// One element of `items` (`None` when it is empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_runs_differ() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_run(7, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::for_run(7, 3).next_u64(), Rng::for_run(7, 4).next_u64());
        assert_ne!(Rng::for_run(7, 3).next_u64(), Rng::for_run(8, 3).next_u64());
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(5) < 5));
        assert_eq!(r.below(0), 0);
    }
}
