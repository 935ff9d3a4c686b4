"""Evaluations that measure recall on public benchmarks (``kenning eval ...``).

Each benchmark lives in its own module and never ships the benchmark's data: the data is read
from wherever the user keeps it. ``locomo`` measures evidence recall on LoCoMo conversations,
``qmsum`` evidence hit and recall on QMSum meeting transcripts; ``budget`` holds what they share.
"""

from __future__ import annotations

from kenning.evaluate.locomo import (
    CATEGORY_NAMES,
    EvalError,
    default_audit_path,
    format_report,
    run_locomo,
    to_json,
    write_conversation,
)

__all__ = [
    "CATEGORY_NAMES",
    "EvalError",
    "default_audit_path",
    "format_report",
    "run_locomo",
    "to_json",
    "write_conversation",
]
