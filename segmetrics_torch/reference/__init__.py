"""Plain numpy/scipy oracles, written for readability; they import nothing else from the package."""
