"""The tests' official-SDK server on stdio: ``python stdio_server.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sdk_tools import build_server

if __name__ == "__main__":
    print("stdio test server starting", file=sys.stderr, flush=True)
    build_server("sdk-stdio").run("stdio")
