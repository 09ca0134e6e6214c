"""Pure statistics over ratings (no I/O). Each function cites the paper section it serves."""
from judgelab.stats.agreement import exact_agreement, gwet_ac1, krippendorff_alpha
from judgelab.stats.alt_test import AltTestResult, AnnotatorComparison, alt_test, by_adjust
from judgelab.stats.correlation import Correlation, bootstrap_ci, correlate, overall, per_group, system_level
from judgelab.stats.discernment import (
    discernment,
    expert_weights,
    harmonic_mean_p,
    harmonic_mean_p_exact,
    level_balanced_mean,
    wilcoxon_greater,
)
from judgelab.stats.icc import icc
from judgelab.stats.ppi import MeanCI, PPIDifference, PPIMean, PPIPlan, plan_ppi_difference, plan_ppi_mean, ppi_mean, ppi_mean_difference
from judgelab.stats.tests_twosample import welch_t
from judgelab.stats.williams import bh_adjust, williams_one_sided, williams_test

__all__ = [
    "krippendorff_alpha", "exact_agreement", "gwet_ac1", "welch_t", "icc", "williams_test", "williams_one_sided", "bh_adjust",
    "Correlation", "correlate", "overall", "system_level", "per_group", "bootstrap_ci",
    "wilcoxon_greater", "harmonic_mean_p", "harmonic_mean_p_exact", "discernment", "expert_weights", "level_balanced_mean",
    "ppi_mean", "ppi_mean_difference", "plan_ppi_mean", "plan_ppi_difference", "MeanCI", "PPIMean", "PPIDifference", "PPIPlan",
    "alt_test", "by_adjust", "AltTestResult", "AnnotatorComparison",
]
