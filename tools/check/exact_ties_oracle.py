#!/usr/bin/env python3
"""The exact p-values with ties that crates/analysis/src/check/statistics.rs
tests `mann_whitney_greater` against (`exact_with_ties_matches_scipy`).

    /work/venvs/gate-jax/bin/python tools/check/exact_ties_oracle.py   # scipy 1.17.1

scipy.stats.permutation_test, exhaustive (n_resamples=inf: every split of
the pooled samples into the two sides), of Mann-Whitney's U with ties at
their mean rank, alternative "greater" (new tends to be larger): the
permutation distribution of U given the ties. (mannwhitneyu's own
method="exact" ignores ties, and its "auto" takes the normal approximation
whenever anything ties.)
"""
import numpy as np
import scipy
from scipy import stats

CASES = {
    # A synthetic all-reduce of 84 us made 169 us (testdata/xplane/gpu_nccl_synth,
    # its _slow variant): separated, ties within each side.
    "SEPARATED_TIES_8_8": ([84.0, 84.0, 85.0, 84.0, 84.0, 85.0, 84.0, 84.0],
                           [169.0, 169.0, 169.0, 169.0, 168.0, 170.0, 168.0, 168.0]),
    # Whole microseconds of one op, ties across the sides.
    "OVERLAPPING_TIES_8_8": ([85.0, 84.0, 84.0, 85.0, 84.0, 84.0, 86.0, 84.0],
                             [84.0, 85.0, 85.0, 85.0, 86.0, 85.0, 85.0, 86.0]),
    # Unequal sides, a large tie group spanning both.
    "UNEQUAL_TIES_6_9": ([3.0, 3.0, 3.0, 1.0, 2.0, 3.0, 3.0, 0.0, 3.0],
                         [3.0, 4.0, 3.0, 5.0, 3.0, 4.0]),
    # The statistics tests' small case with ties (7 and 6), now exact.
    "EXACT_TIES_7_6": ([1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0], [3.0, 3.0, 4.0, 4.0, 5.0, 5.0]),
}

# Sides past EXACT_MAX (20) keep the normal approximation: mannwhitneyu's own.
ASYMPTOTIC = {
    "ASYMPTOTIC_TIES_21_24": ([1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0] * 3, [3.0, 3.0, 4.0, 4.0, 5.0, 5.0] * 4),
}


def u_statistic(base, new):
    pooled = np.concatenate([new, base])
    ranks = stats.rankdata(pooled)
    n1 = len(new)
    return ranks[:n1].sum() - n1 * (n1 + 1) / 2


def main():
    print(f"// scipy {scipy.__version__}: permutation_test(..., permutation_type='independent', n_resamples=inf, alternative='greater') of U")
    for name, (base, new) in CASES.items():
        result = stats.permutation_test((np.array(base), np.array(new)), u_statistic, permutation_type="independent",
                                        alternative="greater", n_resamples=np.inf)
        print(f"const {name}: f64 = {float(result.pvalue)!r};")
    for name, (base, new) in ASYMPTOTIC.items():
        result = stats.mannwhitneyu(new, base, alternative="greater", method="asymptotic")
        print(f"const {name}: f64 = {float(result.pvalue)!r};  // mannwhitneyu(new, base, method='asymptotic')")


if __name__ == "__main__":
    main()
