"""Who may call the model gateway: LiteLLM's ``custom_auth`` hook, shipped as source.

The gateway's ConfigMap carries this file as ``langop_gateway_callers.py`` beside ``config.yaml``,
and ``general_settings.custom_auth`` names :func:`user_api_key_auth`, so it runs inside the
LiteLLM proxy and imports nothing but the standard library and (when called) LiteLLM.

A caller is admitted with the master key (``LITELLM_MASTER_KEY``) as the proxy's admin, or
with one agent's own key as that agent (``user_id`` = the agent's name, so LiteLLM's logs,
metrics and spend name it), on model routes only. The agents' keys are files named after
the agents in the mounted Secret (``LANGOP_AGENT_KEYS_DIR``), read again whenever the
kubelet swaps the mount's ``..data`` link (as it does for every change): a key rotated or
removed from the Secret stops working once the mount is updated, with no restart.
Everything else is refused with 401, and nothing of a presented key is logged.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Any

KEYS_DIR_ENV = "LANGOP_AGENT_KEYS_DIR"
MASTER_KEY_ENV = "LITELLM_MASTER_KEY"
# Not a possible agent name: Secret keys (and so agents' key files) never hold ':'.
MASTER = ":master"
# The kubelet's atomic writer points this link at a new folder on every change of the Secret.
DATA_LINK = "..data"
_read: dict[str, tuple[str, dict[str, str]]] = {}


def read_agent_keys(directory: str | None) -> dict[str, str]:
    """Agent name to key, one file each; the kubelet's dot entries and empty files skipped."""
    if not directory:
        return {}
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return {}
    keys: dict[str, str] = {}
    for name in names:
        if name.startswith("."):
            continue
        try:
            with open(os.path.join(directory, name), "rb") as file:
                value = file.read().decode("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if value:
            keys[name] = value
    return keys


def agent_keys(directory: str | None) -> dict[str, str]:
    """:func:`read_agent_keys`, read again only when ``..data`` points elsewhere (every
    call where there is no such link: not a kubelet's mount)."""
    if not directory:
        return {}
    try:
        version = os.readlink(os.path.join(directory, DATA_LINK))
    except OSError:
        return read_agent_keys(directory)
    cached = _read.get(directory)
    if cached is not None and cached[0] == version:
        return cached[1]
    keys = read_agent_keys(directory)
    _read[directory] = (version, keys)
    return keys


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def caller_of(presented: str, master: str | None, agents: Mapping[str, str]) -> str | None:
    """:data:`MASTER`, the name of the agent whose key ``presented`` is, or None.

    Equal-length digests are compared, every candidate each time, so the time taken tells
    neither a key's length nor which candidate matched.
    """
    if not presented:
        return None
    given = _digest(presented)
    found: str | None = None
    candidates = sorted(agents.items())
    if master:
        candidates.insert(0, (MASTER, master))
    for name, key in candidates:
        if hmac.compare_digest(given, _digest(key)) and key and found is None:
            found = name
    return found


# LiteLLM is in the gateway's image, not among this package's dependencies.
def _refuse(code: int, message: str) -> Exception:
    from litellm.proxy._types import (  # pyright: ignore[reportMissingImports]
        ProxyErrorTypes,
        ProxyException,
    )

    return ProxyException(
        message=message, type=ProxyErrorTypes.auth_error, param="api_key", code=code
    )


# LiteLLM passes ``api_key`` by name. Its type comes from its default, not an annotation:
# detect-secrets, which the policy pack runs over this file's text in the ConfigMap, reads
# an annotated keyword argument of that name as a credential assignment.
async def user_api_key_auth(request: Any, api_key="") -> Any:
    """LiteLLM's ``custom_auth`` entry: the caller's identity, or a 401/403 ProxyException.

    The identity carries no key, not even a hash: LiteLLM copies a returned ``api_key`` into
    its logs, metrics and spend records.
    """
    from litellm.proxy._types import (  # pyright: ignore[reportMissingImports]
        LitellmUserRoles,
        UserAPIKeyAuth,
    )
    from litellm.proxy.auth.auth_utils import (  # pyright: ignore[reportMissingImports]
        get_request_route,
    )
    from litellm.proxy.auth.route_checks import (  # pyright: ignore[reportMissingImports]
        RouteChecks,
    )

    caller = caller_of(
        api_key or "",
        os.environ.get(MASTER_KEY_ENV),
        agent_keys(os.environ.get(KEYS_DIR_ENV)),
    )
    if caller is None:
        raise _refuse(401, "Authentication Error: send the agent's own gateway key")
    if caller == MASTER:
        return UserAPIKeyAuth(user_id="litellm-proxy-admin", user_role=LitellmUserRoles.PROXY_ADMIN)
    if not RouteChecks.is_llm_api_route(get_request_route(request)):
        raise _refuse(403, f"agent {caller!r} may call model routes only")
    return UserAPIKeyAuth(
        key_alias=caller, user_id=caller, user_role=LitellmUserRoles.INTERNAL_USER
    )
