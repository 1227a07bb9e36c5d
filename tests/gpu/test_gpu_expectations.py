"""The GPU tests' rule for a kernel that does not fit the GPU (tests/gpu_expectations.py), checked without a
GPU: an out-of-resources failure fails its test unless the case was declared, before the run, as expected not
to fit (then it is an expected failure, and a declared case that launches fails too)."""

from __future__ import annotations

import pytest
from gpu_expectations import launched
from triton.runtime.errors import OutOfResources

CASE = ("numerics", "remat-q", (1, 2, 300, 4100, 256, False), "fp16")


def _too_big():
    raise OutOfResources(262144, 232448, "shared memory")


def test_an_undeclared_out_of_resources_fails_the_test():
    with pytest.raises(pytest.fail.Exception, match="does not fit this GPU .*shared memory, Required: 262144"):
        launched(_too_big, CASE, {})


def test_a_case_declared_not_to_fit_is_an_expected_failure_with_its_reason():
    with pytest.raises(pytest.xfail.Exception, match="expected not to fit \\(256 KB of K/V tiles\\)"):
        launched(_too_big, CASE, {CASE: "256 KB of K/V tiles"})


def test_a_case_declared_not_to_fit_that_launches_fails():
    with pytest.raises(pytest.fail.Exception, match="declared not to fit .* but launched"):
        launched(lambda: "ran", CASE, {CASE: "256 KB of K/V tiles"})


def test_a_case_that_fits_returns_what_it_ran():
    assert launched(lambda: "ran", CASE, {}) == "ran"
