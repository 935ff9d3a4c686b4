"""Moving memory in and out of a vault: importers from other tools, and the portable export.

``kenning import KIND PATH`` reads another tool's memory with the module of that kind (each
has ``read(path) -> Imported``, :mod:`kenning.transfer.model`), then the plan
(:mod:`kenning.transfer.plan`) maps it onto the vault — new pages, facts merged into existing
pages, what is already there — and writes it as one journaled batch, or only reports it with
``--dry-run``. ``kenning export`` (:mod:`kenning.transfer.export`) writes the vault and its
index as an archive another tool (or another Kenning) can read without Kenning;
``kenning import kenning ARCHIVE`` (:mod:`kenning.transfer.restore`) restores one.
"""

from __future__ import annotations

#: importer kind → module under kenning.transfer with ``read(path: Path) -> Imported``
IMPORTERS: dict[str, str] = {
    "rawthink": "kenning.transfer.rawthink",
    "basic-memory": "kenning.transfer.basic_memory",
    "gbrain": "kenning.transfer.gbrain",
    "openclaw": "kenning.transfer.openclaw",
    "mem0": "kenning.transfer.mem0",
}

#: ``kenning import kenning ARCHIVE``: a Kenning export restored (not an importer: no plan).
RESTORE_KIND = "kenning"
#: Every KIND ``kenning import`` takes.
IMPORT_KINDS: tuple[str, ...] = (*sorted(IMPORTERS), RESTORE_KIND)
