"""A window of a table reads its list columns as slices of the table's (a
column no item sets, as a list of None), and its ordinal order from the table."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer.request import parse_items

OPTIONAL = st.one_of(st.none(), st.sampled_from(["a", "b"]))


@given(
    columns=st.lists(st.tuples(OPTIONAL, OPTIONAL), min_size=1, max_size=12),
    data=st.data(),
)
def test_window_columns_are_the_tables_slices(
    columns: list[tuple[str | None, str | None]], data: st.DataObject
) -> None:
    raw = []
    for i, (category, url) in enumerate(columns):
        it = {"id": f"m{i}", "text": f"t{i}", "role": "user"}
        if category is not None:
            it["category"] = category
        if url is not None:
            it["url"] = f"https://example.com/{url}"
        raw.append(it)
    table = parse_items(raw)
    n = len(table)
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    window = table.window(start, stop)
    inner = data.draw(st.integers(0, stop - start))
    nested = window.window(inner, stop - start)
    for name in ("ids", "texts", "categories", "urls"):
        whole = getattr(table, name)
        assert getattr(window, name) == whole[start:stop]
        assert getattr(nested, name) == whole[start + inner : stop]
        assert type(getattr(window, name)) is list
    assert window.ascending and nested.ascending
    assert table.ascending == bool(np.all(np.diff(table.ordinals) > 0))
