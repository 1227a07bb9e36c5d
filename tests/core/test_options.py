"""Each launch option is declared once, a row of ``core/options.py`` (the bundled variants' tile fields: rows of
``flashattn/tiles.py``); the library's signatures, the CLI's options, the config's fields, the backends'
options, the grid parser and its messages are derived from the rows. A toy option added as one row reaches
every one of them. The compilers' warnings a run may ask for (``--warn-on-spills``) are rows too."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import subprocess
import sys

import pytest

import vgprscope
from vgprscope.backends import BACKENDS, CUDA, HIP
from vgprscope.backends.base import CompilerWarnings, warning_options
from vgprscope.cli.options import Warnings
from vgprscope.core.errors import UsageError
from vgprscope.core.options import COMPILER_WARNINGS, LAUNCH_OPTIONS
from vgprscope.flashattn.config import AttentionConfig, ConfigRequest
from vgprscope.library.grid import grid_fields

CALLS = ("analyze", "compare", "frontier", "explain", "diff")


def test_the_library_signatures_take_the_table():
    """Every call that builds a grid takes each row by its name, keyword-only, None by default, after
    ``arch``, in the rows' order; the frontier all but the occupancy knobs it sets itself."""
    for name in CALLS:
        params = inspect.signature(getattr(vgprscope, name)).parameters
        want = [o.name for o in grid_fields() if not (name == "frontier" and o.occupancy_knob)]
        names = list(params)
        at = names.index("arch") + 1
        assert names[at:at + len(want)] == want, name
        assert all(params[n].kind is inspect.Parameter.KEYWORD_ONLY and params[n].default is None for n in want)


def test_the_configs_and_backends_take_the_table():
    for cls in (AttentionConfig, ConfigRequest):
        names = [f.name for f in dataclasses.fields(cls)]
        assert names[names.index("causal") + 1:names.index("extra")] == [o.name for o in LAUNCH_OPTIONS]
    for backend in BACKENDS:
        assert backend.facts.options == tuple(o.name for o in LAUNCH_OPTIONS if o.vendor is backend.vendor)
        assert backend.facts.knob == next(o.name for o in LAUNCH_OPTIONS if o.vendor is backend.vendor
                                          and o.occupancy_knob)


def test_the_compiler_warnings_are_the_table():
    """analyze takes each warning row by its name, keyword-only, after ``loops``, not asked by default; the CLI's
    bundle has its option; each backend asks its own vendor's compiler only, its text joined to the job's own."""
    params = inspect.signature(vgprscope.analyze).parameters
    names = list(params)
    at = names.index("loops") + 1
    assert names[at:at + len(COMPILER_WARNINGS)] == [w.name for w in COMPILER_WARNINGS]
    assert [params[w.name].default for w in COMPILER_WARNINGS] == [False, None]
    assert [f.name for f in dataclasses.fields(Warnings)] == [w.name for w in COMPILER_WARNINGS]
    asked = CompilerWarnings((("warn_on_spills", True), ("warn_stack_size", 512)))
    assert warning_options(CUDA, asked, {"ptx_options": "-v --warn-on-spills"}) == {"ptx_options": "-v --warn-on-spills"}
    assert warning_options(CUDA, asked, {}) == {"ptx_options": "--warn-on-spills"}
    assert warning_options(HIP, asked, {"llvm_fn_attrs": (("a", "1"), ("warn-stack-size", "64"))}) == {
        "llvm_fn_attrs": "a=1,warn-stack-size=512"}
    assert warning_options(HIP, CompilerWarnings((("warn_on_spills", True),)), {}) == {}


@pytest.mark.parametrize("given, message", [
    ({"warn_on_spills": 1}, "warn_on_spills=1 is not allowed; allowed: True or False"),
    ({"warn_stack_size": -1}, "warn_stack_size=-1 is not allowed; allowed: a number of bytes, 0 to 4294967295"),
    ({"warn_stack_size": True}, "warn_stack_size=True is not allowed; allowed: a number of bytes, 0 to 4294967295"),
])
def test_a_warning_the_row_does_not_take_is_refused_in_its_words(given, message):
    with pytest.raises(UsageError) as err:
        vgprscope.analyze(variant="baseline", arch="gfx942", **given)
    assert str(err.value) == message


