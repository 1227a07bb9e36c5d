"""Arithmetic over named quantities, as the variants' ``VARIANT`` declarations write their formulas.

A declaration is read with ``ast.literal_eval`` (no kernel file is imported to list or model a variant), so a
formula is a string such as ``"Nq*D*e + Tq*2*(rho*Nk*D*e)"``: numbers, names of the quantities the caller
defines, ``+ - * /``, unary minus, parentheses and ``min`` / ``max`` / ``ceil``. Nothing else parses (no
attribute, no other call, no ``eval``). Python's own operators compute it, in the order the text gives,
so a formula evaluates to exactly the float the same arithmetic written in Python gives.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import cache

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
}
_UNARY: dict[type, Callable[[float], float]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max, "ceil": math.ceil}
ALLOWED = "numbers, names, + - * /, parentheses, min(), max(), ceil()"


class ExprError(ValueError):
    """A formula that is not arithmetic over known names (the message says what is wrong)."""


@dataclass(frozen=True)
class Expr:
    """A parsed formula: ``names`` it reads, evaluated with ``eval(values)``."""

    text: str
    tree: ast.expr
    names: frozenset[str]

    def eval(self, values: Mapping[str, float]) -> float:
        return _eval(self.tree, values)


def _eval(node: ast.expr, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, values))
    # parse() admits nothing else: a call of one of FUNCTIONS
    return FUNCTIONS[node.func.id](*(_eval(a, values) for a in node.args))  # type: ignore[attr-defined]


def _check(node: ast.AST, text: str) -> set[str]:
    """The names a formula reads; ExprError on anything that is not plain arithmetic."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExprError(f"{text!r}: {node.value!r} is not a number; allowed: {ALLOWED}")
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _check(node.left, text) | _check(node.right, text)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(node.operand, text)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
            and not node.keywords and node.args):
        return set().union(*(_check(a, text) for a in node.args))
    what = ast.get_source_segment(text, node) or type(node).__name__
    raise ExprError(f"{text!r}: {what!r} is not allowed; allowed: {ALLOWED}")


@cache
def _parse(text: str) -> Expr:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"{text!r} is not a formula ({exc.msg}); allowed: {ALLOWED}") from None
    return Expr(text, tree, frozenset(_check(tree, text.strip())))


def parse(value: str | int | float, known: Collection[str]) -> Expr:
    """A formula (or a plain number) whose names are all in ``known``."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ExprError(f"{value!r} is neither a number nor a formula; allowed: {ALLOWED}")
    expr = _parse(value if isinstance(value, str) else repr(value))
    unknown = sorted(expr.names - set(known))
    if unknown:
        raise ExprError(f"{expr.text!r} reads {unknown[0]!r}, which is not defined here; names: "
                        f"{', '.join(sorted(known))}")
    return expr
