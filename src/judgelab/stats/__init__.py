"""Pure statistics over ratings (no I/O). Each function cites the paper section it serves.

Names are imported on first use: ``from judgelab.stats import krippendorff_alpha`` loads only the
agreement module, not scipy.stats (about a second of start-up on 2 cores). No submodule is named
like a name it exports: importing a submodule binds its name on the package, which would shadow
the function of the same name.
"""
from __future__ import annotations

from judgelab._lazy import lazy_exports

_EXPORTS = {
    "krippendorff_alpha": "agreement", "exact_agreement": "agreement", "gwet_ac1": "agreement",
    "welch_t": "tests_twosample", "WelchResult": "tests_twosample",
    "wilcoxon": "tests_twosample", "WilcoxonResult": "tests_twosample",
    "icc": "reliability", "ICCResult": "reliability", "ICCEstimate": "reliability",
    "williams_test": "williams", "WilliamsResult": "williams", "bh_adjust": "williams",
    "Correlation": "coefficient", "correlate": "coefficient", "overall": "correlation", "system_level": "correlation",
    "per_group": "correlation", "level_correlation": "correlation", "mean_level_correlation": "correlation",
    "cluster_bootstrap_ci": "bootstrap", "ConfidenceInterval": "bootstrap",
    "harmonic_mean_p": "dhp", "harmonic_mean_p_exact": "dhp",
    "discernment": "dhp", "expert_weights": "dhp", "level_balanced_mean": "dhp",
    "ppi_mean": "ppi", "ppi_mean_difference": "ppi", "plan_ppi_mean": "ppi_plan", "plan_ppi_difference": "ppi_plan",
    "MeanCI": "ppi_results", "PPIInterval": "ppi_results", "PPIMean": "ppi_results", "PPIDifference": "ppi_results",
    "PPIPlan": "ppi_plan",
    "alt_test": "alternative_annotator", "by_adjust": "alternative_annotator", "AltTestResult": "alternative_annotator",
    "AnnotatorComparison": "alternative_annotator",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), {k: f"judgelab.stats.{v}" for k, v in _EXPORTS.items()})
