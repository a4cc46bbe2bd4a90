"""Counts a page states and what it draws, kept in agreement by a test (tests/gui/test_tour_counts.py).

A text that states how many of something the page draws ("16 blocks", "24 tokens in 6 trips") is marked with
``claim(item, name, n)``; every drawn member of that set is marked with ``count(item, name)`` (or one item with
``count(item, name, n)`` standing for ``n`` members that are named but not drawn, such as "trips 6–7 are not
drawn"). The test walks every tour page in both languages and checks, for each claim, that ``n`` is written in
the claiming text and that the members marked under ``name`` add up to ``n``. No Qt import beyond the item's own
``data``/``setData``; no effect on what is drawn.
"""

from __future__ import annotations

COUNT_KEY = 0x0C07  # QGraphicsItem.data key: {set name: how many members this item stands for}
CLAIM_KEY = 0x0C1A  # QGraphicsItem.data key: {set name: the number the text states}


def count(item, name: str, n: int = 1):
    """Mark ``item`` as ``n`` members of the drawn set ``name``. Returns ``item``."""
    counts = dict(item.data(COUNT_KEY) or {})
    counts[name] = counts.get(name, 0) + int(n)
    item.setData(COUNT_KEY, counts)
    return item


def claim(item, name: str, n: int):
    """Mark the text ``item`` as stating that the page draws ``n`` members of ``name``. Returns ``item``."""
    claims = dict(item.data(CLAIM_KEY) or {})
    claims[name] = int(n)
    item.setData(CLAIM_KEY, claims)
    return item


def drawn(items) -> dict[str, int]:
    """{set name: members marked} over ``items`` (a scene's ``items()``)."""
    totals: dict[str, int] = {}
    for item in items:
        for name, n in (item.data(COUNT_KEY) or {}).items():
            totals[name] = totals.get(name, 0) + int(n)
    return totals


def claims(items) -> list[tuple[object, str, int]]:
    """(text item, set name, stated number) for every claim over ``items``."""
    return [(item, name, n) for item in items for name, n in (item.data(CLAIM_KEY) or {}).items()]
