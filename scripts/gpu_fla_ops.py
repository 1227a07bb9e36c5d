"""fla-core 0.6.0's chunked ops, forward, on a CUDA GPU (bf16, B2 T256 H4 D64): the command a capture of
fla's specialisations is checked against the JIT's own compiles with (.ci/gpu_capture_fla.sh).

With VGPRSCOPE_JIT_KEYS=FILE it writes, at exit, every specialisation key the JIT compiled (each
JITFunction's kernel cache, per kernel), so a capture's set of specialisations can be compared with the
JIT's one by one."""
import atexit
import gc
import json
import os

import torch

B, T, H, K, V = 2, 256, 4, 64, 64
dt = torch.bfloat16
dev = "cuda"


def dump_jit_keys(path: str) -> None:
    from triton.runtime.jit import JITFunction

    out = []
    for obj in gc.get_objects():
        if isinstance(obj, JITFunction):
            for caches in obj.device_caches.values():
                for key in caches[0]:
                    out.append({"module": obj.fn.__module__, "qualname": obj.fn.__qualname__, "key": repr(key)})
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if os.environ.get("VGPRSCOPE_JIT_KEYS"):
    atexit.register(dump_jit_keys, os.environ["VGPRSCOPE_JIT_KEYS"])

from fla.ops.delta_rule import chunk_delta_rule  # noqa: E402
from fla.ops.gated_delta_rule import chunk_gated_delta_rule  # noqa: E402
from fla.ops.gla import chunk_gla  # noqa: E402
from fla.ops.retention import chunk_retention  # noqa: E402
from fla.ops.simple_gla import chunk_simple_gla  # noqa: E402

torch.manual_seed(0)
q, k, v = (torch.randn(B, T, H, d, dtype=dt, device=dev) for d in (K, K, V))
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, K, dtype=dt, device=dev))
gs = torch.nn.functional.logsigmoid(torch.randn(B, T, H, dtype=dt, device=dev))
beta = torch.rand(B, T, H, dtype=dt, device=dev).sigmoid()
kn = torch.nn.functional.normalize(torch.randn(B, T, H, K, dtype=dt, device=dev), dim=-1)
ops = {"gla": lambda: chunk_gla(q, k, v, g), "simple_gla": lambda: chunk_simple_gla(q, k, v, gs),
       "retention": lambda: chunk_retention(q, k, v), "delta_rule": lambda: chunk_delta_rule(q, kn, v, beta),
       "gated_delta_rule": lambda: chunk_gated_delta_rule(q, kn, v, gs, beta)}
with torch.no_grad():
    for name, op in ops.items():
        try:
            op()
            torch.cuda.synchronize()
            print("ok", name, flush=True)
        except Exception as exc:
            print("FAIL", name, type(exc).__name__, str(exc)[:200], flush=True)
