"""Run inside ``.venv-litellm``: build LiteLLM's Router from a gateway config and report.

LiteLLM pins packages this environment pins differently and weighs about 300 MB, so it is not
in ``[test]``; tests/test_gateway.py runs this script with ``.venv-litellm/bin/python``
(created by .ci/run) and reads what the real Router made of the config. Standalone: it imports
nothing of langop-infra or the tests.

stdin, JSON: ``{"config": {...}, "router": {...}, "completion": {"model", "messages"} | null}``.
stdout, JSON: the Router's model names, fallbacks and deployments' ``litellm_params``, each
deployment model's provider as ``get_llm_provider`` resolves it, and the completion's text.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any

# LiteLLM fetches its model cost map from GitHub at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm


def report(request: dict[str, Any]) -> dict[str, Any]:
    config = request["config"]
    router = litellm.Router(
        model_list=copy.deepcopy(config["model_list"]),
        **copy.deepcopy(config.get("router_settings", {})),
        **request.get("router", {}),
    )
    deployments = {d["model_name"]: d["litellm_params"] for d in router.get_model_list()}
    providers = {
        name: list(litellm.get_llm_provider(params["model"])[:2])
        for name, params in deployments.items()
    }
    out: dict[str, Any] = {
        "model_names": router.get_model_names(),
        "fallbacks": router.fallbacks,
        "deployments": deployments,
        "providers": providers,
    }
    if request.get("completion"):
        response = router.completion(**request["completion"])
        out["completion"] = response.choices[0].message.content
    return out


if __name__ == "__main__":
    json.dump(report(json.load(sys.stdin)), sys.stdout, default=str)
