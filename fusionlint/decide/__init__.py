"""What is reported of the findings: rule selection, inline suppressions, the baseline."""
