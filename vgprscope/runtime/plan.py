"""Planning: a kernel-directory variant at one config -> its jobs, one per kernel (or the variant's refusal).

The variant file's ``check_config`` may refuse the config (a reason); its ``kernel_specs`` lists each
kernel's function, example launch values and constexprs, made facts as a captured launch's are
(``facts``, ``constexpr``): the same launch planned and captured is one job.
"""

from __future__ import annotations

import os
from typing import Any

from . import loader, protocol
from .facts import as_specialised, constexpr_fact, example_fact
from .guard import stdout_to_stderr
from .protocol import compile_env, one_line


def plan(request: dict[str, Any]) -> dict[str, Any]:
    """A kernel-directory variant at one config -> its jobs, one per kernel (or the variant's refusal).

    ``request``: directory, package, file_name, config (a dict), target, options; the variant file's
    ``check_config`` may refuse the config (a reason), its ``kernel_specs`` lists each kernel's function,
    example launch values and constexprs."""
    try:
        with compile_env(), stdout_to_stderr():
            import importlib

            stem = os.path.splitext(request["file_name"])[0]
            with loader.loading():
                loader.register_package(request["package"], request["directory"])
                module = importlib.import_module(f"{request['package']}.{stem}")
            config = request["config"]
            reason = module.check_config(config)
            if reason:
                return {"reason": str(reason)}
            # the target too (backend, arch, warp size): a kernel written for one arch says why on the others
            specs = module.kernel_specs(config | {"compute_units": request.get("compute_units", 0),
                                                  "target": request["target"]})
            jobs = []
            for spec in specs:
                fn = loader.unwrap(spec["fn"])
                ref = loader.function_ref(fn)
                ref |= {"package": request["package"], "package_dir": request["directory"]}
                args = []
                params = {p.name: p for p in getattr(fn, "params", ())}
                for name in fn.arg_names:
                    if name in spec["constexprs"]:
                        args.append(constexpr_fact(name, spec["constexprs"][name]))
                    elif name in spec["args"]:
                        args.append(as_specialised(example_fact(name, spec["args"][name]), params.get(name)))
                    else:
                        raise KeyError(f"kernel argument {name!r} of {spec['name']} has no example value")
                jobs.append({"name": spec["name"], "job": {
                    "source": {"function": ref}, "target": request["target"], "args": args,
                    "options": request.get("options") or {}}})
            return {"jobs": jobs}
    except Exception as exc:  # a broken kernel file is its rows' reason, not the end of the run
        return {"error": one_line(exc), "error_kind": protocol.kind(exc)}


