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
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

BUDGETS = ("spills", "max_registers", "occupancy_at_least", "max_lds", "max_scratch")
DEFAULT_ARCHS = ("gfx942", "sm_90")
_KEY = pytest.StashKey["Budget | None"]()
_REPORT = pytest.StashKey[list]()  # (the test's place in the collection, a report row)
_POSITIONS = pytest.StashKey[dict]()
_WRONG = pytest.StashKey[str]()  # a test's malformed budget, said at its setup
_WORKER_ROWS = "vgprscope_report_rows"  # a pytest-xdist worker's rows, in its ``workeroutput``


@dataclass(frozen=True)
class Budget:
    """What a test's kernels may cost on each arch (None: not limited)."""

    arch: tuple[str, ...] = ()
    limits: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, arch: Iterable[str] | str | None = None, **limits: Any) -> Budget:
        """A budget from a marker's or the fixture's keywords; BudgetError (one line) when one is wrong."""
        unknown = sorted(set(limits) - set(BUDGETS))
        if unknown:
            raise BudgetError(f"budget {unknown[0]!r} is not allowed; allowed: {', '.join(BUDGETS)}")
        for name, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise BudgetError(f"budget {name}={value!r} is not allowed; allowed: a whole number >= 0")
        if arch is None or isinstance(arch, str):
            archs: tuple[str, ...] = (arch,) if arch else ()
        elif isinstance(arch, (list, tuple)) and all(isinstance(a, str) for a in arch):
            archs = tuple(arch)
        else:
            raise BudgetError(f"budget arch={arch!r} is not allowed; allowed: an arch name or a list of them "
                              f"(arch=[\"gfx942\", \"sm_90\"])")
        check_archs(archs, "budget arch=")
        return cls(archs, tuple(sorted(limits.items())))


class BudgetError(ValueError):
    """A budget or option the plugin cannot take: one line, naming what is wrong and what is allowed."""


def check_archs(archs: Iterable[str], what: str) -> None:
    """Each arch a compile target of the installed Triton (vgprscope's arch table, read only when one is named)."""
    archs = list(archs)
    if not archs:
        return
    from ..core.archs import ARCHS, get_arch
    from ..core.errors import UsageError

    targets = [name for name, a in ARCHS.items() if a.triton_target]
    for name in archs:
        try:
            known = get_arch(name)
        except UsageError:
            known = None
        if known is None or not known.triton_target:
            raise BudgetError(f"{what}{name!r}: not an arch Triton compiles for; allowed: {', '.join(targets)}")


