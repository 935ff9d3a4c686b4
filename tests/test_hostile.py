"""The hostile-input corpus (bench/hostile/): every case holds, within a memory cap.

Each case runs real `kenning` processes against a fresh vault on disk. Time is reported by
bench/faults.py against its 30 s target, not asserted here; a case still running after the hang
guard fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from hostile import MEMORY_TARGET_MIB, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_case_holds(case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.problems == []
    assert outcome.max_rss_mib < MEMORY_TARGET_MIB, outcome.max_rss_mib
