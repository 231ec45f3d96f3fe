"""A scheduled agent's batch/v1 CronJob spec, its env and its config.yaml ``schedule:``
section (the upstream language-operator's scheduled mode: ``AGENT_MODE=scheduled``)."""

from __future__ import annotations

from langop_infra.config._schedule import ScheduleSpec
from langop_infra.manifests._contract import EnvVar
from langop_infra.manifests._k8s_types import (
    CronJobSpecDict,
    DeploymentSpecDict,
    JobSpecDict,
    PodSpecDict,
)

AGENT_MODE_ENV = "AGENT_MODE"
AGENT_INPUT_ENV = "AGENT_INPUT"


def schedule_env(schedule: ScheduleSpec) -> list[EnvVar]:
    """``AGENT_MODE=scheduled`` and the run's prompt, ``AGENT_INPUT``."""
    return [EnvVar(AGENT_MODE_ENV, value="scheduled"), EnvVar(AGENT_INPUT_ENV, schedule.input)]


def schedule_config(schedule: ScheduleSpec) -> dict[str, dict[str, str]]:
    """config.yaml ``schedule: {cron, timeZone, input}``."""
    doc: dict[str, str] = {"cron": schedule.cron}
    if schedule.time_zone is not None:
        doc["timeZone"] = schedule.time_zone
    doc["input"] = schedule.input
    return {"schedule": doc}


def cronjob_spec(schedule: ScheduleSpec, deployment: DeploymentSpecDict) -> CronJobSpecDict:
    """The CronJob spec running the Deployment spec's pod template: same pod, env, config,
    workspace and labels (so the agent's NetworkPolicies select its Job pods), restarted on
    failure within a run."""
    template = deployment["template"]
    pod: PodSpecDict = {**template["spec"], "restartPolicy": "OnFailure"}
    job: JobSpecDict = {
        "backoffLimit": schedule.backoff_limit,
        "template": {**template, "spec": pod},
    }
    if schedule.active_deadline_seconds is not None:
        job["activeDeadlineSeconds"] = schedule.active_deadline_seconds
    spec: CronJobSpecDict = {
        "schedule": schedule.cron,
        "concurrencyPolicy": schedule.concurrency_policy,
        "suspend": schedule.suspend,
        "successfulJobsHistoryLimit": schedule.successful_jobs_history_limit,
        "failedJobsHistoryLimit": schedule.failed_jobs_history_limit,
        "jobTemplate": {
            "metadata": {"labels": dict(template["metadata"].get("labels", {}))},
            "spec": job,
        },
    }
    if schedule.time_zone is not None:
        spec["timeZone"] = schedule.time_zone
    if schedule.starting_deadline_seconds is not None:
        spec["startingDeadlineSeconds"] = schedule.starting_deadline_seconds
    return spec
