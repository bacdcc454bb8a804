"""The cuBLASLt support sweep: a C++ driver (driver.cpp) asks cuBLASLt about the configuration
space (space.py) stage by stage (stages.py); runner.py builds it, runs it and writes the table
that fusionlint/model/support_table.py reads."""
