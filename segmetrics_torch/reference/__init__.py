"""Plain numpy/scipy oracles, written for readability; they import nothing else from the package but the measure
names of :mod:`segmetrics_torch.registry` (plain strings: no computation is shared with the code they check)."""
