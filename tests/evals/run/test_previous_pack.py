"""A replay step's previous pack is its chain's last pack as positions into
the step's items (read from the conversation's table when the step's items
are its first ones), and an id the step's items lack is one clear error."""

from __future__ import annotations

import pytest

from packproof.evals.run.replay import Link, previous_pack
from packproof.packer import InputError
from packproof.packer.request import parse_items

TABLE = parse_items([{"id": f"m{i}", "text": f"message {i}"} for i in range(8)])


@pytest.mark.parametrize(("start", "stop"), [(0, 8), (0, 5), (2, 7)])
def test_the_positions_are_those_of_the_steps_items(start: int, stop: int) -> None:
    items = TABLE if (start, stop) == (0, 8) else TABLE.window(start, stop)
    ids = [f"m{i}" for i in (stop - 1, start, start + 2)]
    recall = [f"m{start + 1}"]
    got = previous_pack({("s", "1"): Link(ids, 10.0, recall, 2)}, ("s", "1"), items, 25.0)
    assert got is not None
    assert got.positions.tolist() == [items.position[r] for r in ids]
    assert got.recall is not None and got.recall.tolist() == [items.position[recall[0]]]
    assert got.elapsed_s == 15.0 and got.recall_age == 2
    assert previous_pack({}, ("s", "1"), items, 25.0) is None


@pytest.mark.parametrize("missing", ["m6", "m9"])  # past the step's items; in no table
def test_an_id_the_step_lacks_is_one_clear_error(missing: str) -> None:
    items = TABLE.window(0, 5)
    with pytest.raises(InputError, match=f"packed '{missing}', which this step's items lack"):
        previous_pack({("s", "1"): Link(["m1", missing], 0.0)}, ("s", "1"), items, 1.0)
