"""``manifests/_cronjob.py``: a scheduled agent's CronJob spec, env and config section."""

from __future__ import annotations

from typing import Any

from langop_infra.config._schedule import ScheduleSpec
from langop_infra.manifests._cronjob import cronjob_spec, schedule_config, schedule_env

POD = {"containers": [{"name": "agent", "image": "ghcr.io/acme/agent:1"}], "volumes": []}
DEPLOYMENT: Any = {
    "replicas": 1,
    "template": {"metadata": {"labels": {"app": "a", "tier": "agent"}}, "spec": POD},
}


def schedule(**fields: object) -> ScheduleSpec:
    return ScheduleSpec.model_validate({"cron": "0 6 * * *", "input": "report", **fields})


def test_env_says_scheduled_and_carries_the_input() -> None:
    assert [v.manifest() for v in schedule_env(schedule())] == [
        {"name": "AGENT_MODE", "value": "scheduled"},
        {"name": "AGENT_INPUT", "value": "report"},
    ]


def test_config_has_the_time_zone_only_when_set() -> None:
    assert schedule_config(schedule()) == {"schedule": {"cron": "0 6 * * *", "input": "report"}}
    doc = schedule_config(schedule(timeZone="Europe/Paris"))
    assert doc == {"schedule": {"cron": "0 6 * * *", "timeZone": "Europe/Paris", "input": "report"}}
    assert list(doc["schedule"]) == ["cron", "timeZone", "input"]


def test_defaults_give_the_whole_spec() -> None:
    assert cronjob_spec(schedule(), DEPLOYMENT) == {
        "schedule": "0 6 * * *",
        "concurrencyPolicy": "Forbid",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
        "jobTemplate": {
            "metadata": {"labels": {"app": "a", "tier": "agent"}},
            "spec": {
                "backoffLimit": 2,
                "template": {
                    "metadata": {"labels": {"app": "a", "tier": "agent"}},
                    "spec": {**POD, "restartPolicy": "OnFailure"},
                },
            },
        },
    }


def test_every_setting_is_carried() -> None:
    spec = cronjob_spec(
        schedule(
            timeZone="Etc/UTC",
            concurrencyPolicy="Replace",
            suspend=True,
            startingDeadlineSeconds=30,
            activeDeadlineSeconds=600,
            backoffLimit=0,
            successfulJobsHistoryLimit=5,
            failedJobsHistoryLimit=7,
        ),
        DEPLOYMENT,
    )
    assert spec["timeZone"] == "Etc/UTC"
    assert spec["startingDeadlineSeconds"] == 30
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Replace", True)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (5, 7)
    job = spec["jobTemplate"]["spec"]
    assert (job["backoffLimit"], job["activeDeadlineSeconds"]) == (0, 600)


def test_the_deployment_is_not_changed_and_labels_are_a_copy() -> None:
    deployment: Any = {
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}
    }
    spec = cronjob_spec(schedule(), deployment)
    spec["jobTemplate"]["metadata"]["labels"]["extra"] = "x"
    assert deployment == {
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}
    }


def test_a_template_without_labels_gets_empty_ones() -> None:
    deployment: Any = {"template": {"metadata": {}, "spec": {"containers": []}}}
    assert cronjob_spec(schedule(), deployment)["jobTemplate"]["metadata"] == {"labels": {}}
