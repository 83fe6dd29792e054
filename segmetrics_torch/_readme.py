"""Write the README's measure tables from the registry: ``python -m segmetrics_torch._readme README.md`` (a test fails
when the README's tables differ from :data:`segmetrics_torch.registry.TABLES`)."""

from __future__ import annotations

import sys
from pathlib import Path

from .registry import with_tables

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m segmetrics_torch._readme README.md")
    path = Path(sys.argv[1])
    path.write_text(with_tables(path.read_text(encoding="utf-8")), encoding="utf-8")
