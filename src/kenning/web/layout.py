"""A deterministic radial layout for the graph view: same neighbourhood in, same picture out.

The centre sits at the origin; the pages one step away go on a ring around it, grouped by type
and then by title (so colours cluster and the order is stable); each further ring orders its
pages by the mean angle of the pages that reached them (their barycentre), so a page sits near
what it hangs from and edges stay short. A ring grows when it holds many pages, so labels keep
their spacing; a crowded ring is staggered in two tracks; rings are drawn as ellipses wider
than tall, since labels run sideways. Pure numpy, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RING = 210.0  # radius step between rings
SPACING = 30.0  # least arc length between neighbours on a ring
STAGGER = 40  # pages on a ring above which it is split into two tracks
MIN_VIEW = (760.0, 520.0)  # the least viewBox width and height
# Rings are ellipses this much wider than tall: labels run sideways, and so does the screen.
ASPECT = 1.45


@dataclass(frozen=True)
class Spot:
    """A node's place: x, y, and the angle it sits at (radians; 0 for the centre)."""

    x: float
    y: float
    angle: float


def radial(centre: int, nodes: Sequence[tuple[int, int, str, str]],
           edges: Sequence[tuple[int, int]]) -> dict[int, Spot]:
    """Positions for ``centre`` and ``nodes`` (id, depth, type, title) given ``edges`` (a, b)."""
    spots: dict[int, Spot] = {centre: Spot(0.0, 0.0, 0.0)}
    touching: dict[int, list[int]] = {}
    for a, b in edges:
        touching.setdefault(a, []).append(b)
        touching.setdefault(b, []).append(a)
    depths = sorted({d for _, d, _, _ in nodes})
    radius = 0.0
    for depth in depths:
        ring = [n for n in nodes if n[1] == depth]
        if depth == depths[0]:
            ring.sort(key=lambda n: (n[2] or "~", n[3].casefold(), n[0]))
        else:
            def bary(n: tuple[int, int, str, str]) -> float:
                placed = [spots[o].angle for o in touching.get(n[0], ()) if o in spots
                          and o != centre]
                if not placed:
                    return 0.0
                # the circular mean, in 0..2π
                return float(np.arctan2(np.sin(placed).mean(), np.cos(placed).mean())
                             % (2 * np.pi))
            ring.sort(key=lambda n: (bary(n), n[3].casefold(), n[0]))
        count = len(ring)
        tracks = 2 if count > STAGGER else 1
        radius = max(radius + RING, count * SPACING / tracks / (2 * np.pi))
        angles = np.arange(count) * (2 * np.pi / max(count, 1)) - np.pi / 2
        radii = radius + (np.arange(count) % tracks) * (RING * 0.35)
        xs, ys = radii * np.cos(angles) * ASPECT, radii * np.sin(angles)
        for (nid, _, _, _), x, y, a in zip(ring, xs, ys, angles, strict=True):
            spots[nid] = Spot(round(float(x), 1), round(float(y), 1), float(a % (2 * np.pi)))
    return spots


def bounds(spots: dict[int, Spot], extra: Sequence[tuple[float, float]] = (),
           margin: tuple[float, float] = (24.0, 24.0)) -> tuple[float, float, float, float]:
    """The SVG viewBox (x, y, width, height) that holds every spot and ``extra`` point (the
    far ends of labels), with ``margin`` around."""
    points = [(s.x, s.y) for s in spots.values()] + list(extra)
    xy = np.array(points) if points else np.zeros((1, 2))
    pad = np.array(margin)
    lo, hi = xy.min(axis=0) - pad, xy.max(axis=0) + pad
    # never smaller than a modest picture, so one or two pages are not blown up to fill it
    grow = np.maximum(0.0, np.array(MIN_VIEW) - (hi - lo)) / 2
    lo, hi = lo - grow, hi + grow
    return (round(float(lo[0]), 1), round(float(lo[1]), 1), round(float(hi[0] - lo[0]), 1),
            round(float(hi[1] - lo[1]), 1))


def curve(a: Spot, b: Spot, bend: float, shorten: float = 14.0, at: float = 0.5
          ) -> tuple[str, float, float]:
    """An SVG path from ``a`` to ``b`` bowed sideways by ``bend`` (0: straight), stopping
    ``shorten`` short of ``b`` so an arrowhead clears the node; and the point (x, y) a
    fraction ``at`` along it, where its label goes."""
    p, q = np.array([a.x, a.y]), np.array([b.x, b.y])
    d = q - p
    length = float(np.hypot(*d)) or 1.0
    normal = np.array([-d[1], d[0]]) / length
    ctrl = (p + q) / 2 + normal * bend
    tail = q - (q - ctrl) / (float(np.hypot(*(q - ctrl))) or 1.0) * shorten
    mid = (1 - at) ** 2 * p + 2 * (1 - at) * at * ctrl + at ** 2 * tail
    path = (f"M{p[0]:.1f},{p[1]:.1f} Q{ctrl[0]:.1f},{ctrl[1]:.1f} {tail[0]:.1f},{tail[1]:.1f}")
    return path, round(float(mid[0]), 1), round(float(mid[1]), 1)


def label_end(x: float, y: float, anchor: str, turn: float | None, chars: int,
              em: float = 6.6) -> tuple[float, float]:
    """Roughly where a label of ``chars`` characters ends (for the viewBox)."""
    length = chars * em * (-1 if anchor == "end" else 1 if anchor == "start" else 0.5)
    theta = np.radians(turn or 0.0)
    return round(x + length * float(np.cos(theta)), 1), round(y + length * float(np.sin(theta)),
                                                              1)


def label(spot: Spot, radius: float, *, centre: bool = False, radial: bool = False
          ) -> tuple[float, float, str, float | None]:
    """Where a node's label goes: (x, y, text-anchor, rotation in degrees or None).

    The centre's label sits under it. Others sit just outside the node, away from the centre;
    with ``radial`` (a crowded ring) they are turned along the line from the centre, so
    neighbours on the ring never overlap — on the left half turned a half-turn more, so no
    label reads upside down."""
    if centre:
        return spot.x, round(spot.y + radius + 16, 1), "middle", None
    theta = float(np.arctan2(spot.y, spot.x))
    right = np.cos(theta) >= 0
    gap = radius + 4
    x = spot.x + gap * float(np.cos(theta)) if radial else spot.x + (gap if right else -gap)
    y = spot.y + gap * float(np.sin(theta)) if radial else spot.y + 4
    turn = None
    if radial:
        degrees = float(np.degrees(theta))
        turn = round(degrees if right else degrees - 180, 1)
    return round(x, 1), round(y, 1), "start" if right else "end", turn
