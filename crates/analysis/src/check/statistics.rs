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
/// Exact (the distribution of U counted by recursion) when there are no
/// ties and both sides have at most [`EXACT_MAX`] samples; otherwise the
/// normal approximation with the tie correction of the variance and a
/// continuity correction of 0.5, as `scipy.stats.mannwhitneyu(new, base,
/// alternative="greater", method=…)` computes them. `None` when a side is
/// empty.
pub fn mann_whitney_greater(new: &[f64], base: &[f64]) -> Option<f64> {
    let (n1, n2) = (new.len(), base.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (u, tie_term) = u_statistic(new, base);
    if tie_term == 0.0 && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        return Some(exact_upper_tail(n1, n2, u));
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let mean = n1f * n2f / 2.0;
    let variance = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        // Every sample is equal: no evidence of any change.
        return Some(1.0);
    }
    let z = (u - mean - 0.5) / variance.sqrt();
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

/// Sides up to this size get the exact distribution when nothing ties
/// (the count table is (n1+1)·(n2+1)·(n1·n2+1) numbers, 180 000 at most).
pub const EXACT_MAX: usize = 20;

/// U of `new` (the number of pairs where `new`'s sample is larger, ties
/// counting one half) and Σ(t³ - t) over the groups of tied values.
fn u_statistic(new: &[f64], base: &[f64]) -> (f64, f64) {
    let mut all: Vec<(f64, bool)> = new.iter().map(|&v| (v, true)).chain(base.iter().map(|&v| (v, false))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1..=j+1 share their mean.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let n1 = new.len() as f64;
    (rank_sum - n1 * (n1 + 1.0) / 2.0, tie_term)
}

/// P(U >= u) under the null hypothesis, without ties: the number of
/// arrangements of n1 and n2 samples with each U, by the recursion
/// c(m, n, u) = c(m-1, n, u-n) + c(m, n-1, u), over C(n1+n2, n1).
fn exact_upper_tail(n1: usize, n2: usize, u: f64) -> f64 {
    let max_u = n1 * n2;
    // counts[m][n] is the distribution of U for m and n samples.
    let mut counts: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n2 + 1]; n1 + 1];
    for m in 0..=n1 {
        for n in 0..=n2 {
            let mut c = vec![0.0; m * n + 1];
            if m == 0 || n == 0 {
                c[0] = 1.0;
            } else {
                for (k, slot) in c.iter_mut().enumerate() {
                    let with_largest_new = if k >= n { counts[m - 1][n].get(k - n).copied().unwrap_or(0.0) } else { 0.0 };
                    let with_largest_base = counts[m][n - 1].get(k).copied().unwrap_or(0.0);
                    *slot = with_largest_new + with_largest_base;
                }
            }
            counts[m][n] = c;
        }
    }
    let dist = &counts[n1][n2];
    let total: f64 = dist.iter().sum();
    // (Without ties U is a whole number.)
    let from = (u.round().max(0.0) as usize).min(max_u + 1);
    dist[from.min(dist.len())..].iter().sum::<f64>() / total
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
        // Ties: the normal approximation with the tie correction.
        let base = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0];
        let new = [3.0, 3.0, 4.0, 4.0, 5.0, 5.0];
        close(mann_whitney_greater(&new, &base).unwrap(), SCIPY_ASYMPTOTIC_TIES);
    }

    const SCIPY_EXACT_5_5: f64 = 0.027777777777777776;
    const SCIPY_ASYMPTOTIC_TIES: f64 = 0.015792523075814587;

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
            let sum = exact_upper_tail(3, 4, u as f64) + exact_upper_tail(3, 4, (12 - u + 1) as f64);
            assert!((sum - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn erfc_is_accurate() {
        // Φ(-1.959964) = 0.025; erfc(0) = 1.
        assert!((normal_upper_tail(1.959_963_985) - 0.025).abs() < 1e-8);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
    }
}
