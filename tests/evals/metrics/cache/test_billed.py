"""Counterfactual chains priced as the sessions were billed: hand-computed cases."""

from __future__ import annotations

import pytest

from packproof.evals.metrics.cache.billed import BilledStep, one_hour, price_as_billed
from packproof.evals.metrics.cache.check import billed_usd, load_prices

SONNET = "claude-sonnet-4-5-20250929"  # $3 per million input tokens, caches from 1,024
OPUS = "claude-opus-4-6"  # $5, caches from 4,096
PRICES = load_prices()


def _usage(cached: int, written: int, uncached: int, written_1h: int = 0) -> dict[str, int]:
    return {
        "cached": cached,
        "written": written,
        "written_1h": written_1h,
        "input": uncached,
        "output": 0,
    }


def _step(
    t: float,
    pack: list[tuple[str, int]],
    *,
    model: str = SONNET,
    static: int = 2000,
    warm: int | None = None,
    usage: dict[str, int] | None = None,
    epoch: int = 0,
) -> BilledStep:
    return BilledStep(t, model, static, warm, pack, usage or _usage(0, 0, 1), epoch)


def test_a_tiny_session_costs_what_the_hand_says() -> None:
    """A 2,000-token static prefix the user's other sessions had cached (warm),
    then 600-token items, 5-minute entries (anthropic, 1,024 minimum):
    step 0 [S, a] reads S (2,000) and writes a (600): 0.1 x 2,000 + 1.25 x 600 = 950;
    step 1 [S, a, b] reads [S, a] (2,600), writes b: 260 + 750 = 1,010;
    step 2, 390 s later, everything expired: [S, b] written whole, 1.25 x 2,600 = 3,250.
    5,210 input-token units at $3 per million = $0.01563."""
    bill = _usage(2000, 600, 0)  # as the session was billed at step 0: 950 units
    steps = [
        _step(0, [("a", 600)], warm=2000, usage=bill),
        _step(10, [("a", 600), ("b", 600)], usage=bill),
        _step(400, [("b", 600)], usage=bill),
    ]
    bills = price_as_billed(steps, PRICES)
    assert [(b.cached, b.written, b.uncached) for b in bills] == [
        (2000, 600, 0),
        (2600, 600, 0),
        (0, 2600, 0),
    ]
    assert sum(b.usd for b in bills) == pytest.approx(5210 * 3 / 1e6)
    assert [b.billed_usd for b in bills] == pytest.approx([950 * 3 / 1e6] * 3)
    assert [b.billed_prompt for b in bills] == [2600] * 3


def test_only_the_warm_part_of_the_static_prefix_is_read_first() -> None:
    """1,500 of the 2,000 static tokens were cached: step 0 reads 1,500 and
    writes the rest of the prompt, 1,100: 150 + 1,375 = 1,525 units."""
    (bill,) = price_as_billed([_step(0, [("a", 600)], warm=1500)], PRICES)
    assert (bill.cached, bill.written, bill.uncached) == (1500, 1100, 0)
    assert bill.usd == pytest.approx(1525 * 3 / 1e6)


def test_a_cold_start_reads_nothing() -> None:
    (bill,) = price_as_billed([_step(0, [("a", 600)], warm=0)], PRICES)
    assert (bill.cached, bill.written) == (0, 2600)


def test_the_models_minimum_applies() -> None:
    """Opus 4.6 caches from 4,096 tokens: a 2,600-token prompt is all uncached."""
    (bill,) = price_as_billed([_step(0, [("a", 600)], model=OPUS, warm=0)], PRICES)
    assert (bill.cached, bill.written, bill.uncached) == (0, 0, 2600)
    assert bill.usd == pytest.approx(2600 * 5 / 1e6)


def test_one_hour_entries_cost_2x_and_outlive_five_minutes() -> None:
    """Calls that wrote 1-hour entries: the same chain, step 2 (390 s later)
    still reads [S] (written at step 1, 1-hour life) and writes b: 200 + 2 x 600."""
    hour = _usage(0, 600, 0, written_1h=600)
    steps = [
        _step(0, [("a", 600)], warm=2000, usage=hour),
        _step(10, [("a", 600), ("b", 600)], usage=hour),
        _step(400, [("b", 600)], usage=hour),
    ]
    bills = price_as_billed(steps, PRICES)
    assert (bills[2].cached, bills[2].written) == (2000, 600)
    assert bills[2].usd == pytest.approx((200 + 1200) * 3 / 1e6)
    assert bills[0].billed_usd == pytest.approx(2 * 600 * 3 / 1e6)


def test_a_task_notification_breaks_the_prompt_after_the_static_prefix() -> None:
    steps = [
        _step(0, [("a", 600)], warm=2000),
        _step(10, [("a", 600), ("b", 600)], epoch=1),
    ]
    second = price_as_billed(steps, PRICES)[1]
    assert (second.cached, second.written) == (2000, 1200)


def test_models_keep_their_own_caches() -> None:
    """A Haiku call between two Sonnet calls neither reads nor breaks theirs."""
    steps = [
        _step(0, [("a", 600)], warm=2000),
        _step(5, [("a", 600), ("h", 5000)], model="claude-haiku-4-5", static=0, warm=0),
        _step(10, [("a", 600), ("h", 5000), ("b", 600)]),
    ]
    bills = price_as_billed(steps, PRICES)
    assert (bills[1].cached, bills[1].written) == (0, 5600)  # Haiku: cold, 4,096 minimum met
    assert (bills[2].cached, bills[2].written) == (2600, 5600)


def test_the_bill_prices_reads_and_both_lifetimes() -> None:
    # 5 x (0.1 x 1,000 + 1.25 x 300 + 2 x 200 + 10) / 10^6
    assert billed_usd(1000, 500, 200, 10, 5.0) == pytest.approx(5 * 885 / 1e6)


def test_the_lifetime_is_what_most_writing_calls_wrote() -> None:
    assert one_hour([_usage(0, 10, 0, 10), _usage(0, 10, 0, 10), _usage(0, 10, 0)])
    assert not one_hour([_usage(0, 10, 0, 10), _usage(0, 10, 0), _usage(5, 0, 0)])
