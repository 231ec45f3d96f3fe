"""``python -m langop_infra.agent serve``: the built-in agent runtime."""

import importlib
import os
import sys
from collections.abc import Callable

# The `agent` extra's modules (a2a-sdk[http-server], prometheus-client, uvicorn, pyjwt): without
# them, one line naming the extra to install, not a ModuleNotFoundError traceback.
EXTRA_MODULES = {"a2a", "prometheus_client", "uvicorn", "starlette", "sse_starlette", "jwt"}
INSTALL = "pip install 'langop-infra[agent]'"


def _import_runtime() -> Callable[[], int]:
    """The runtime's ``main``, its modules imported (a2a-sdk with its spans off unless
    something exports them)."""
    from langop_infra.agent._tracing import a2a_sdk_spans_off_unless_exported

    with a2a_sdk_spans_off_unless_exported(os.environ):
        # Up front: the runtime imports some of them only once it serves.
        for module in sorted(EXTRA_MODULES):
            importlib.import_module(module)
        importlib.import_module("langop_infra.agent._a2a_sdk")
        from langop_infra.agent._serve import main
    return main


def _main() -> int:
    try:
        main = _import_runtime()
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in EXTRA_MODULES:
            raise
        print(
            f"langop-agent: error: the built-in agent runtime needs the `agent` extra "
            f"(no module {missing!r}); install it: {INSTALL}",
            file=sys.stderr,
        )
        return 2
    return main()


if __name__ == "__main__":
    sys.exit(_main())
