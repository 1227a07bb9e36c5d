"""Compare `vgprscope analyze --format json` of a capture with `cuobjdump -res-usage` of the cubins a GPU run
left in its Triton cache: registers and shared memory (cuobjdump's static SHARED plus Triton's dynamic
`shared` from the entry's metadata), kernel by kernel. Cubins of identical bytes count once (a compile
repeated under another cache key, in another process, leaves the same cubin twice). Prints one line per kernel and a total; exit 1 when
any differ or a cubin has no row (the GPU machine's check behind reports/inductor-capture-h100.md).

    python scripts/compare_cubins.py TRITON_CACHE_DIR ANALYZE_JSON
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def cuobjdump() -> str:
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump")


def cubin_usage(cache: Path) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    seen: set[str] = set()
    files = sorted(cache.rglob("*.cubin"))
    for cubin in files:
        digest = hashlib.sha256(cubin.read_bytes()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        meta = json.loads(cubin.with_suffix(".json").read_text())
        text = subprocess.run([cuobjdump(), "-res-usage", str(cubin)], capture_output=True, text=True,
                              check=True).stdout
        match = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+)", text)
        if match is None:
            raise SystemExit(f"{cubin}: no resource line in cuobjdump's output")
        out[meta["name"]].append((int(match[1]), int(match[3]) + int(meta.get("shared", 0))))
    print(f"{len(files)} cubins in {cache}, {len(seen)} distinct")
    return out


def analyzed(path: Path) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row in json.loads(path.read_text())["rows"]:
        u = row.get("usage")  # a row that cannot launch (over the shared-memory limit) keeps its counts
        if not u:
            out[row["kernel"]].append((-1, -1))
            continue
        out[row["kernel"]].append((u["regs"], u["shared_static"] + u["shared_dynamic"]))
    return out


def main() -> int:
    cubins, rows = cubin_usage(Path(sys.argv[1])), analyzed(Path(sys.argv[2]))
    equal = total = 0
    for name in sorted(set(cubins) | set(rows)):
        a, b = sorted(cubins.get(name, [])), sorted(rows.get(name, []))
        total += len(a)
        same = sum(min(a.count(x), b.count(x)) for x in set(a))
        equal += same
        print(f"{'=' if a == b else 'x'} {name}: cubins {a} analyze {b}")
    print(f"{equal} of {total} cubins equal to analyze's row (registers, shared memory)")
    return 0 if equal == total and sum(map(len, rows.values())) == total else 1


if __name__ == "__main__":
    sys.exit(main())
