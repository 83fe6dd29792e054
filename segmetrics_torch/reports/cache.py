"""A cache of evaluation results: one JSON file per (dataset, family, method, settings), named by the SHA-256 of its
fingerprint (the inputs' identities and the settings: ``segmetrics evaluate``'s report builds it, see
:mod:`segmetrics_torch.app.report_run`), written atomically, checked on reading, so that a re-run computes only what
changed."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import list_images
from .files import make_temporary_file

__all__ = ["CACHE_FORMAT", "ResultCache", "canonical_json", "class_images", "file_id"]

# --------------------------------------------------------------------------------------------------------- cache
CACHE_FORMAT = "segmetrics-cache/2"  # 2: infinities stored as "inf" / "-inf" (1: as null, read back as NaN)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, allow_nan=False, separators=(",", ":"))


class ResultCache:
    """One JSON file per (dataset, method, family, settings, files) fingerprint, written atomically."""

    def __init__(self, root: Path, warn: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.warn = warn or (lambda message: print(message, file=sys.stderr))

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The cached record of ``key``; None when absent, or when corrupt or partial (reported, then rebuilt)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            problem = (
                "not a cache entry"
                if not isinstance(entry, dict) or not str(entry.get("format", "")).startswith("segmetrics-cache/")
                else "written in an older cache format"
                if entry.get("format") != CACHE_FORMAT
                else "its key differs from its name"
                if entry.get("key") != key
                else "its checksum does not match its results"
                if hashlib.sha256(canonical_json(entry["record"]).encode()).hexdigest() != entry.get("checksum")
                else None
            )
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
            problem = f"unreadable ({type(error).__name__}: {error})"
        if problem is not None:
            self.warn(f"warning: the cache entry {path} is corrupt or partial ({problem}); recomputing it")
            return None
        return entry["record"]

    def store(self, key: str, record: dict[str, Any], fingerprint: dict[str, Any]) -> Path:
        """Write the entry to a temporary file in the cache folder, flush it to disk, then rename it into place."""
        self.root.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "checksum": hashlib.sha256(canonical_json(record).encode()).hexdigest(),
            "fingerprint": fingerprint,
            "record": record,
        }
        handle, temp = make_temporary_file(self.root, f".{key[:16]}-", ".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(json.dumps(entry, allow_nan=False))
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self.path(key))
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return self.path(key)


def class_images(folder: Path) -> dict[str, Path]:

    try:
        return list_images(folder, name="gt_classes folder")
    except ValueError as error:
        raise InputError(str(error)) from None


def file_id(path: Path, check: str) -> list[Any]:
    if check == "content":
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return [path.name, digest.hexdigest()]
    stat = path.stat()
    return [path.name, stat.st_size, stat.st_mtime_ns]