_TOY = """
import dataclasses, inspect, json, sys
from vgprscope.core import options
from vgprscope.core.archs import Vendor

options.LAUNCH_OPTIONS += (options.Option("toy_knob", "a toy option (1 or 3)", Vendor.AMD, choices=(1, 3),
                                          choices_words="1 or 3", label="toy"),)
options.COMPILER_WARNINGS += (options.CompilerWarning("warn_toy", "a toy warning", Vendor.NVIDIA, type=bool,
                                                      joins="ptx_options", text="--toy"),)

import vgprscope
from typer.testing import CliRunner
from vgprscope.flashattn.config import AttentionConfig, ConfigRequest, check_backend_options
from vgprscope.flashattn.variants import load_variants, resolve_config
from vgprscope.backends import HIP, CUDA
from vgprscope.cli.app import _register, app
from vgprscope.core.archs import get_arch
from vgprscope.core.errors import UsageError
from vgprscope.library import selection
from vgprscope.sources.capture import launch_fields

_register()
out = {}
out["signature"] = all("toy_knob" in inspect.signature(getattr(vgprscope, n)).parameters
                       for n in ("analyze", "compare", "frontier", "explain", "diff"))
out["help"] = "--toy-knob" in CliRunner().invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"}).output
out["fields"] = [f.name for f in dataclasses.fields(ConfigRequest)][-3]
out["backends"] = ["toy_knob" in HIP.facts.options, "toy_knob" in CUDA.facts.options]
requests = selection.requests({"toy_knob": [1, 3]})
out["grid"] = [r.toy_knob for r in requests]
try:
    selection.requests({"toy_knob": 2})
except UsageError as exc:
    out["refused"] = str(exc)
try:
    check_backend_options(requests[0], [get_arch("sm_90")])
except UsageError as exc:
    out["vendor"] = str(exc)
variant = load_variants()["baseline"]
out["resolved"] = [resolve_config(variant, get_arch(a), requests[1]).toy_knob for a in ("gfx942", "sm_90")]
out["label"] = AttentionConfig(block_m=64, block_n=64, head_dim=64, toy_knob=3).short()
out["capture"] = "toy_knob" in launch_fields()
from vgprscope.backends.base import CompilerWarnings, warning_options
out["warning"] = ["warn_toy" in inspect.signature(vgprscope.analyze).parameters,
                  "--warn-toy" in CliRunner().invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"}).output,
                  warning_options(CUDA, CompilerWarnings((("warn_toy", True),)), {}),
                  warning_options(HIP, CompilerWarnings((("warn_toy", True),)), {})]
try:
    vgprscope.analyze(variant="baseline", arch="sm_90", warn_toy="yes")
except UsageError as exc:
    out["warning_refused"] = str(exc)
print(json.dumps(out))
"""


def test_a_toy_option_is_one_row():
    """In a fresh process (the derived surfaces are built as their modules load): one row reaches the
    library's signatures, the CLI's help, the request's fields, its vendor's backend, the grid and its
    messages, the resolved config (on its vendor's archs only), the config's label and the capture's
    overrides; one compiler warning's row reaches analyze's signature, its CLI option, its vendor's compiles
    only, and its message."""
    done = subprocess.run([sys.executable, "-c", _TOY], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TRITON_INTERPRET": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {
        "signature": True, "help": True, "fields": "toy_knob", "backends": [True, False], "grid": [1, 3],
        "refused": "toy_knob=2 is not allowed; allowed: 1 or 3",
        "vendor": "--toy-knob applies to AMD archs only, and none was selected",
        "resolved": [3, None], "label": "64x64 d64 fp16 w4 s1 toy3", "capture": True,
        "warning": [True, True, {"ptx_options": "--toy"}, {}],
        "warning_refused": "warn_toy='yes' is not allowed; allowed: True or False",
    }
