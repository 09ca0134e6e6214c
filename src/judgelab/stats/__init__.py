"""Pure statistics over ratings (no I/O). Each function cites the paper section it serves."""
from judgelab.stats.agreement import exact_agreement, krippendorff_alpha
from judgelab.stats.tests_twosample import welch_t

__all__ = ["krippendorff_alpha", "exact_agreement", "welch_t"]
