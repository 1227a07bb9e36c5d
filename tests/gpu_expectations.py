"""Which GPU test cases are expected not to launch, declared before the run, and the rule the GPU tests
apply: an out-of-resources failure (a default config over the GPU's shared memory or registers) fails its
test unless its case is declared here with the reason; then it is an expected failure. A declared case that
launches fails as well, so the table never holds a case that fits."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

import pytest

T = TypeVar("T")

# (test, variant, shape, dtype) -> why its default config cannot launch on the GPUs the tests run on
# (H100, H200). None today: every bundled default fits both (reports/gpu-tests-h100.log).
NOT_EXPECTED_TO_FIT: dict[Hashable, str] = {}


def launched(run: Callable[[], T], case: Hashable, expected: Mapping[Hashable, str] = NOT_EXPECTED_TO_FIT) -> T:
    """``run()``'s result; an out-of-resources failure fails the test, or is an expected failure for a case
    ``expected`` declares."""
    from triton.runtime.errors import OutOfResources

    reason = expected.get(case)
    try:
        out = run()
    except OutOfResources as exc:
        if reason is None:
            pytest.fail(f"{case}: does not fit this GPU ({exc}); a case expected not to fit is declared in "
                        "tests/gpu_expectations.py with its reason")
        pytest.xfail(f"{case}: expected not to fit ({reason}): {exc}")
    if reason is not None:
        pytest.fail(f"{case}: declared not to fit ({reason}) but launched: remove it from NOT_EXPECTED_TO_FIT")
    return out
