"""Who owns the vault: names, addresses and domains from the vault config.

Connectors use it to mark direction — whether the owner sent a message, received it, or both
sides are inside the owner's organization — and the build stage's strictness depends on it.

```yaml
owner:
  names: [Alex Morgan]
  emails: [alex@kestrel.dev, alex.morgan@gmail.com]
  domains: [kestrel.dev]
```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.errors import NotAVault
from kenning.vault.layout import load_config

SENT = "sent"
RECEIVED = "received"
INTERNAL = "internal"
EXTERNAL = "external"  # the owner is not a party (a list, a forward, a shared mailbox)


@dataclass(frozen=True)
class Owner:
    names: frozenset[str] = frozenset()
    emails: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, raw: dict[str, Any] | None, *, where: str = "config") -> Owner:
        section = (raw or {}).get("owner") or {}
        if not isinstance(section, dict):
            raise NotAVault(f"{where}: field 'owner' must be a mapping of names, emails, domains")

        def values(key: str) -> frozenset[str]:
            value = section.get(key) or []
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list):
                raise NotAVault(f"{where}: field 'owner.{key}' must be a list")
            return frozenset(str(v).strip().lower() for v in value if str(v).strip())

        return cls(values("names"), values("emails"),
                   frozenset(d.lstrip("@") for d in values("domains")))

    @classmethod
    def load(cls, root: Path) -> Owner:
        config = load_config(root)
        return cls.from_config(config.raw, where=str(root / ".kenning" / "config.yaml"))

    @property
    def fingerprint(self) -> str:
        """Stable text that changes when the identity does (part of an input's sync stamp: a
        new owner changes directions, so the inputs are read again)."""
        return repr(sorted(map(sorted, (self.names, self.emails, self.domains))))

    @property
    def known(self) -> bool:
        return bool(self.names or self.emails or self.domains)

    def is_owner(self, address: str | None = None, name: str | None = None) -> bool:
        if address and address.strip().lower() in self.emails:
            return True
        return bool(name and " ".join(name.split()).lower() in self.names)

    def is_internal(self, address: str | None) -> bool:
        """The address is the owner's or in one of the owner's domains."""
        if not address or "@" not in address:
            return False
        address = address.strip().lower()
        domain = address.rsplit("@", 1)[1]
        return address in self.emails or any(
            domain == d or domain.endswith("." + d) for d in self.domains)

    def direction(self, sender: tuple[str | None, str | None],
                  recipients: Iterable[tuple[str | None, str | None]]) -> str | None:
        """sent | received | internal | external for (name, address) pairs; None if unknown."""
        if not self.known:
            return None
        recipients = list(recipients)
        name, address = sender
        everyone = [sender, *recipients]
        if all(self.is_internal(a) for _, a in everyone if a) and any(a for _, a in everyone):
            return INTERNAL
        if self.is_owner(address, name):
            return SENT
        if any(self.is_owner(a, n) for n, a in recipients):
            return RECEIVED
        return EXTERNAL
