"""A2A data parts keep whole numbers as ints (issue 51 §5): the protobuf Value that carries
them holds doubles only."""

from __future__ import annotations

from typing import Any

from a2a.helpers import new_data_part, new_text_part

from langop_infra.agent._a2a_data import get_data_parts


def test_a_data_part_reads_back_with_its_ints() -> None:
    sent: dict[str, Any] = {
        "count": 4326,
        "ratio": 0.5,
        "big": 2**40,
        "nested": [{"n": 3, "x": 1.25, "flag": True, "none": None}],
        "text": "7",
    }
    parts = [new_text_part("hi"), new_data_part(sent), new_data_part([1, 2.5])]
    read = get_data_parts(parts)
    assert read == [sent, [1, 2.5]]
    assert type(read[0]["count"]) is int and type(read[0]["nested"][0]["n"]) is int
    assert type(read[0]["nested"][0]["flag"]) is bool
    assert type(read[0]["ratio"]) is float and type(read[1][1]) is float


def test_a_whole_float_reads_as_the_int_json_would_give() -> None:
    """JSON has one number type: ``2.0`` sent is ``2`` read, as from a peer's JSON ``2``."""
    [read] = get_data_parts([new_data_part({"n": 2.0, "x": -0.75})])
    assert read == {"n": 2, "x": -0.75}
    assert type(read["n"]) is int
