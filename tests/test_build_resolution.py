"""Resolution quality rules of `kenning build`: signatures, organization names and domains,
people named with their organization, convergence over passes, job changes, the owner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.build import names as nm
from kenning.cli import main
from kenning.vault.page import parse_page

OWNER = "owner:\n  names: [Alex Morgan]\n  emails: [alex@kestrel.dev]\n  domains: [kestrel.dev]\n"
ALEX = ("Alex Morgan", "alex@kestrel.dev", "to")


def vault(tmp_path: Path, config: str = OWNER) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    with (root / ".kenning" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(config)
    return root


def email(root: Path, name: str, subject: str, day: str, people: list[tuple[str, str, str]],
          body: str = "Hello.", *, sender: int = 0, signature: str | None = None) -> str:
    """An email source in the connector's format: people are (name, address, role)."""
    lines = ["---", "type: source", "kind: email", f"title: {subject}", f"date: {day}",
             f"subject: {subject}", "participants:"]
    for n, a, role in people:
        lines += [f"  - name: {json.dumps(n)}", f"    address: {a}", f"    roles: [{role}]"]
    lines += ["category: personal", "direction: received", "---", f"# {subject}", ""]
    s_name, s_addr, _ = people[sender]
    to = ", ".join(f"{n} <{a}>" for n, a, r in people if r != "from")
    lines += [f"## {day} 09:00 +00:00 · {s_name} <{s_addr}> → {to}", "", body]
    if signature:
        lines += ["", f"Signature: {signature}"]
    rel = f"sources/email/{day}-{name}.md"
    (root / "sources" / "email").mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def build(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "build", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def log(root: Path) -> list[dict]:
    path = root / ".kenning" / "build" / "mentions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def row(root: Path, text: str, source: str | None = None) -> dict:
    hits = [r for r in log(root) if r["text"] == text and (source is None or r["source"] == source)]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def page(root: Path, rel: str):
    return parse_page((root / rel).read_text(encoding="utf-8"), rel)


def folder(root: Path, name: str) -> list[str]:
    return sorted(p.name for p in (root / name).glob("*.md"))


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "title"), [
    ("Northwind Freight GmbH", "Northwind Freight"), ("TechFlow, Inc.", "TechFlow"),
    ("Initech LLC", "Initech"), ("Sakura Robotics K.K.", "Sakura Robotics"),
    ("Ford Motor Company", "Ford Motor Company"), ("Inc", "Inc"),
    ("Horizon Ventures", "Horizon Ventures"),
])
def test_strip_legal(name: str, title: str) -> None:
    assert nm.strip_legal(name) == title


@pytest.mark.parametrize(("name", "domain", "own", "fits"), [
    ("Horizon Ventures", "horizon.vc", False, True),
    ("Ironwood Capital", "ironwoodcap.test", False, True),   # first word + start of the rest
    ("Lumen Systems", "lumensys.test", False, True),
    ("Cedar & Finch", "cedarfinch.test", False, True),
    ("Horizon Health", "horizon.vc", False, False),         # a look-alike
    ("Horizon Ventures", "horizonhealth.test", False, False),
    ("Northwind Freight", "northwind.test", False, False),  # prose alone: not enough
    ("Northwind Freight", "northwind.test", True, True),    # a sender's own signature
    ("Enron Energy Services", "enron.com", True, False),    # a unit, not the domain's owner
])
def test_org_name_fits_domain(name: str, domain: str, own: bool, fits: bool) -> None:
    assert nm.org_name_fits_domain(name, domain, own=own) is fits


# -- signatures and organizations ------------------------------------------------------------


def test_role_comma_organization_signature(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Pilot", "2026-01-05",
          [("Marisol Underwood", "marisol@globex.test", "from"), ALEX],
          signature="Marisol Underwood · Data Scientist, Globex Corporation · +1 555 1416")
    build(root)
    assert folder(root, "organizations") == ["globex.md"]
    org = page(root, "organizations/globex.md")
    assert org.title == "Globex" and "Globex Corporation" in org.aliases
    assert org.frontmatter["domains"] == ["globex.test"]
    person = page(root, "people/marisol-underwood.md")
    assert person.frontmatter["role"] == "Data Scientist"
    assert person.frontmatter["organization"] == "[[globex|Globex]]"


def test_domain_page_learns_its_name_and_joins_the_prose_page(tmp_path: Path) -> None:
    root = vault(tmp_path, OWNER + "build:\n  strictness: low\n")
    # Prose names the organization (with its legal form) before anyone writes from its domain.
    email(root, "a", "Freight", "2026-01-05",
          [("Wei Madsen", "wei@acme.test", "from"), ALEX],
          body="We met the Northwind Freight GmbH team last week.")
    email(root, "b", "Hello", "2026-01-06",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX])
    email(root, "c", "Again", "2026-01-07",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX],
          signature="Elena Varga · Head of Platform, Northwind Freight · +49 30 1234567")
    email(root, "d", "Capital", "2026-01-08",
          [("Chioma Osei", "cosei@ironwoodcap.test", "from"), ALEX],
          signature="Chioma Osei · Partner, Ironwood Capital")
    build(root)
    orgs = folder(root, "organizations")
    assert "northwind-freight.md" in orgs and "northwind.md" not in orgs
    assert not any(o.startswith("northwind-freight-") for o in orgs)
    nw = page(root, "organizations/northwind-freight.md")
    assert nw.title == "Northwind Freight"
    assert "Northwind Freight GmbH" in nw.aliases
    assert nw.frontmatter["domains"] == ["northwind.test"]
    assert "ironwood-capital.md" in orgs and "ironwoodcap.md" not in orgs
    assert page(root, "organizations/ironwood-capital.md").frontmatter["domains"] == \
        ["ironwoodcap.test"]
    assert page(root, "people/elena-varga.md").frontmatter["organization"] == \
        "[[northwind-freight|Northwind Freight]]"


def test_look_alike_organization_is_not_joined(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "VC", "2026-01-05", [("Sarah Chen", "sarah@horizon.vc", "from"), ALEX],
          signature="Sarah Chen · Partner, Horizon Ventures")
    email(root, "b", "Health", "2026-01-06",
          [("Ravi Lindgren", "ravil@horizonhealth.test", "from"), ALEX],
          signature="Ravi Lindgren · CTO, Horizon Health")
    build(root)
    assert folder(root, "organizations") == ["horizon-health.md", "horizon-ventures.md"]
    assert page(root, "organizations/horizon-health.md").frontmatter["domains"] == \
        ["horizonhealth.test"]
    assert page(root, "organizations/horizon-ventures.md").frontmatter["domains"] == \
        ["horizon.vc"]
