"""How langop-infra runs the real Pulumi engine locally: shared by `tools/engine/pulumi` and the
`engine` tests, so a contributor and CI run it the same way.

- state in a local file backend under a folder of the caller's (a temporary one by default);
- secrets with the passphrase provider (`PULUMI_CONFIG_PASSPHRASE`, default `langop-local`);
- no plugin downloads and no update check: every plugin comes from the folder that
  `tools/engine/build` prints, first on PATH; each project names its own virtualenv.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_PASSPHRASE = "langop-local"


def build_engine(*, cluster: bool = False) -> Path:
    """The folder of the engine's binaries, built by tools/engine/build when not cached yet."""
    args = [sys.executable, str(HERE / "build"), *(["--cluster"] if cluster else [])]
    done = subprocess.run(args, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tools/engine/build failed (exit {done.returncode}); its output is above")
    return Path(done.stdout.strip().splitlines()[-1])


def engine_environment(
    bin_dir: Path, home: Path, base: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment the engine runs in: its home, state and plugins all under `home`."""
    env = dict(os.environ if base is None else base)
    state = home / "state"
    state.mkdir(parents=True, exist_ok=True)
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        PULUMI_HOME=str(home / "pulumi-home"),
        PULUMI_BACKEND_URL=state.as_uri(),
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="true",
        PULUMI_SKIP_UPDATE_CHECK="true",
        PULUMI_SKIP_CONFIRMATIONS="true",
        PULUMI_DIY_BACKEND_NO_LEGACY_WARNING="true",
    )
    env.setdefault("PULUMI_CONFIG_PASSPHRASE", DEFAULT_PASSPHRASE)
    env.pop("PULUMI_ACCESS_TOKEN", None)
    return env
