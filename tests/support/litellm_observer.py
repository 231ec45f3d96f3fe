"""Loaded by the LiteLLM proxy in ``.venv-litellm`` (``litellm_settings.callbacks:
[langop_observer.observer]``, copied beside its config): after each successful call it writes
whom LiteLLM charged it to (``user_api_key_user_id`` of the standard logging payload, what its
spend tracking and logging integrations receive) and the model group to ``$OBSERVED_CALLS``,
one JSON line per call. Standalone: it imports nothing of langop-infra or the tests."""

from __future__ import annotations

import json
import os
from typing import Any

from litellm.integrations.custom_logger import CustomLogger


class Observer(CustomLogger):
    async def async_log_success_event(
        self, kwargs: dict[str, Any], response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        payload = kwargs.get("standard_logging_object") or {}
        metadata = payload.get("metadata") or {}
        record = {
            "user_id": metadata.get("user_api_key_user_id"),
            "model": payload.get("model_group"),
        }
        with open(os.environ["OBSERVED_CALLS"], "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


observer = Observer()
