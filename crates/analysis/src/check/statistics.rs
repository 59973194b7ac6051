//! The statistics of the decision: medians and a one-sided Mann-Whitney U
//! test on two runs' per-step samples.
//!
//! Why a rank test: a run has few steps (10-20 in a CI job), step times are
//! not normal (skewed to the right, often bimodal), and a garbage
//! collection or an input stall makes a few steps far slower. A t-test's
//! mean moves with one such step; ranks do not care how far an outlier
//! lies, and need no assumption about the distribution's shape.

/// The median of `samples` (the mean of the middle two for an even count);
/// `None` for no samples. NaNs are not expected (the samples are times).
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 })
}

/// The p-value of a one-sided Mann-Whitney U test of "`new` is not larger
/// than `base`" against "`new` tends to be larger" (P(new > base) > 1/2).
///
/// Exact when both sides have at most [`EXACT_MAX`] samples: the
/// permutation distribution of U given the ties (every split of the
/// pooled samples into the two sides equally likely, tied values at their
/// mean rank), as `scipy.stats.permutation_test` computes it exhaustively;
/// without ties, the distribution `scipy.stats.mannwhitneyu(new, base,
/// alternative="greater", method="exact")` counts. Otherwise the normal
/// approximation with the tie correction of the variance and a continuity
/// correction of 0.5, as `mannwhitneyu(…, method="asymptotic")`.
/// `None` when a side is empty.
///
/// Why exact with ties: a trace's times are whole microseconds or
/// nanoseconds, so the steps of an op tie often. The normal approximation
/// is conservative for few steps: with 8 and 8 steps wholly apart it gives
/// p = 4.7e-4 where the exact p is 1/C(16, 8) = 7.8e-5, too large to pass
/// Holm's adjustment over some forty metrics at 0.01, so that an op that
/// doubled in every step could not be named.
pub fn mann_whitney_greater(new: &[f64], base: &[f64]) -> Option<f64> {
    let (n1, n2) = (new.len(), base.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let ranked = u_statistic(new, base);
    if n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        return Some(exact_upper_tail(n1, &ranked.ties, ranked.u));
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let mean = n1f * n2f / 2.0;
    let tie_term: f64 = ranked.ties.iter().map(|&t| (t * t * t - t) as f64).sum();
    let variance = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        // Every sample is equal: no evidence of any change.
        return Some(1.0);
    }
    let z = (ranked.u - mean - 0.5) / variance.sqrt();
    Some(normal_upper_tail(z))
}

/// Holm's step-down adjustment of `p_values` (Holm 1979, "A simple
/// sequentially rejective multiple test procedure"): the i-th smallest of m
/// becomes the largest of min(1, (m - j + 1)·p_(j)) for j ≤ i, so that
/// rejecting where the adjusted value is below alpha rejects any true "no
/// change" among the m with probability at most alpha, whatever their
/// dependence. `None`s are not tested and stay `None`; the others keep
/// their order.
///
/// Why: a check tests tens of metrics at once. At alpha = 0.01 each, two
/// identical runs fail somewhere far more often than 1 time in 100 (20
/// ops: up to 18%); adjusted, the whole check's chance of calling noise a
/// change is the 1%. A real slowdown moves every step's sample: with 13
/// steps a side the exact p-value of no overlap is 1e-7, far below what
/// the adjustment asks.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..p_values.len()).filter(|&i| p_values[i].is_some()).collect();
    order.sort_by(|&a, &b| p_values[a].unwrap_or(1.0).total_cmp(&p_values[b].unwrap_or(1.0)));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let p = p_values[i].unwrap_or(1.0);
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[i] = Some(running);
    }
    adjusted
}

/// Sides up to this size get the exact distribution (its two count tables
/// are (n1+1)·(n(n+1)+1) numbers each, n = n1+n2: 34 461 at most).
pub const EXACT_MAX: usize = 20;

/// U and the sizes of the groups of equal values, in order.
struct Ranked {
    /// U of `new`: the number of pairs where `new`'s sample is larger, ties
    /// counting one half.
    u: f64,
    /// The size of each group of equal pooled values, smallest values
    /// first (1 for a value that ties with none).
    ties: Vec<usize>,
}

