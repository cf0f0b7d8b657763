"""tune.md for an objective search (:func:`objective_markdown`): the held-out
figures of the tuned choice and of the defaults, the choice on all conversations
(with the breakpoint placement chosen with it) and every fold's choice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packproof.evals.tune.objective import COST, RECALL, Objective

__all__ = ["objective_markdown", "searched"]


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _stat(s: Mapping[str, Any] | None, sign: bool = False) -> str:
    if not s:
        return "–"
    fmt = "+.3f" if sign else ".3f"
    return f"{s['mean']:{fmt}} [{s['low']:.3f}, {s['high']:.3f}]"


def searched(chosen: Mapping[str, Any]) -> str:
    """A fold's or the search's chosen values (parameters, then cache options)."""
    values = {**chosen["params"], **chosen.get("cache", {})}
    if chosen.get("placement", "default") != "default":
        values["breakpoints"] = chosen["placement"]
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "(defaults)"


def objective_markdown(r: Mapping[str, Any]) -> str:
    """tune.md for an objective search."""
    o = r["objective"]
    objective = Objective(
        RECALL if "maximize" in o else COST,
        o.get("cost_ceiling", o.get("recall_floor")),
        o["profile"],
        o["static_prefix_tokens"],
    )
    goal = "maximize probe recall" if objective.maximize else "minimize relative cost"
    left = r.get("left_out")
    vs = r["tuned"]["versus_default"]

    def p(s: Mapping[str, Any] | None) -> str:
        return "" if not s else f" (p={s['p_value']:.3g})"

    def yes(flag: bool) -> str:
        return "yes" if flag else "**no**"

    c = r["chosen"]
    lines = [
        f"# packproof tune: {r['strategy']} on {r['config']}",
        "",
        f"{r['candidates']} candidate specs, each also priced under every breakpoint placement "
        f"its packs suggest ({r['search']}"
        + (f"; {left} combinations no pack can honour left out" if left else "")
        + f"). Objective: {goal} with {objective.constraint()}, priced under "
        f"`{o['profile']}` behind a {o['static_prefix_tokens']}-token static prefix. "
        f"{r['units']} units (conversation x budget) of {r['conversations']} conversations, "
        f"budgets {r['budgets']}; {len(r['folds'])}-fold cross-validation by conversation. "
        "Relative cost is a conversation's input cost over its input tokens, every request "
        "counted (steps and probes; 1.0 = no caching); "
        "probe recall the mean evidence recall of its probes; means are over units.",
        "",
        f"| held out | probe recall | relative cost | {objective.constraint()} |",
        "|---|---|---|---|",
        *(
            f"| {name} | {_stat(g['held_out'][RECALL])} | {_stat(g['held_out'][COST])} "
            f"| {yes(g['satisfies_on_held_out'])} |"
            for name, g in (
                (f"defaults `{r['default']['label']}`", r["default"]),
                ("tuned (chosen per fold)", r["tuned"]),
            )
        ),
        f"| difference, paired (Wilcoxon p) | {_stat(vs[RECALL], True)}{p(vs[RECALL])} "
        f"| {_stat(vs[COST], True)}{p(vs[COST])} | |",
        "",
        f"Chosen on all conversations: `{c['label']}`"
        + ("" if c["placement"] == "default" else f" with breakpoints {c['placement']}")
        + " (probe recall "
        f"{_num(c['all_conversations'][RECALL])}, relative cost "
        f"{_num(c['all_conversations'][COST])}"
        + ("" if c["feasible"] else "; no candidate meets the constraint, this is the closest")
        + "). "
        + (
            "It does **not** win on held-out conversations: keep the defaults."
            if not r["wins_on_held_out"]
            else "It **wins** on held-out conversations: it meets the constraint there, "
            + (
                "and the defaults do not."
                if not r["default"]["satisfies_on_held_out"]
                else "as the defaults do, and is significantly better (p < 0.05)."
            )
        ),
        "",
        "| held-out conversations | chosen | feasible | train recall | train cost "
        "| held-out recall | held-out cost | defaults recall | defaults cost |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for f in r["folds"]:
        t, h, d = f["train"], f["held_out_values"], f["default_held_out"]
        lines.append(
            f"| {', '.join(f['held_out'])} | {searched(f['chosen'])} "
            f"| {yes(f['feasible'])} | {_num(t[RECALL])} | {_num(t[COST])} "
            f"| {_num(h[RECALL])} | {_num(h[COST])} | {_num(d[RECALL])} | {_num(d[COST])} |"
        )
    return "\n".join(lines) + "\n"