@dataclass
class BudgetFixture:
    """The ``vgprscope`` fixture: ``vgprscope.budget(arch=[...], spills=0, ...)`` inside a test."""

    node: pytest.Item
    declared: list[Budget] = field(default_factory=list)

    def budget(self, arch: Iterable[str] | str | None = None, **limits: Any) -> None:
        try:
            self.declared.append(Budget.of(arch, **limits))
        except BudgetError as exc:  # the test's own mistake: its failure, in one line
            raise pytest.fail.Exception(f"vgprscope: {exc}", pytrace=False) from None
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
    # the options are checked before any test runs: a wrong one is one line (exit 4), not a traceback per test
    # or after the whole suite
    try:
        check_archs(config.getoption("vgprscope_arch") or (), "--vgprscope-arch ")
    except BudgetError as exc:
        raise pytest.UsageError(f"vgprscope: {exc}") from None
    report = config.getoption("vgprscope_report")
    if report and not hasattr(config, "workerinput"):  # the controller writes it (pytest-xdist)
        from ..core.errors import OutputError
        from ..core.fsutil import check_writable

        try:
            check_writable(report)
        except OutputError as exc:
            raise pytest.UsageError(f"vgprscope: --vgprscope-report: {exc}") from None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every ``@pytest.mark.vgprscope`` budget checked as the tests are collected: a wrong one is that test's
    error at its setup, one line, before it runs (and the same under pytest-xdist, whose workers collect)."""
    for item in items:
        try:
            _marker_budget(item)
        except BudgetError as exc:
            item.stash[_WRONG] = f"vgprscope: {exc}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if (wrong := item.stash.get(_WRONG, None)) is not None:
        raise pytest.fail.Exception(wrong, pytrace=False)


@pytest.fixture
def vgprscope(request: pytest.FixtureRequest) -> BudgetFixture:
    """Declare a register budget from inside the test: ``vgprscope.budget(arch=["gfx942"], spills=0)``."""
    return BudgetFixture(request.node)


def _marker_budget(item: pytest.Item) -> Budget | None:
    marker = item.get_closest_marker("vgprscope")
    if marker is None:
        return None
    if marker.args:
        raise BudgetError(f"@pytest.mark.vgprscope{marker.args!r} is not allowed; it takes keywords only: "
                          f"arch=[...], {', '.join(f'{b}=N' for b in BUDGETS)}")
    return Budget.of(**marker.kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    marked = _marker_budget(item)
    wants_fixture = "vgprscope" in getattr(item, "fixturenames", ())
    report = item.config.getoption("vgprscope_report")
    if marked is None and not wants_fixture and not report:
        return (yield)
    from ..core.errors import NoGpuDriverError
    from ..library.session import capture

    session = capture()
    try:
        with session:
            result = yield
    except NoGpuDriverError as exc:  # what to do about it, in one line: no traceback through the plugin
        raise pytest.fail.Exception(f"vgprscope: {item.nodeid}: {exc}", pytrace=False) from None
    budget = item.stash.get(_KEY, None) or marked
    archs = list(budget.arch if budget and budget.arch else item.config.getoption("vgprscope_arch") or DEFAULT_ARCHS)
    records = _compiled(session, archs) if session.capture.launches else []
    if report:
        index = _position(item)
        item.config.stash[_REPORT].extend((index, _report_row(item.nodeid, r)) for r in records)
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
        elif name == "occupancy_at_least" and value < limit:
            out.append(f"  {_where(record)}: occupancy {value}, budget at least {limit}")
        elif name != "occupancy_at_least" and value > limit:
            out.append(f"  {_where(record)}: {name.replace('_', ' ')} {value}, budget {limit}")
    return out


def _position(item: pytest.Item) -> int:
    """The test's place in the collection (every pytest-xdist worker collects the same, in the same order):
    the report's rows in the order a serial run gives, however the tests were spread over workers."""
    positions = item.config.stash.get(_POSITIONS, None)
    if positions is None or item.nodeid not in positions:
        positions = {it.nodeid: i for i, it in enumerate(item.session.items)}
        item.config.stash[_POSITIONS] = positions
    return positions.get(item.nodeid, len(positions))


def _report_row(test: str, record: Any) -> dict[str, Any]:
    return {"test": test, "kernel": record.kernel, "module": record.variant, "arch": record.arch,
            "config": _where(record).rsplit(" (", 1)[-1].rstrip(")"), "status": record.status,
            **measures(record)}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, in the controller: a worker's report rows, sent when it finished (``workeroutput``)."""
    rows = getattr(node, "workeroutput", {}).get(_WORKER_ROWS)
    if rows:
        node.config.stash[_REPORT].extend((int(i), row) for i, row in json.loads(rows))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The report, written once and whole: by the controller under pytest-xdist (each worker's rows sent to
    it), else by this process."""
    config = session.config
    path = config.getoption("vgprscope_report")
    if not path:
        return
    rows = config.stash.get(_REPORT, [])
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: its rows go to the controller
        config.workeroutput[_WORKER_ROWS] = json.dumps(rows)
        return
    from ..core.errors import OutputError
    from ..core.fsutil import atomic_write

    ordered = [row for _, row in sorted(rows, key=lambda pair: pair[0])]
    doc = {"schema": "vgprscope-pytest-report", "schema_version": 1, "rows": ordered}
    try:
        atomic_write(path, json.dumps(doc, indent=1) + "\n")
    except (OutputError, OSError) as exc:  # changed while the tests ran: one line, the run fails
        why = exc if isinstance(exc, OutputError) else f"cannot write {path}: {exc.strerror or exc}"
        config.get_terminal_writer().line(f"ERROR: vgprscope: --vgprscope-report: {why}", red=True)
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
