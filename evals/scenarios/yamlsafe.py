"""Safe YAML with line numbers: every value's JSON pointer maps to its source line.

Built on PyYAML's SafeLoader node graph (never ``yaml.load``), with the checks a
file from a user needs: UTF-8 text, a size limit, duplicate mapping keys refused
(PyYAML would silently keep the last), string keys only, and a cap on how many
values a document may expand to, so an alias bomb ("billion laughs") is an error,
not an out-of-memory. A timestamp written plainly (``date: 2026-11-01``) stays the
text it is written as: no packproof field is a date object, and SafeLoader's own
resolver would make it one that no JSON or schema check can take.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from packproof.packer.errors import InputError, pointer

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_INT_DIGITS", "MAX_NODES", "LineMap", "load_yaml"]

MAX_BYTES: Final = 4 * 1024 * 1024
MAX_NODES: Final = 500_000
MAX_DEPTH: Final = 64  # nesting levels; packproof's formats need fewer than 10
# An integer of more digits is no number a format of packproof's takes (the largest
# float is about 1.8e308): refused when read, with its line, rather than failing
# where it is used (ValueError past Python's 4300-digit limit when it is printed,
# OverflowError when it becomes a float), whether written in decimal or hex.
MAX_INT_DIGITS: Final = 300
_INT_LIMIT: Final = 10**MAX_INT_DIGITS
_DECIMAL: Final = re.compile(r"[-+]?[0-9][0-9_]*")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_PLAIN: Final = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_MERGE: Final = "tag:yaml.org,2002:merge"
_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"


class _TextTimestamps(yaml.SafeLoader):
    """SafeLoader without its implicit timestamp rule: ``2026-11-01`` resolves to
    a string, as every YAML 1.2 loader reads it (an explicit ``!!timestamp`` tag
    still makes a date, which :class:`_Builder` refuses)."""


_TextTimestamps.yaml_implicit_resolvers = {  # its own copy: SafeLoader's is left as it is
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class LineMap:
    """JSON pointer -> 1-based line of the value in the source file."""

    source: str
    lines: dict[str, int] = field(default_factory=dict)

    def line(self, where: str) -> int:
        """The line of ``where`` or of its nearest ancestor that has one."""
        while True:
            if where in self.lines:
                return self.lines[where]
            if not where or where == "/":
                return 1
            where = where.rsplit("/", 1)[0]

    def error(self, where: str, message: str, **detail: Any) -> InputError:
        """An error naming file, line and pointer."""
        return InputError(
            f"line {self.line(where)} {where or '/'}", message, source=self.source, **detail
        )


class _Builder:
    def __init__(self, linemap: LineMap, max_nodes: int) -> None:
        self.linemap = linemap
        self.max_nodes = max_nodes
        self.count = 0
        self.scalars = yaml.SafeLoader("")  # only its scalar constructors are used

    def build(self, node: yaml.Node, where: str) -> Any:
        self.count += 1
        if self.count > self.max_nodes:
            raise InputError(
                f"line {node.start_mark.line + 1}",
                f"document expands to more than {self.max_nodes} values (an alias bomb?)",
                source=self.linemap.source,
            )
        if where.count("/") > MAX_DEPTH:
            raise self._err(node, where, f"nested deeper than {MAX_DEPTH} levels")
        self.linemap.lines[where or "/"] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.tag not in _PLAIN:
            raise self._err(
                node,
                where,
                "unsupported YAML tag",
                expected="a plain mapping or list",
                found=node.tag,
            )
        if isinstance(node, yaml.MappingNode):
            explicit: set[str] = set()
            for key_node, _ in node.value:  # duplicates among the keys written here
                if key_node.tag == _MERGE:
                    continue
                key = self._key(key_node, where)
                if key in explicit:
                    raise self._err(key_node, pointer_join(where, key), f"duplicate key {key!r}")
                explicit.add(key)
            self.scalars.flatten_mapping(node)  # "<<" merge keys first, written keys win
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self._key(key_node, where)
                out[key] = self.build(value_node, pointer_join(where, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, f"{where}/{i}") for i, item in enumerate(node.value)]
        try:
            value = self.scalars.construct_object(node, deep=True)
        except ValueError:  # a decimal integer past Python's 4300-digit limit
            if not _DECIMAL.fullmatch(str(node.value)):
                raise
            raise self._too_long(node, where, sum(c.isdigit() for c in str(node.value))) from None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _INT_LIMIT:
            raise self._too_long(node, where, _digits(value))
        if isinstance(value, str) and _SURROGATE.search(value):
            raise self._err(
                node, where, "a lone surrogate is not Unicode text", expected="text", found=value
            )
        if isinstance(value, bytes | set) or type(value).__module__ == "datetime":
            raise self._err(
                node,
                where,
                "unsupported YAML type",
                expected="a string, number, boolean or null",
                found=type(value).__name__,
            )
        return value

    def _key(self, node: yaml.Node, where: str) -> str:
        key = self.scalars.construct_object(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(key, str):
            raise self._err(
                node,
                where,
                "mapping keys must be strings",
                expected="a string key",
                found=key if key is not None else "a collection",
            )
        return key

    def _too_long(self, node: yaml.Node, where: str, digits: int) -> InputError:
        return self._err(
            node,
            where,
            "integer too large to be a number",
            expected=f"at most {MAX_INT_DIGITS} digits",
            found=f"{digits} digits",
        )

    def _err(self, node: yaml.Node, where: str, message: str, **detail: Any) -> InputError:
        return InputError(
            f"line {node.start_mark.line + 1} {where or '/'}",
            message,
            source=self.linemap.source,
            **detail,
        )


def _digits(value: int) -> int:
    """How many decimal digits ``value`` has, without printing it (past 4300
    digits Python will not): from its size, exact up to the one digit of a power
    of ten's rounding."""
    digits = math.floor((abs(value).bit_length() - 1) * math.log10(2)) + 1
    return digits + int(abs(value) >= 10**digits)


def pointer_join(base: str, key: str) -> str:
    return base + pointer(key)


def load_yaml(
    path: Path,
    *,
    display: str | None = None,
    max_bytes: int = MAX_BYTES,
    max_nodes: int = MAX_NODES,
) -> tuple[Any, LineMap]:
    """Parse one YAML document from ``path`` safely; errors are one-line
    :class:`InputError` naming the file and line."""
    source = display or str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(
                "",
                f"file too large: {size} bytes",
                expected=f"at most {max_bytes} bytes",
                found=size,
                source=source,
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"line {line}", f"not UTF-8 text (byte {exc.start})", source=source
        ) from None
    linemap = LineMap(source)
    try:
        node = yaml.compose(text, Loader=_TextTimestamps)
    except RecursionError:
        raise InputError("", f"nested deeper than {MAX_DEPTH} levels", source=source) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise InputError(f"line {line}", f"invalid YAML: {problem}", source=source) from None
    except yaml.YAMLError as exc:
        raise InputError("", f"invalid YAML: {' '.join(str(exc).split())}", source=source) from None
    if node is None:
        return None, linemap
    try:
        return _Builder(linemap, max_nodes).build(node, ""), linemap
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark else 1
        raise InputError(f"line {line}", f"invalid YAML: {exc.problem}", source=source) from None
