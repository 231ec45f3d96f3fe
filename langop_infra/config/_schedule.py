"""Scheduled agents: a CronJob runs the agent on a 5-field cron schedule."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from langop_infra.config._fields import Int, Spec, invalid


def cron_expression(value: str) -> str:
    """A 5-field cron expression as Kubernetes' CronJob reads it, checked by ``cronsim``."""
    from cronsim import CronSim, CronSimError

    text = " ".join(value.split())
    fields = text.split(" ")
    if len(fields) != 5 or text.startswith("@"):
        raise invalid(
            "cron",
            f"{value!r} is not a 5-field cron expression: give minute hour day-of-month "
            "month day-of-week, e.g. '0 6 * * 1-5'",
        )
    from datetime import datetime

    try:
        CronSim(text, datetime(2026, 1, 1))
    except CronSimError as exc:
        raise invalid("cron", f"{value!r} is not a valid cron expression: {exc}") from None
    return text


def iana_time_zone(value: str) -> str:
    """An IANA time zone name (``Europe/Paris``), as CronJob ``timeZone`` wants it."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if value != value.strip() or not value or value.startswith(("/", ".")) or ".." in value:
        raise invalid("time_zone", f"{value!r} is not an IANA time zone name such as 'Etc/UTC'")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise invalid(
            "time_zone",
            f"{value!r} is not an IANA time zone: use a name such as 'Europe/Paris' or 'Etc/UTC'",
        ) from None
    return value


class ScheduleSpec(Spec):
    """Run the agent as a batch/v1 CronJob (env AGENT_MODE=scheduled) instead of a
    Deployment."""

    cron: Annotated[str, AfterValidator(cron_expression)]
    """5-field cron expression (minute hour day-of-month month day-of-week)."""
    time_zone: Annotated[str, AfterValidator(iana_time_zone)] | None = None
    """IANA time zone of the schedule (unset: the controller's, usually UTC)."""
    input: Annotated[str, Field(min_length=1, max_length=64 * 1024)]
    """The prompt each run receives (env AGENT_INPUT, config.yaml schedule.input)."""
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Forbid"
    """What a run does while the previous one still runs."""
    suspend: bool = False
    """Pause the schedule."""
    starting_deadline_seconds: Int | None = Field(default=None, ge=1)
    """A run missed by more than this is skipped."""
    active_deadline_seconds: Int | None = Field(default=None, ge=1)
    """A run is stopped after this long."""
    backoff_limit: Int = Field(default=2, ge=0, le=100)
    """Retries of a failed run."""
    successful_jobs_history_limit: Int = Field(default=3, ge=0, le=100)
    """Finished runs kept."""
    failed_jobs_history_limit: Int = Field(default=1, ge=0, le=100)
    """Failed runs kept."""
