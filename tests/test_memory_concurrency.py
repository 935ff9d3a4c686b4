"""Two processes writing to the same page at once lose nothing (the vault write lock)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from kenning.api import Vault
from kenning.vault.page import parse_page

WRITER = textwrap.dedent("""
    import sys
    from kenning.api import Vault

    root, tag = sys.argv[1], sys.argv[2]
    with Vault.open(root) as vault:
        for i in range(50):
            vault.record(observations=[{"entity": "Shared Page", "text": f"{tag} note {i}"}])
        for i in range(5):
            vault.retain("W", f"{tag} retained {i}", ["Shared Page"])
""")


def test_two_processes_writing_the_same_page_lose_nothing(vault: Vault) -> None:
    vault.record(entities=[{"name": "Shared Page", "type": "topic"}])
    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_TODAY": "2026-03-05"}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(vault.root), tag], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for tag in ("alpha", "beta")]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    page = parse_page((vault.root / "topics/Shared Page.md").read_text(encoding="utf-8"), "t.md")
    texts = sorted(f.text for f in page.facts)
    assert texts == sorted(f"{tag} note {i}" for tag in ("alpha", "beta") for i in range(50))
    ids = [f.block_id for f in page.facts]
    assert sorted(ids, key=lambda b: int(b[1:])) == [f"f{n}" for n in range(1, 101)]
    log = parse_page((vault.root / "memory/2026-03-05.md").read_text(encoding="utf-8"), "m.md")
    assert len(log.retain) == 10
    # The index caught up with every write.
    vault.close()
    assert len(vault.show("Shared Page")["facts"]) == 100
