"""The rendered agent card against the official A2A SDK's types (a2a-sdk 1.x, A2A v1.0): a
card ParseDict refuses, or one missing what v1.0 requires, is a bug (issue 38)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.types import a2a_pb2
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf import json_format
from pydantic import ValidationError

from langop_infra.config.agent import AgentSpec
from langop_infra.manifests._a2a import agent_card, card_json

PIN = "@sha256:" + "a" * 64
# What A2A v1.0 marks REQUIRED on an AgentCard (a2a.proto field_behavior).
REQUIRED = (
    "name",
    "description",
    "supported_interfaces",
    "version",
    "capabilities",
    "default_input_modes",
    "default_output_modes",
    "skills",
)


def card_of(a2a: dict[str, Any], **fields: Any) -> dict[str, Any]:
    agent = AgentSpec.model_validate(
        {"name": "planner", "image": "ghcr.io/acme/planner:1" + PIN, "a2a": a2a, **fields}
    )
    return json.loads(card_json(agent_card(agent, "apps")))


def parsed(card: dict[str, Any]) -> Any:
    message = a2a_pb2.AgentCard()
    json_format.ParseDict(card, message)  # unknown fields and wrong types raise ParseError
    validate_proto_required_fields(message)  # the SDK's own check of REQUIRED fields
    return message


SKILL = {"id": "plan", "name": "Plan", "description": "Plans.", "tags": ["planning"]}
FULL = {
    "port": 9000,
    "path": "/a2a",
    "description": "Plans research and hands writing to its peers.",
    "version": "2.1.0",
    "streaming": True,
    "pushNotifications": False,
    "defaultInputModes": ["text/plain", "application/json"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {
            "id": "plan",
            "name": "Plan research",
            "description": "Breaks a question into search steps.",
            "tags": ["planning", "research"],
            "examples": ["Plan a literature review of A2A"],
            "inputModes": ["text/plain"],
            "outputModes": ["application/json"],
        },
        {
            "id": "summarise",
            "name": "Summarise",
            "description": "Summarises a text.",
            "tags": ["summary"],
        },
    ],
    "securitySchemes": [
        {"name": "bearer", "type": "bearer", "bearerFormat": "JWT"},
        {"name": "key", "type": "apiKey", "headerName": "X-Api-Key", "description": "a key"},
    ],
}


def test_a_full_card_parses_into_the_sdk_agent_card() -> None:
    card = parsed(card_of(FULL))
    for field in REQUIRED:
        assert card.HasField(field) if field == "capabilities" else getattr(card, field), field
    (interface,) = card.supported_interfaces
    assert interface.url == "http://planner.apps.svc.cluster.local:9000/a2a"
    assert interface.protocol_binding == "JSONRPC"
    assert interface.protocol_version == "1.0"
    assert card.version == "2.1.0"
    assert card.capabilities.streaming is True
    assert card.capabilities.push_notifications is False
    assert [s.id for s in card.skills] == ["plan", "summarise"]
    assert list(card.skills[0].tags) == ["planning", "research"]
    assert list(card.skills[0].output_modes) == ["application/json"]
    assert list(card.default_input_modes) == ["text/plain", "application/json"]
    bearer = card.security_schemes["bearer"].http_auth_security_scheme
    assert (bearer.scheme, bearer.bearer_format) == ("Bearer", "JWT")
    key = card.security_schemes["key"].api_key_security_scheme
    assert (key.location, key.name, key.description) == ("header", "X-Api-Key", "a key")
    assert [list(r.schemes) for r in card.security_requirements] == [["bearer"], ["key"]]


def test_the_smallest_card_has_every_required_field() -> None:
    card = parsed(card_of({"skills": [SKILL]}, instructions="You plan research.\nBe brief."))
    assert card.name == "planner"
    assert card.description == "You plan research."
    assert card.version == "1.0.0"
    assert card.supported_interfaces[0].url == "http://planner.apps.svc.cluster.local:8080/"
    assert list(card.default_input_modes) == ["text/plain"]
    assert list(card.default_output_modes) == ["text/plain"]
    assert card.HasField("capabilities")
    assert [s.id for s in card.skills] == ["plan"]


def test_an_a2a_agent_needs_a_skill_with_a_tag() -> None:
    """What the SDK requires is refused at the edge, at its field."""
    with pytest.raises(ValidationError, match=r"a2a\.skills"):
        card_of({})
    with pytest.raises(ValidationError, match="tags"):
        card_of({"skills": [{**SKILL, "tags": []}]})


def test_the_sdk_refuses_a_card_without_a_required_field() -> None:
    """The required-field check has teeth too: a skill without tags is refused (which is
    why A2ASkill.tags needs one)."""
    card = card_of(FULL)
    del card["skills"][1]["tags"]
    with pytest.raises(InvalidParamsError):
        parsed(card)


def test_the_sdk_refuses_what_is_not_a_v1_card() -> None:
    """The check has teeth: a v0.3 card (url at the top level) does not parse."""
    card = card_of({"skills": [SKILL]})
    card["url"] = card["supportedInterfaces"][0]["url"]
    with pytest.raises(json_format.ParseError, match="url"):
        parsed(card)
