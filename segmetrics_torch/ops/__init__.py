"""Exact, batched building blocks (no measure semantics)."""
