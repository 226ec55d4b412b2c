"""Statistics against values computed by hand (shown in the comments)."""

import pytest

from forge_kernel.analysis.stats import (
    Rate,
    brier,
    cohens_kappa,
    ece,
    mcnemar_exact,
    pass_at_k,
    pass_hat_k,
    percentile,
    reliability,
    wilson,
)


def test_wilson_matches_hand_computation():
    # 8/10, z=1.96: centre = (0.8 + 3.8415/20) / (1 + 3.8415/10) = 0.71674,
    # half = 1.96/1.38415 * sqrt(0.016 + 3.8415/400) = 0.22658  ->  [0.4902, 0.9433]
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)


def test_wilson_at_the_edges_stays_inside_zero_one():
    # 0/10: centre = half = 0.13876  ->  [0, 0.2775]
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    lo, hi = wilson(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.7225, abs=1e-4)
    with pytest.raises(ValueError):
        wilson(0, 0)


def test_mcnemar_exact_two_sided():
    # b=1, c=9: P = 2 * (C(10,0) + C(10,1)) / 2^10 = 22/1024
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    # b=0, c=6: 2 / 64
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def test_pass_at_k_and_pass_hat_k():
    # c=2 passes of n=3: pass^2 = C(2,2)/C(3,2) = 1/3; pass@2 = 1 - C(1,2)/C(3,2) = 1
    assert pass_hat_k(2, 3, 2) == pytest.approx(1 / 3)
    assert pass_at_k(2, 3, 2) == 1.0
    # c=1 of n=3: pass@2 = 1 - C(2,2)/C(3,2) = 2/3; pass^1 = 1/3
    assert pass_at_k(1, 3, 2) == pytest.approx(2 / 3)
    assert pass_hat_k(1, 3, 1) == pytest.approx(1 / 3)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(0, 3, 1) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(1, 3, 4)


def test_brier_and_ece():
    # ((0.9-1)^2 + (0.2-0)^2) / 2 = (0.01 + 0.04) / 2
    assert brier([0.9, 0.2], [True, False]) == pytest.approx(0.025)
    # bin [0.9,1): conf 0.9, acc 0.5 -> 0.4 * 2/4; bin [0.1,0.2): conf 0.1, acc 0 -> 0.1 * 2/4; total 0.25
    conf, out = [0.9, 0.9, 0.1, 0.1], [True, False, False, False]
    assert ece(conf, out) == pytest.approx(0.25)
    bins = [b for b in reliability(conf, out) if b.count]
    assert [(b.count, b.accuracy) for b in bins] == [(2, 0.0), (2, 0.5)]
    assert ece([1.0, 0.0], [True, False]) == 0.0


def test_percentile_needs_enough_samples():
    values = list(range(1, 21))
    # position (20-1)*0.95 = 18.05 -> 19 + 0.05 * (20 - 19)
    assert percentile(values, 95) == pytest.approx(19.05)
    assert percentile(values, 50) == pytest.approx(10.5)
    assert percentile(values[:19], 95) is None
    assert percentile(values, 99) is None


def test_rate_says_too_few_samples_instead_of_a_percentage():
    assert str(Rate(3, 4)) == "3/4 (too few samples)"
    assert str(Rate(8, 10)) == "8/10 = 80% [49%, 94%]"
    assert Rate(0, 0).value is None and str(Rate(0, 0)) == "no samples"
    assert Rate(3, 4).as_dict()["too_few_samples"] is True


def table(cells: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    """Pairs of labels from a contingency table: (first rater, second rater) -> count."""
    return [pair for pair, count in cells.items() for _ in range(count)]


@pytest.mark.parametrize(
    "cells, kappa, lo, hi",
    [
        # Stata's kapci on a 2x2 table of 1,932 (Statalist, 2009-12, msg00320): po 0.80383, pe 0.70223,
        # kappa 0.34120, analytic 95% interval 0.28967 to 0.39273 (se 0.026291)
        ({("0", "0"): 1395, ("0", "1"): 118, ("1", "0"): 261, ("1", "1"): 158}, 0.3411969, 0.2896668, 0.3927271),
        # Fleiss and Paik (2003), as statpsych's ci.kappa(.05, 31, 12, 4, 58) gives it: Cohen's kappa 0.6756757,
        # se 0.07344761, 95% interval 0.5317210 to 0.8196303
        ({("0", "0"): 31, ("0", "1"): 12, ("1", "0"): 4, ("1", "1"): 58}, 0.6756757, 0.5317210, 0.8196303),
    ],
)
def test_cohens_kappa_and_its_interval_match_published_examples(cells, kappa, lo, hi):
    k = cohens_kappa(table(cells))
    assert k.n == sum(cells.values())
    assert k.kappa == pytest.approx(kappa, abs=1e-6)
    assert k.interval == pytest.approx((lo, hi), abs=1e-6)


def test_cohens_kappa_at_the_edges():
    perfect = cohens_kappa(table({("clear", "clear"): 6, ("unclear", "unclear"): 4}))
    assert (perfect.observed, perfect.kappa, perfect.interval) == (1.0, 1.0, (1.0, 1.0))
    # one rater says clear throughout: pe = po = 0.6, kappa 0
    same = cohens_kappa(table({("clear", "clear"): 6, ("unclear", "clear"): 4}))
    assert same.observed == pytest.approx(0.6) and same.kappa == pytest.approx(0.0)
    assert str(same).startswith("n 10, observed agreement 60%, kappa 0.00 [")
    # both say clear throughout: chance agreement is 1, kappa is undefined
    assert str(cohens_kappa(table({("clear", "clear"): 5}))) == (
        "n 5, observed agreement 100%, kappa undefined (one label throughout)"
    )
    with pytest.raises(ValueError):
        cohens_kappa([])
