"""From a file to its facts (``extract``: parse, then the cuBLASLt and CUTLASS readers) and from
facts to the dependency graph of which layouts and pointers feed which matmul (``graph``)."""
