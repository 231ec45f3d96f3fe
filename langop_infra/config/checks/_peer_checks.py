"""Rules across fields, agents and memories: a scheduled agent has nothing only a Deployment
has, the A2A port is its own, A2A peers resolve to agents of the stack that serve A2A (never
the caller itself), and ``memory`` names a declared memory."""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.config.agent import AgentSpec
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path


def agent_feature_problems(
    cluster: ClusterSpec, agent_index: Sequence[int], path: str = ""
) -> list[Problem]:
    """Every rule of this module over a document's agents (``agent_index``: their indexes
    in the document's list) and memories."""
    indexed = list(zip(agent_index, cluster.agents, strict=True))
    problems = [p for i, a in indexed for p in mode_problems(a, join_path(path, f"agents[{i}]"))]
    problems += peer_problems(indexed, cluster.namespace, path)
    return problems + memory_problems(cluster, indexed, path)


def token_review_problems(agent: AgentSpec, path: str = "") -> list[Problem]:
    """TokenReview needs the agent's own service-account token in its pod."""
    verification = agent.a2a.token_verification if agent.a2a is not None else None
    if verification is None or verification.method != "tokenReview":
        return []
    if agent.automount_service_account_token:
        return []
    text = (
        "tokenReview asks the API server with the agent's own service-account token; set "
        "automountServiceAccountToken: true (and bind the agent's ServiceAccount to the "
        "ClusterRole system:auth-delegator), or use method: oidc"
    )
    where = join_path(path, "a2a.tokenVerification.method")
    return [Problem(where, text, "langop_a2a_token_review")]


def metrics_problems(agent: AgentSpec, path: str = "") -> list[Problem]:
    """``metricsFrom`` admits peers to the built-in runtime's health port, which a
    scheduled run or another image does not serve."""
    if not agent.metrics_from or (agent.runtime == "builtin" and agent.schedule is None):
        return []
    text = (
        "metricsFrom admits peers to the built-in runtime's health port, which this agent "
        "does not serve (runtime: image, or a schedule); publish the image's port in ports "
        "and admit them with allowFrom, or remove metricsFrom"
    )
    return [Problem(join_path(path, "metricsFrom"), text, "langop_metrics_from")]


def mode_problems(agent: AgentSpec, path: str = "") -> list[Problem]:
    """``schedule`` beside what only a long-running (Deployment) agent has, and an A2A port
    that one of ``ports`` takes: each at its field, naming the conflict and the fix."""
    problems: list[Problem] = []
    if agent.a2a is not None:
        for port in agent.ports:
            if port.port == agent.a2a.port or port.name == "a2a":
                text = (
                    f"a2a conflicts with ports entry {port.name!r} ({port.port}): the A2A port "
                    "is published as Service port 'a2a'; pick another a2a.port, or rename "
                    "that port"
                )
                problems.append(Problem(join_path(path, "a2a"), text, "langop_a2a_port"))
    problems += token_review_problems(agent, path)
    problems += metrics_problems(agent, path)
    if agent.schedule is None:
        return problems
    conflicts = [
        (
            "replicas",
            "replicas" in agent.model_fields_set and agent.replicas != 1,
            "each run is one pod",
        ),
        ("autoscaling", agent.autoscaling is not None, "a run is not scaled"),
        ("a2a", agent.a2a is not None, "nothing listens between runs"),
        ("ports", bool(agent.ports), "nothing listens between runs"),
    ]
    for field, present, why in conflicts:
        if present:
            text = (
                f"schedule conflicts with {field}: a scheduled agent runs as a CronJob and "
                f"{why}; remove {field}, or remove schedule to run a Deployment"
            )
            problems.append(Problem(join_path(path, "schedule"), text, "langop_schedule_conflict"))
    return problems


def peer_problems(
    agents: Sequence[tuple[int, AgentSpec]], namespace: str, path: str = ""
) -> list[Problem]:
    """Each in-cluster peer of each agent: declared, serving A2A, not the caller; a peer
    name given twice."""
    by_key = {(a.namespace or namespace, a.name): a for _, a in agents}
    problems: list[Problem] = []
    for i, agent in agents:
        own = agent.namespace or namespace
        seen: dict[str, int] = {}
        for j, peer in enumerate(agent.agents):
            where = join_path(path, f"agents[{i}].agents[{j}]")
            if peer.name in seen:
                problems.append(
                    Problem(
                        join_path(where, "name"),
                        f"peer {peer.name!r} is named twice (first at agents[{seen[peer.name]}]);"
                        " peer names are unique per agent",
                    )
                )
            seen.setdefault(peer.name, j)
            if peer.remote:
                continue
            key = (peer.namespace or own, peer.name)
            problems += _local_peer(key, (own, agent.name), by_key.get(key), where)
    return problems


