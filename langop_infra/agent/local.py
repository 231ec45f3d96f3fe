"""The built-in runtime's pieces for your own program: one turn of the agent loop over a
message list (:func:`chat_with_tools` with a :class:`ChatModel`), and the A2A client that
calls an agent's peers by name (:class:`PeerClient` over :func:`load_peers`).

The names here are the public ones; the modules they come from are private and may move.
"""

from __future__ import annotations

from langop_infra.agent._a2a_client import PeerClient, PeerReply
from langop_infra.agent._local_tools import chat_with_tools
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._settings import load_peers

__all__ = [
    "ChatModel",
    "PeerClient",
    "PeerReply",
    "RuntimeMetrics",
    "chat_with_tools",
    "load_peers",
]