fn u_statistic(new: &[f64], base: &[f64]) -> Ranked {
    let mut all: Vec<(f64, bool)> = new.iter().map(|&v| (v, true)).chain(base.iter().map(|&v| (v, false))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut ties = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1..=j+1 share their mean.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        ties.push(j - i + 1);
        rank_sum += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let n1 = new.len() as f64;
    Ranked { u: rank_sum - n1 * (n1 + 1.0) / 2.0, ties }
}

/// P(U >= u) when each of the C(n, n1) ways to choose `new`'s n1 of the n
/// pooled samples is equally likely, the samples falling in groups of
/// equal values of sizes `ties` (smallest first) whose members share their
/// mean rank. Counted over doubled rank sums (whole numbers): a group of t
/// samples at doubled mean rank d with k of them `new`'s adds k·d to the
/// sum, in C(t, k) ways. Without ties this is the classic count of
/// arrangements by U.
fn exact_upper_tail(n1: usize, ties: &[usize], u: f64) -> f64 {
    let n: usize = ties.iter().sum();
    let max_sum = n * (n + 1);
    // ways[k][s]: the ways to choose k `new` samples among the groups seen
    // so far with doubled rank sum s.
    let mut ways = vec![vec![0u64; max_sum + 1]; n1 + 1];
    ways[0][0] = 1;
    let mut next = ways.clone();
    let mut seen = 0;
    for &t in ties {
        let doubled_rank = 2 * seen + t + 1;
        let choose = binomials(t);
        next.iter_mut().for_each(|row| row.fill(0));
        for k in 0..=n1.min(seen) {
            for s in 0..=seen * (seen + 1) {
                let w = ways[k][s];
                if w == 0 {
                    continue;
                }
                for (j, &c) in choose.iter().enumerate().take(n1 - k + 1) {
                    next[k + j][s + j * doubled_rank] += w * c;
                }
            }
        }
        std::mem::swap(&mut ways, &mut next);
        seen += t;
    }
    // 2U = doubled rank sum - n1(n1+1); U is a whole or half number.
    let from = ((2.0 * u).round().max(0.0) as usize + n1 * (n1 + 1)).min(max_sum + 1);
    let counts = &ways[n1];
    let total: u64 = counts.iter().sum();
    counts[from..].iter().sum::<u64>() as f64 / total as f64
}

/// C(t, 0), C(t, 1), …, C(t, t).
fn binomials(t: usize) -> Vec<u64> {
    let mut row = vec![1u64; t + 1];
    for k in 1..t {
        row[k] = row[k - 1] * (t - k + 1) as u64 / k as u64;
    }
    row
}

/// P(Z > z) for a standard normal Z.
pub fn normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, by the Chebyshev fit of Numerical
/// Recipes (`erfcc`, relative error below 1.2e-7 everywhere): plenty for a
/// p-value compared with an alpha of 0.01.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06 + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    /// The p-values scipy 1.17.1 gives (`scipy.stats.mannwhitneyu(new, base,
    /// alternative="greater", method="exact")` and `method="asymptotic"`,
    /// whose default `use_continuity=True` matches ours).
    #[test]
    fn p_values_match_scipy() {
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-6 * want.max(1e-3), "got {got}, want {want}");
        // Exact, no ties.
        let base = [10.0, 11.0, 12.0, 13.0, 14.0];
        let new = [12.5, 13.5, 14.5, 15.0, 16.0];
        close(mann_whitney_greater(&new, &base).unwrap(), SCIPY_EXACT_5_5);
        // Completely separated, 6 and 6: 1 / C(12, 6).
        let low: Vec<f64> = (0..6).map(f64::from).collect();
        let high: Vec<f64> = (10..16).map(f64::from).collect();
        close(mann_whitney_greater(&high, &low).unwrap(), 1.0 / 924.0);
        close(mann_whitney_greater(&low, &high).unwrap(), 1.0);
        // Ties, sides past EXACT_MAX: the normal approximation with the
        // tie correction (tools/check/exact_ties_oracle.py).
        let base = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0].repeat(3);
        let new = [3.0, 3.0, 4.0, 4.0, 5.0, 5.0].repeat(4);
        close(mann_whitney_greater(&new, &base).unwrap(), SCIPY_ASYMPTOTIC_TIES_21_24);
        // The same values, 7 and 6: exact given the ties (scipy's
        // `permutation_test`; `mannwhitneyu`'s approximation gave 0.0158).
        close(mann_whitney_greater(&new[..6], &base[..7]).unwrap(), SCIPY_EXACT_TIES_7_6);
    }

    const SCIPY_EXACT_5_5: f64 = 0.027777777777777776;
    const SCIPY_ASYMPTOTIC_TIES_21_24: f64 = 1.0726714027592437e-05;
    const SCIPY_EXACT_TIES_7_6: f64 = 0.02156177156177156;

    /// Holm's adjustment as statsmodels 0.15.0 computes it
    /// (`statsmodels.stats.multitest.multipletests(p, method="holm")[1]`
    /// for the five p-values below); an untested metric stays untested.
    #[test]
    fn holm_matches_statsmodels() {
        let p = [Some(0.01), Some(0.04), None, Some(0.03), Some(0.005), Some(0.5)];
        let want = [Some(0.04), Some(0.09), None, Some(0.09), Some(0.025), Some(0.5)];
        for (got, want) in holm(&p).into_iter().zip(want) {
            assert_eq!(got.is_some(), want.is_some());
            if let (Some(got), Some(want)) = (got, want) {
                assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
            }
        }
        assert_eq!(holm(&[]), Vec::<Option<f64>>::new());
    }

    #[test]
    fn equal_samples_show_no_change() {
        let same = [5.0; 8];
        assert_eq!(mann_whitney_greater(&same, &same), Some(1.0));
        assert_eq!(mann_whitney_greater(&[], &same), None);
    }

    #[test]
    fn the_exact_distribution_is_symmetric() {
        // P(U >= u) + P(U >= n1*n2 - u + 1) = 1 for the symmetric U.
        for u in 0..=12 {
            let sum = exact_upper_tail(3, &[1; 7], u as f64) + exact_upper_tail(3, &[1; 7], (12 - u + 1) as f64);
            assert!((sum - 1.0).abs() < 1e-12);
        }
    }

    /// The permutation distribution of U given the ties, exhaustively, as
    /// `tools/check/exact_ties_oracle.py` has scipy 1.17.1's
    /// `permutation_test` count it (its cases and output).
    #[test]
    fn exact_with_ties_matches_scipy() {
        const SEPARATED_TIES_8_8: f64 = 7.77000777000777e-05;
        const OVERLAPPING_TIES_8_8: f64 = 0.049184149184149185;
        const UNEQUAL_TIES_6_9: f64 = 0.016783216783216783;
        let cases: [(&[f64], &[f64], f64); 3] = [
            (&[84.0, 84.0, 85.0, 84.0, 84.0, 85.0, 84.0, 84.0], &[169.0, 169.0, 169.0, 169.0, 168.0, 170.0, 168.0, 168.0], SEPARATED_TIES_8_8),
            (&[85.0, 84.0, 84.0, 85.0, 84.0, 84.0, 86.0, 84.0], &[84.0, 85.0, 85.0, 85.0, 86.0, 85.0, 85.0, 86.0], OVERLAPPING_TIES_8_8),
            (&[3.0, 3.0, 3.0, 1.0, 2.0, 3.0, 3.0, 0.0, 3.0], &[3.0, 4.0, 3.0, 5.0, 3.0, 4.0], UNEQUAL_TIES_6_9),
        ];
        for (base, new, want) in cases {
            let got = mann_whitney_greater(new, base).unwrap();
            assert!((got - want).abs() < 1e-12 * want, "{base:?} vs {new:?}: got {got}, want {want}");
        }
        // Small sides with many ties against every split counted one by one.
        let mut seed = 12345u64;
        let mut draw = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..200 {
            let (n1, n2) = (1 + draw(6) as usize, 1 + draw(6) as usize);
            let values: Vec<f64> = (0..n1 + n2).map(|_| draw(4) as f64).collect();
            let (new, base) = values.split_at(n1);
            let observed = u_statistic(new, base).u;
            let (mut at_least, mut splits) = (0u32, 0u32);
            for mask in 0u32..1 << (n1 + n2) {
                if mask.count_ones() as usize != n1 {
                    continue;
                }
                let (mut chosen, mut rest) = (Vec::new(), Vec::new());
                for (i, &v) in values.iter().enumerate() {
                    if mask >> i & 1 == 1 { chosen.push(v) } else { rest.push(v) }
                }
                splits += 1;
                at_least += u32::from(u_statistic(&chosen, &rest).u >= observed);
            }
            let want = f64::from(at_least) / f64::from(splits);
            let got = mann_whitney_greater(new, base).unwrap();
            assert!((got - want).abs() < 1e-12, "{new:?} vs {base:?}: got {got}, want {want}");
        }
        // The largest sides, every sample equal but one: no overflow, and
        // the lone larger sample on the new side is 1 chance in 2.
        let mut new = [7.0; EXACT_MAX];
        new[0] = 8.0;
        assert!((mann_whitney_greater(&new, &[7.0; EXACT_MAX]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!((binomials(4), binomials(0)), (vec![1, 4, 6, 4, 1], vec![1]));
    }

    #[test]
    fn erfc_is_accurate() {
        // Φ(-1.959964) = 0.025; erfc(0) = 1.
        assert!((normal_upper_tail(1.959_963_985) - 0.025).abs() < 1e-8);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
    }
}
