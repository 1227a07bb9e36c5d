"""A kernel source is one class (``vgprscope/sources/base.py``'s ``Source``, read from its keyword's value) and
one registry line (``vgprscope/library/registry.py``'s ``SOURCES``): the library's calls, the gate's
configuration and the CLI's ``Kernels`` bundle take its keyword without another module changing. Which
sources a selection uses ("the bundled variants, unless another source is given alone") is one function.

The toy source here yields rows that cannot compile (each with its reason): nothing is compiled, and the rows
show the keyword's value travelled from the call to the records.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

import vgprscope
from vgprscope.compile.task import RowInfo, Task
from vgprscope.core.errors import UsageError
from vgprscope.core.records import KernelIdentity, LaunchConfig
from vgprscope.library import registry
from vgprscope.sources.base import Reading, Source, Want


@dataclass(frozen=True)
class ToySource:
    """A source of the test's own: one row per arch, named after the value it was given."""

    value: str
    with_variants: bool
    label: ClassVar[str] = "toy"

    @classmethod
    def read(cls, value: Any, reading: Reading) -> ToySource:
        return cls(str(Path(value).name), reading.with_variants)

    def tasks(self, want: Want, engine: Any) -> list[Task]:
        identity = KernelIdentity(module="toy", qualname="toy_kernel", file=self.value, source_hash="")
        return [Task(None, arch, RowInfo(label=self.value, kernel="toy_kernel", config=LaunchConfig((), (), ()),
                                         identity=identity, source="toy", slot="only"),
                     f"toy: {self.value} has nothing to compile")
                for arch in want.archs]

    def names(self) -> list[str]:
        return [self.value]

    def files(self) -> dict[tuple[str, str], str]:
        return {}

    def empty(self) -> str | None:
        return None


@pytest.fixture
def toy(monkeypatch):
    """The toy source registered under the keyword ``toy`` (for this test only)."""
    monkeypatch.setitem(registry.SOURCES, "toy", ToySource)
    return "toy"


def test_a_source_defined_in_a_test_reaches_analyze_by_its_keyword(toy, tmp_path):
    """``analyze(toy=...)``: the keyword reaches the toy source, alone (no bundled variant compiles beside
    it), and its rows come back with their ``source`` and ``slot``."""
    result = vgprscope.analyze(toy=str(tmp_path / "t.toy"), arch=["gfx942", "sm_90"], cache=tmp_path / "c")
    rows = [(r.variant, r.arch, r.source, r.slot, r.status) for r in result.records]
    assert rows == [("t.toy", "gfx942", "toy", "only", "toy: t.toy has nothing to compile"),
                    ("t.toy", "sm_90", "toy", "only", "toy: t.toy has nothing to compile")]
    doc = json.loads(result.to_json())
    assert [(r["source"], r["slot"]) for r in doc["rows"]] == [("toy", "only"), ("toy", "only")]


def test_without_the_registry_line_the_keyword_is_refused(tmp_path):
    """The registry is what makes a keyword a source: unregistered, ``toy=`` is an unknown keyword."""
    with pytest.raises(UsageError, match="analyze\\(\\) got an unknown keyword 'toy'"):
        vgprscope.analyze(toy="t.toy", arch="gfx942")
    with pytest.raises(UsageError, match="compare\\(\\) got an unknown keyword 'toy'"):
        vgprscope.compare(toy="t.toy", arch="gfx942")


def test_a_source_defined_in_a_test_reaches_the_gate(toy, tmp_path):
    """The gate's configuration takes the registered keyword as a path relative to the file, and the set
    compiles it: ``baseline save`` gets the toy's rows (all refusals: nothing is written)."""
    from vgprscope.library.gate import GateRun, load_config

    config = tmp_path / "vgprscope.toml"
    config.write_text('toy = "sub/t.toy"\narchs = ["gfx942"]\n')
    cfg = load_config(config)
    assert cfg.set.source_paths() == {"toy": tmp_path / "sub" / "t.toy"}
    assert GateRun.from_config(cfg).described() == {"variants": [], "archs": ["gfx942"], "configs": [], "toy": "t.toy"}
    saved = vgprscope.baseline_save(config=config, cache=tmp_path / "c")
    assert [(e.variant, e.arch, e.slot, e.status) for e in saved.entries] == [
        ("t.toy", "gfx942", "only", "toy: t.toy has nothing to compile")]
    assert saved.written is None


def test_every_registered_source_answers_the_protocol():
    """Each registered type reads an absent value into a Source: label, tasks, names, files, empty."""
    assert set(registry.SOURCES) >= {"capture", "kernel_dir"}
    for keyword in registry.SOURCES:
        source = registry.source_type(keyword).read(None, Reading())
        assert isinstance(source, Source), keyword
        assert isinstance(source.label, str) and source.label
        assert isinstance(source.names(), list) and isinstance(source.files(), dict)
    assert registry.DEFAULT in registry.SOURCES


@pytest.mark.parametrize("keywords, variants, uses", [
    ({}, (), True),  # nothing named: the bundled variants
    ({"kernel_dir": "k"}, (), True),  # the default source's own keyword
    ({"capture": "c.json"}, (), False),  # a capture alone
    ({"capture": "c.json"}, ("baseline",), True),  # variants named beside it
    ({"capture": "c.json", "kernel_dir": "k"}, (), True),
    ({"capture": None}, (), True),  # not given
    ({"capture": []}, (), True),  # an empty list gives nothing
])
def test_variants_unless_another_source_alone(keywords, variants, uses):
    assert registry.uses_default(keywords, variants) is uses


def test_the_rule_is_one_function(monkeypatch):
    """The calls' selections, the gate's set and its description all ask ``registry.uses_default``: with it
    answering no, none of them compiles or describes the bundled variants."""
    from vgprscope.flashattn.source import VariantSource
    from vgprscope.gate.config import GateConfig
    from vgprscope.library.gate import GateRun
    from vgprscope.library.tasks import Selection

    assert isinstance(Selection.of((), (), ()).sources[0], VariantSource)
    run = GateRun.from_config(GateConfig())
    assert run.variants() and run.described()["variants"] == ["all"]
    monkeypatch.setattr(registry, "uses_default", lambda keywords, variants: False)
    assert Selection.of((), (), ()).sources == ()
    run = GateRun.from_config(GateConfig())
    assert run.variants() == [] and run.sources == ()
    assert run.described() == {"variants": [], "archs": list(GateConfig().set.archs), "configs": []}
    assert not any(hasattr(cls, "with_variants") for cls in (Selection, GateConfig, GateRun))


def test_the_cli_hands_every_source_option_to_the_library_by_name():
    """The ``Kernels`` bundle passes each of its fields by name: a source's option declared there reaches
    the registry's keyword of the same name (no other CLI change)."""
    from vgprscope.cli.options import Kernels

    names = {f.name for f in dataclasses.fields(Kernels)}
    assert names - {"variant", "arch"} <= set(registry.SOURCES)
    given = Kernels(**{n: f"value-{n}" for n in names}).library()
    assert given == {n: f"value-{n}" for n in names}


def test_the_gate_takes_a_source_as_a_path_only(toy):
    """The gate's set is files: a source given to ``check`` as an object is one line naming it."""
    with pytest.raises(UsageError, match="check: toy=3 is not allowed; the gate's sources are files"):
        vgprscope.check(toy=3)