def _local_peer(
    key: tuple[str, str], caller: tuple[str, str], callee: AgentSpec | None, where: str
) -> list[Problem]:
    space, name = key
    if key == caller:
        text = (
            f"agent {name!r} references itself as an A2A peer; an agent cannot call itself: "
            "remove this entry"
        )
        return [Problem(join_path(where, "name"), text, "langop_a2a_self")]
    if callee is None:
        text = (
            f"no agent {name!r} in namespace {space!r} to call over A2A; declare it in the "
            "stack, or give a remote peer's url"
        )
        return [Problem(join_path(where, "name"), text, "langop_a2a_peer")]
    if callee.a2a is None:
        text = (
            f"agent {name!r} in namespace {space!r} does not serve A2A; add a2a: {{}} to it "
            "(it then publishes an agent card and port 'a2a'), or remove this peer"
        )
        return [Problem(join_path(where, "name"), text, "langop_a2a_peer")]
    return []


def memory_problems(
    cluster: ClusterSpec, agents: Sequence[tuple[int, AgentSpec]], path: str = ""
) -> list[Problem]:
    """Memories named twice, or like a tool of their namespace (a managed memory is one);
    an agent's ``memory`` naming none."""
    ns = cluster.namespace
    problems: list[Problem] = []
    tools = {(t.namespace or ns, t.name) for t in cluster.tools}
    workloads = {(a.namespace or ns, a.name) for _, a in agents}
    memories: dict[tuple[str, str], int] = {}
    for i, memory in enumerate(cluster.memories):
        key = (memory.namespace or ns, memory.name)
        where = join_path(path, f"memories[{i}].name")
        if key in memories:
            text = f"duplicate memory name {memory.name!r} (first at memories[{memories[key]}])"
            problems.append(Problem(where, text, "langop_duplicate_name"))
        elif memory.type == "managed" and (key in tools or key in workloads):
            kind = "tools" if key in tools else "agents"
            text = (
                f"managed memory {memory.name!r} runs as a LanguageTool of that name (its "
                f"Deployment and Service), and {kind} has one in namespace {key[0]!r}; rename "
                "one of them"
            )
            problems.append(Problem(where, text, "langop_name_clash"))
        memories.setdefault(key, i)
    for i, agent in agents:
        if agent.memory is None:
            continue
        key = (agent.memory.namespace or agent.namespace or ns, agent.memory.name)
        if key not in memories:
            known = sorted(n for s, n in memories if s == key[0])
            text = (
                f"no memory {key[1]!r} in namespace {key[0]!r} under memories"
                f"{f' (there: {known})' if known else ''}; declare it, or remove memory"
            )
            problems.append(Problem(join_path(path, f"agents[{i}].memory.name"), text))
            continue
        if any(
            ref.name == key[1] and (ref.namespace or agent.namespace or ns) == key[0]
            for ref in agent.tools
        ):
            text = (
                f"memory {key[1]!r} is also under tools; a managed memory is wired as a tool "
                "already: remove it from tools"
            )
            problems.append(Problem(join_path(path, f"agents[{i}].memory.name"), text))
    return problems


def unadmitted_peer_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """Each caller of the stack that its built-in, authenticated callee does not admit
    (not in ``a2a.callers``, listed with a token from another namespace, whose Secret it
    cannot read, or listed by an ``identity`` its ServiceAccount does not have): its
    messages would get 401 or 403."""
    home = cluster.namespace
    by_key = {(a.namespace or home, a.name): a for a in cluster.agents}
    warnings: list[Problem] = []
    for i, agent in enumerate(cluster.agents):
        own = agent.namespace or home
        for j, peer in enumerate(agent.agents):
            space = peer.namespace or own
            callee = by_key.get((space, peer.name))
            if peer.remote or callee is None or not _authenticated_builtin(callee):
                continue
            callers = callee.a2a.callers if callee.a2a is not None else []
            listed = next((c for c in callers if c.name == agent.name), None)
            if listed is not None and listed.identity:
                warnings += _identity_warnings(agent, own, listed.identity, peer.name, i, j, path)
                continue
            if space == own and listed is not None:
                continue
            text = (
                f"agent {peer.name!r} (runtime: builtin) answers authenticated callers only and "
                f"does not admit {agent.name!r}: its messages would get 401. Add "
                f"{{name: {agent.name}, tokenFrom: {{secretKeyRef: {{name, key}}}}}} to that "
                "agent's a2a.callers (both in one namespace), or set its a2a.access: open"
            )
            where = join_path(path, f"agents[{i}].agents[{j}].name")
            warnings.append(Problem(where, text, "langop_a2a_unadmitted"))
    return warnings


def _identity_warnings(
    agent: AgentSpec, own: str, identity: str, callee: str, i: int, j: int, path: str
) -> list[Problem]:
    """A caller listed by identity sends its own service-account token: the identity must
    be that account's."""
    account = agent.service_account_ref() or "default"
    sent = f"system:serviceaccount:{own}:{account}"
    if identity == sent:
        return []
    text = (
        f"agent {callee!r} admits {agent.name!r} as {identity!r}, and {agent.name!r} sends "
        f"the token of {sent!r} (its ServiceAccount): its messages would get 403. List "
        f"identity {sent!r}, or run {agent.name!r} as that ServiceAccount"
    )
    return [
        Problem(join_path(path, f"agents[{i}].agents[{j}].name"), text, "langop_a2a_unadmitted")
    ]


def _authenticated_builtin(agent: AgentSpec) -> bool:
    return agent.runtime == "builtin" and agent.a2a is not None and agent.a2a.access != "open"
