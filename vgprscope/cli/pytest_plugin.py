"""vgprscope's pytest plugin (entry point ``pytest11``): register, spill and occupancy budgets per test.

A test states what its kernels may cost, for archs nobody runs it on::

    @pytest.mark.vgprscope(arch=["gfx942", "sm_90"], spills=0, occupancy_at_least=2, max_registers=128)
    def test_my_op():
        my_op(x)          # every Triton kernel it launches (on a GPU, or under TRITON_INTERPRET=1)

or inside the test, through the ``vgprscope`` fixture: ``vgprscope.budget(arch=["gfx942"], spills=0)``.
Every kernel the test launches is recorded (``vgprscope.capture()``), compiled for each arch GPU-free, and
checked; a kernel over a budget fails the test with one line per kernel x arch naming the config, the number
and the budget. ``pytest --vgprscope-report FILE`` writes what every test's kernels cost (JSON), with or
without budgets (``--vgprscope-arch`` sets the archs of tests that name none).

Budgets, each per kernel x arch x config:
- ``spills``: spilled registers per lane (AMD: VGPR + SGPR spills) or per thread (NVIDIA: spill-store bytes
  / 4, the registers' worth of 4-byte spill stores); ``spills=0`` means no spill at all;
- ``max_registers``: VGPRs (AMD, the unified count occupancy sees) or registers per thread (NVIDIA);
- ``occupancy_at_least``: waves per SIMD (AMD) or blocks per SM (NVIDIA);
- ``max_lds``: LDS (AMD) or shared memory (NVIDIA) bytes per workgroup / block;
- ``max_scratch``: scratch bytes per lane (AMD) or stack-frame bytes per thread (NVIDIA).

Nothing of vgprscope beyond this module is imported unless a test asks for a budget or a report is
written: a test run that does not use it pays nothing for it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

BUDGETS = ("spills", "max_registers", "occupancy_at_least", "max_lds", "max_scratch")
DEFAULT_ARCHS = ("gfx942", "sm_90")
_KEY = pytest.StashKey["Budget | None"]()
_REPORT = pytest.StashKey[list]()


@dataclass(frozen=True)
class Budget:
    """What a test's kernels may cost on each arch (None: not limited)."""

    arch: tuple[str, ...] = ()
    limits: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, arch: Iterable[str] | str | None = None, **limits: Any) -> Budget:
        unknown = sorted(set(limits) - set(BUDGETS))
        if unknown:
            raise pytest.UsageError(f"vgprscope budget {unknown[0]!r} is not allowed; allowed: {', '.join(BUDGETS)}")
        for name, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise pytest.UsageError(f"vgprscope budget {name}={value!r} must be a whole number >= 0")
        archs = (arch,) if isinstance(arch, str) else tuple(arch or ())
        return cls(archs, tuple(sorted(limits.items())))


@dataclass
class BudgetFixture:
    """The ``vgprscope`` fixture: ``vgprscope.budget(arch=[...], spills=0, ...)`` inside a test."""

    node: pytest.Item
    declared: list[Budget] = field(default_factory=list)

    def budget(self, arch: Iterable[str] | str | None = None, **limits: Any) -> None:
        self.declared.append(Budget.of(arch, **limits))
        self.node.stash[_KEY] = self.declared[-1]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vgprscope", "register budgets of Triton kernels")
    group.addoption("--vgprscope-report", metavar="FILE", default=None,
                    help="write what every test's Triton kernels cost (JSON): registers, spills, LDS, occupancy")
    group.addoption("--vgprscope-arch", action="append", default=None, metavar="ARCH",
                    help=f"archs for tests whose budget names none, and for the report (default: "
                         f"{', '.join(DEFAULT_ARCHS)}); repeatable")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vgprscope(arch=[...], spills=, max_registers=, occupancy_at_least=, max_lds=, "
                                       "max_scratch=): what each Triton kernel the test launches may cost per arch")
    config.stash[_REPORT] = []


@pytest.fixture
def vgprscope(request: pytest.FixtureRequest) -> BudgetFixture:
    """Declare a register budget from inside the test: ``vgprscope.budget(arch=["gfx942"], spills=0)``."""
    return BudgetFixture(request.node)


