"""`make bench`: every figure printed beside its reference measured in the same run, as a ratio."""
