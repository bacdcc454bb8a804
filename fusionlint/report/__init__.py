"""Output formats: one module each."""
