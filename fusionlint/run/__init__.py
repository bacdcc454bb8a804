"""The commands' machinery: settings, the file set, one file through the pipeline, workers, the
result cache, verify and calibrate on a GPU, the self-test."""
