"""Device evidence: build fixture programs with nvcc, run them, record what happened."""
