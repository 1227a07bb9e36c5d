"""A record's source hash says what the kernel was built from, not where the checkout sits: the same files at
another path give the same hash (a baseline saved on a laptop and re-saved on a CI runner does not churn);
different contents give different hashes."""

from vgprscope.compile.results import _deps_hash


def test_the_same_files_at_another_path_hash_the_same():
    here = {"/home/a/proj/kernels/baseline.py": "aa11", "/home/a/proj/kernels/_helpers.py": "bb22"}
    there = {"/runner/work/proj/kernels/_helpers.py": "bb22", "/runner/work/proj/kernels/baseline.py": "aa11"}
    assert _deps_hash(here) == _deps_hash(there) != ""


def test_another_content_or_another_file_hashes_differently():
    base = {"/p/kernels/baseline.py": "aa11"}
    assert _deps_hash(base) != _deps_hash({"/p/kernels/baseline.py": "aa12"})
    assert _deps_hash(base) != _deps_hash({"/p/kernels/remat_q.py": "aa11"})
    assert _deps_hash(None) == _deps_hash({}) == ""
