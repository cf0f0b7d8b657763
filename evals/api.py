"""The Python entry point: evaluate your own packer, beside packproof's strategies,
on an eval config's scenarios (``packproof.evaluate``).

::

    import packproof
    from packproof.packer.contextpack import make_pack

    def newest_first(request):
        kept, used = [], 0
        for item in reversed(request["items"]):
            if used + item["tokens"] <= request["budget_tokens"]:
                kept.append(item["id"])
                used += item["tokens"]
        return make_pack(request, kept[::-1])

    run = packproof.evaluate(newest_first, "packproof.yaml")
    print(run.failures, run.dir)
    cells = run.cells()  # a pandas DataFrame, one row per cell

The packer is any callable from a request dict (``packproof.request.v1``, every
default filled: what an external packer gets) to a pack dict (ContextPack v1;
:func:`~packproof.packer.contextpack.make_pack` makes one from the ids kept), or
``"cmd:COMMAND"`` for a program speaking the external-packer protocol. Its
cells are judged by the same metrics, expectations and hard invariants as
packproof's strategies, and named after it in every report. An exception it
raises fails that cell (``CRASH``), not the run, ``SystemExit`` included; with
``timeout=`` it runs in a child process that is killed when a call overruns.
The run's folder is named after what its results depend on, a function by its
qualified name and its source, a command by the files it names
(:mod:`~packproof.evals.run.identity`): an edited packer is a new run beside the
earlier one.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packproof.evals.run.config import EvalConfig, config_from, load_config
from packproof.evals.run.evaluate import MAX_JOBS, MAX_KEEP, check_count
from packproof.evals.run.evaluate import evaluate as run_eval
from packproof.evals.run.executors import WorkerDied, check_executor
from packproof.evals.run.folder import INCOMPLETE, safe_component
from packproof.evals.run.packers import NamedPacker, PackFunction, command_packer, python_packer
from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Run", "evaluate"]


@dataclass(frozen=True)
class Run:
    """A finished run: its folder and its summary."""

    dir: Path
    summary: Mapping[str, Any]

    @property
    def failures(self) -> Mapping[str, Any]:
        """The failing cells by class (summary.json's ``failures``)."""
        failures: Mapping[str, Any] = self.summary["failures"]
        return failures

    @property
    def passed(self) -> bool:
        """No cell missed an expectation, broke a hard invariant or failed."""
        return not self.failures["cells"]

    def cells(self) -> pd.DataFrame:
        """One row per cell, typed (:func:`packproof.evals.load_run`)."""
        from packproof.evals.report.frame import load_run

        return load_run(self.dir)


def _with_packer(config: EvalConfig, packer: NamedPacker, builtins: bool) -> EvalConfig:
    if not builtins:
        return dataclasses.replace(
            config,
            specs=(packer.name,),
            packers={packer.name: packer},
            baseline=packer.name,
            compare=(),
        )
    if packer.name in config.labels.values():
        raise InputError(
            "name",
            "already a strategy of the config; name your packer otherwise",
            found=packer.name,
        )
    return dataclasses.replace(
        config,
        specs=(*config.specs, packer.name),
        packers={**config.packers, packer.name: packer},
    )


def _interrupted(folder: Path) -> str:
    """What an interrupted evaluate says: where the run it left incomplete is
    (the newest one of the config's; none if it stopped before writing any)."""
    marks = sorted(folder.glob(f"*/{INCOMPLETE}"), key=lambda p: (p.stat().st_mtime_ns, p))
    if not marks:
        return "packproof.evaluate interrupted before it wrote a run folder"
    return (
        f"packproof.evaluate interrupted: {marks[-1].parent} is left {INCOMPLETE} with "
        "its finished cells; evaluate(..., resume=True) continues it"
    )


def _check_arguments(
    config: Any, out: Any, jobs: Any, executor: Any, keep: Any, builtins: Any, resume: Any
) -> None:
    """Every argument as ``packproof eval`` holds its option to, each named by
    its parameter, before anything is read or written (the packer's, ``name``,
    ``strategy`` and ``timeout`` are checked where they are used)."""
    if not isinstance(config, str | os.PathLike | Mapping):
        raise InputError(
            "config",
            "not a config",
            expected="a path to an eval config YAML, or the config as a mapping",
            found=config,
        )
    if not isinstance(out, str | os.PathLike):
        raise InputError("out", "not a folder", expected="a path", found=out)
    check_count(jobs, "jobs", 1, MAX_JOBS)
    if keep is not None:  # keep=0 would remove every earlier run
        check_count(keep, "keep", 1, MAX_KEEP)
    if not isinstance(executor, str):
        raise InputError(
            "executor", "not an executor", expected="serial|process|dask", found=executor
        )
    check_executor(executor)
    for where, value in (("builtins", builtins), ("resume", resume)):
        if not isinstance(value, bool):
            raise InputError(where, "not a bool", expected="True or False", found=value)


def evaluate(
    packer: PackFunction | str | None = None,
    config: str | Path | Mapping[str, Any] = "packproof.yaml",
    *,
    name: str | None = None,
    strategy: str = "chronological",
    builtins: bool = True,
    out: str | Path = "reports",
    jobs: int = 1,
    executor: str = "serial",
    keep: int | None = None,
    timeout: float | None = None,
    resume: bool = False,
) -> Run:
    """Run ``config`` (a YAML file, or its content as a mapping) with ``packer``
    as one more strategy named ``name`` (default: the function's name; with
    ``builtins=False``, the only one), its requests carrying ``strategy``; write
    the reports under ``out`` and return the run.

    ``timeout`` is seconds per cell: a command's (default 10); a function given
    one runs in a forked child process, killed and started afresh when a call
    overruns it (``TIMEOUT``), and without one it is called in this process,
    untimed. ``executor="process"`` with ``jobs > 1`` needs a function that
    pickles (a module-level one), checked before anything is written.

    Ctrl-C (a ``KeyboardInterrupt``, from the packer too) stops the run, as in
    ``packproof eval``: the ``KeyboardInterrupt`` reaches the caller saying
    where the interrupted run is, its finished cells kept (``resume=True``
    continues it). A worker process that dies (``jobs > 1``) stops the run with
    :class:`~packproof.packer.errors.RunError`, saying which run folder is left
    ``INCOMPLETE``; ``resume=True`` continues it too.

    Every argument is checked before anything is written: a wrong one raises
    :class:`~packproof.packer.errors.InputError` naming it."""
    _check_arguments(config, out, jobs, executor, keep, builtins, resume)
    if isinstance(config, Mapping):
        loaded = config_from(config, Path.cwd())
    else:
        loaded = load_config(Path(config))
    if isinstance(packer, str):
        named = command_packer(packer, name or "packer", strategy, timeout)
        loaded = _with_packer(loaded, named, builtins)
    elif packer is not None:
        loaded = _with_packer(loaded, python_packer(packer, name, strategy, timeout), builtins)
    try:
        run_dir = run_eval(
            loaded,
            out_root=Path(out),
            jobs=jobs,
            executor=executor,
            keep=keep,
            resume=resume,
            progress=False,
        )
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_interrupted(Path(out) / safe_component(loaded.name))) from None
    except WorkerDied as exc:
        raise exc.left(exc.run_dir or Path(out), "call evaluate(..., resume=True)") from None
    summary = loads((run_dir / "summary.json").read_bytes(), source=str(run_dir))
    return Run(run_dir, summary)
