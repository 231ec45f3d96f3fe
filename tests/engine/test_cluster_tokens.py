"""The built-in runtime's TokenReview verifier (``A2A_TOKEN_VERIFY=tokenreview``) against a
real API server: service-account tokens that kubectl's TokenRequest makes, reviewed with the
agent's own account, as in a pod (tools/engine/cluster; tests/support/kube.py)."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from langop_infra.agent._token_verify import load_verifier
from tests.support.kube import Kube

pytestmark = pytest.mark.engine

AUDIENCE = "agent-researcher"


def token(kube: Kube, account: str, *audience: str) -> str:
    args = ["create", "token", account, "-n", "agents", "--duration", "1h"]
    args += [f"--audience={a}" for a in audience]
    return kube.kubectl(*args).stdout.strip()


@pytest.fixture(scope="module")
def agent_env(kube: Kube, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The agent pod's environment: the API server's address, and its own account's token and
    CA where a pod has them; that account may review tokens (system:auth-delegator)."""
    kube.kubectl("create", "namespace", "agents")
    for account in ("researcher", "caller", "outsider"):
        kube.kubectl("create", "serviceaccount", account, "-n", "agents")
    kube.kubectl("create", "clusterrolebinding", "researcher-reviews",
                 "--clusterrole=system:auth-delegator",
                 "--serviceaccount=agents:researcher")  # fmt: skip
    mount = tmp_path_factory.mktemp("serviceaccount")
    (mount / "token").write_text(token(kube, "researcher"))
    shutil.copyfile(kube.cluster.folder / "pki" / "ca.crt", mount / "ca.crt")
    server = urlsplit(kube.server)
    return {
        "A2A_TOKEN_VERIFY": "tokenreview",
        "A2A_TOKEN_AUDIENCE": AUDIENCE,
        "KUBERNETES_SERVICE_HOST": server.hostname or "",
        "KUBERNETES_SERVICE_PORT": str(server.port),
        "A2A_SERVICE_ACCOUNT_DIR": str(mount),
    }


def identity(env: dict[str, str], presented: str) -> str | None:
    async def check() -> str | None:
        verifier = load_verifier(env)
        assert verifier is not None
        try:
            return await verifier.identity(presented)
        finally:
            await verifier.aclose()

    return asyncio.run(check())


def test_a_caller_token_for_this_agent_names_the_caller(
    kube: Kube, agent_env: dict[str, str]
) -> None:
    assert identity(agent_env, token(kube, "caller", AUDIENCE)) == (
        "system:serviceaccount:agents:caller"
    )


def test_a_token_for_another_audience_names_no_one(kube: Kube, agent_env: dict[str, str]) -> None:
    assert identity(agent_env, token(kube, "caller", "agent-other")) is None
    assert identity(agent_env, token(kube, "caller")) is None  # the API server's own audience


def test_a_token_of_a_deleted_account_stops_naming_anyone(
    kube: Kube, agent_env: dict[str, str]
) -> None:
    # The API server caches a token's success for 10 s (its authenticator's cache), so a
    # revocation takes effect after that, plus the agent's own 60 s verdict cache (SECURITY.md).
    kube.kubectl("create", "serviceaccount", "gone", "-n", "agents")
    presented = token(kube, "gone", AUDIENCE)
    assert identity(agent_env, presented) == "system:serviceaccount:agents:gone"
    kube.kubectl("delete", "serviceaccount", "gone", "-n", "agents")
    assert kube.wait_gone("serviceaccount", "gone", "agents")
    give_up = time.monotonic() + 120  # bounds the wait only
    while identity(agent_env, presented) is not None:
        assert time.monotonic() < give_up, "a deleted account's token is still admitted"
        time.sleep(1)


def test_a_forged_token_names_no_one(kube: Kube, agent_env: dict[str, str]) -> None:
    real = token(kube, "caller", AUDIENCE)
    head, body, signature = real.split(".")
    forged = ".".join(
        [head, body, signature[:-4] + ("AAAA" if signature[-4:] != "AAAA" else "BBBB")]
    )
    assert identity(agent_env, forged) is None


def test_an_agent_whose_account_may_not_review_admits_no_one(
    kube: Kube, agent_env: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mount = tmp_path / "serviceaccount"
    mount.mkdir()
    (mount / "token").write_text(token(kube, "outsider"))
    shutil.copyfile(Path(agent_env["A2A_SERVICE_ACCOUNT_DIR"]) / "ca.crt", mount / "ca.crt")
    env = {**agent_env, "A2A_SERVICE_ACCOUNT_DIR": str(mount)}
    assert identity(env, token(kube, "caller", AUDIENCE)) is None
    assert "TokenReview refused: HTTP 403" in caplog.text
