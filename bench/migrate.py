"""`kenning migrate` on a 10,000-note vault an older Kenning wrote (format 1).

    PYTHONPATH=src .venv/bin/python bench/migrate.py [--n 10000] [--runs 3] [--keep DIR]

The vault is bench/gen_vault.py's (same seed, same notes), turned into what the format-1 Kenning
left: every person, organization, project and topic page named by the slug of its title
(``people/ada-bakker.md``, ``-2`` on a clash, as that Kenning did), every wikilink to it by that
slug (``[[ada-bakker|Ada Bakker]]``), each registered as the build's in the build state
(``summary``) and the mention log (``created``), and a config without ``format:``. Meetings keep
their names (the old build named them after their source file, which these have none of).

Timed, each as a real `kenning` process (start-up included): ``migrate --dry-run`` (diff to
/dev/null; median of ``--runs`` on the same vault, which it does not change) and ``migrate
--apply`` once (backups, one journaled batch; no index, so no re-index). Printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import gen_vault

RENAMED = ("people", "organizations", "projects", "topics")
CONFIG = "version: 1\nexclude:\n  - \"templates/**\"\n"  # as the format-1 Kenning wrote it
_LINK = re.compile(r"\[\[([^\]|#]+)(\|[^\]]*)?\]\]")


def make_format_1(out: Path, n: int) -> dict[str, int]:
    """Generate the vault and make it what the format-1 Kenning left (module docstring)."""
    from kenning.vault.layout import slug

    gen_vault.generate(n, out)
    stems: dict[str, str] = {}  # title → old slug stem
    pages: dict[str, dict[str, object]] = {}
    for folder in RENAMED:
        taken: set[str] = set()
        for path in sorted((out / folder).glob("*.md")):
            title = path.stem
            stem, i = slug(title), 2
            while stem in taken:
                stem, i = f"{slug(title)}-{i}", i + 1
            taken.add(stem)
            stems[title] = stem
            new = path.with_name(f"{stem}.md")
            path.rename(new)
            pages[f"{folder}/{stem}.md"] = {"summary": f"{title}.", "keys": []}

    def old_link(m: re.Match[str]) -> str:
        target, shown = m.group(1), m.group(2)
        stem = stems.get(target)
        if stem is None:
            return m.group(0)
        return f"[[{stem}{shown or '|' + target}]]"

    links = 0
    for path in out.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        new, count = _LINK.subn(old_link, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            links += count
    build = out / ".kenning" / "build"
    build.mkdir(parents=True)
    (out / ".kenning" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (build / "state.json").write_text(json.dumps(
        {"version": 1, "strictness": "low", "sources": {}, "pages": pages, "deleted": {},
         "renamed": {}, "contacts": []}, indent=1) + "\n", encoding="utf-8")
    (build / "mentions.jsonl").write_text("".join(
        json.dumps({"source": "sources/email/x.md", "page": p, "created": True}) + "\n"
        for p in sorted(pages)), encoding="utf-8")
    return {"notes": sum(1 for _ in out.rglob("*.md")), "slug_pages": len(pages),
            "links": links}


def _kenning(root: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from kenning.cli import main; main()",
                           "-C", str(root), "migrate", *args],
                          capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"migrate {' '.join(args)} failed: {proc.stderr.decode()[-2000:]}")
    return seconds, proc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the vault here and keep it")
    args = ap.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="kenning-migrate-"))
    root = base / "vault"
    if root.exists():
        shutil.rmtree(root)
    made = make_format_1(root, args.n)
    dry = []
    for _ in range(args.runs):
        seconds, proc = _kenning(root, "--dry-run")
        dry.append(seconds)
    diff = proc.stdout
    apply_s, applied = _kenning(root, "--apply", "--json")
    report = json.loads(applied.stdout)
    again_s, _ = _kenning(root, "--apply")
    print(json.dumps({
        **made, "dry_run_s": [round(s, 2) for s in dry],
        "dry_run_median_s": round(statistics.median(dry), 2),
        "diff_lines": diff.count(b"\n"), "renames": len(report["renames"]),
        "changed": len(report["changed"]), "apply_s": round(apply_s, 2),
        "second_apply_s": round(again_s, 2),
    }, indent=1))
    if args.keep is None:
        shutil.rmtree(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
