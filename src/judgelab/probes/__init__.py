"""Probes of a judge's biases that make their own test texts (the padding probe of issue 22)."""