def _marker_budget(item: pytest.Item) -> Budget | None:
    marker = item.get_closest_marker("vgprscope")
    if marker is None:
        return None
    if marker.args:
        raise pytest.UsageError("@pytest.mark.vgprscope takes keywords only: arch=[...], spills=0, ...")
    return Budget.of(**marker.kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    marked = _marker_budget(item)
    wants_fixture = "vgprscope" in getattr(item, "fixturenames", ())
    report = item.config.getoption("vgprscope_report")
    if marked is None and not wants_fixture and not report:
        return (yield)
    from ..library.session import capture

    session = capture()
    with session:
        result = yield
    budget = item.stash.get(_KEY, None) or marked
    archs = list(budget.arch if budget and budget.arch else item.config.getoption("vgprscope_arch") or DEFAULT_ARCHS)
    records = _compiled(session, archs) if session.capture.launches else []
    if report:
        item.config.stash[_REPORT].extend(_report_row(item.nodeid, r) for r in records)
    if budget is not None:
        if not session.capture.launches:
            raise pytest.fail.Exception(f"vgprscope: {item.nodeid} launched no Triton kernel to hold to its budget"
                                        + _hint(session), pytrace=False)
        over = [line for r in records for line in _over(r, dict(budget.limits))]
        if over:
            raise pytest.fail.Exception("vgprscope budget exceeded:\n" + "\n".join(over), pytrace=False)
    return result


def _hint(session: Any) -> str:
    if "no-gpu-driver" in session.notes:
        return " (Triton found no GPU: set TRITON_INTERPRET=1 before the kernels are imported)"
    return ""


def _compiled(session: Any, archs: list[str]) -> list[Any]:
    return list(session.analyze(arch=archs).records)


def measures(record: Any) -> dict[str, int | None]:
    """A record's numbers in the budgets' terms (None: not known, as for a row that did not compile)."""
    u, occ = record.usage, record.occupancy
    if u is None:
        return dict.fromkeys(BUDGETS)
    amd = hasattr(u, "vgpr_total")
    if amd:
        spills: int | None = u.vgpr_spill + u.sgpr_spill
    else:
        spills = None if u.spill_store_bytes is None else u.spill_store_bytes // 4
    return {"spills": spills,
            "max_registers": u.vgpr_total if amd else u.regs,
            "occupancy_at_least": occ.value if occ is not None else None,
            "max_lds": u.lds_bytes if amd else u.shared_bytes,
            "max_scratch": u.scratch_bytes if amd else u.stack_bytes}


def _where(record: Any) -> str:
    config = getattr(record.config, "short", None)
    text = config() if callable(config) else str(record.config)
    return f"{record.variant}.{record.kernel} on {record.arch} ({text})"


def _over(record: Any, limits: dict[str, int]) -> list[str]:
    if not record.ok:
        return [f"  {_where(record)}: did not compile: {record.status}"] if limits else []
    have = measures(record)
    out = []
    for name, limit in sorted(limits.items()):
        value = have[name]
        if value is None:
            out.append(f"  {_where(record)}: {name} unknown (the compiler's output does not say), budget {limit}")
        elif (value < limit) if name == "occupancy_at_least" else (value > limit):
            out.append(f"  {_where(record)}: {name.replace('_', ' ')} {value}, budget {limit}")
    return out


def _report_row(test: str, record: Any) -> dict[str, Any]:
    return {"test": test, "kernel": record.kernel, "module": record.variant, "arch": record.arch,
            "config": _where(record).rsplit(" (", 1)[-1].rstrip(")"), "status": record.status,
            **measures(record)}


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("vgprscope_report")
    if not path:
        return
    rows = session.config.stash.get(_REPORT, [])
    target = Path(path)
    if not target.parent.is_dir():
        raise pytest.UsageError(f"--vgprscope-report {path}: directory {target.parent} does not exist")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"schema": "vgprscope-pytest-report", "schema_version": 1, "rows": rows}, indent=1)
                   + "\n")
    os.replace(tmp, target)
