"""The conformance suite's client, played by the ``langop-infra`` CLI alone.

    conformance client --command "python tests/conformance/cli_client.py" --scenario auth/...

The suite appends the server URL and passes credentials in ``MCP_CONFORMANCE_CONTEXT``.
This wrapper only turns them into flags and runs the installed ``langop-infra`` executable,
once: ``tools call URL -`` (one session, one login), asked on stdin to list the tools, then
to call each. No Python API of ours is imported. Authorization code scenarios use
``--oauth-redirect follow`` (the suite's authorization server redirects at once); a client
secret is pinned to the
issuer the server's metadata names, looked up here with the standard library as an operator
would look it up before pinning it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CIMD_URL = "https://conformance-test.local/client-metadata.json"  # need not resolve
_SAMPLES = {"number": 1, "integer": 1, "string": "test", "boolean": True}
CLI = str(Path(sys.executable).with_name("langop-infra"))


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """A value for each required argument, by its JSON Schema type."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    return {
        name: _SAMPLES.get((properties.get(name) or {}).get("type"), "test")
        for name in schema.get("required") or []
    }


def _get_json(url: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            document = json.loads(response.read(256 * 1024))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def issuer_of(url: str) -> str:
    """The issuer the server's protected resource metadata names (else its origin)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates = []
    ping = urllib.request.Request(
        url,
        data=b'{"jsonrpc": "2.0", "id": 0, "method": "ping"}',
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        urllib.request.urlopen(ping, timeout=10).close()
    except urllib.error.HTTPError as exc:
        challenge = exc.headers.get("WWW-Authenticate") or ""
        if 'resource_metadata="' in challenge:
            candidates.append(challenge.split('resource_metadata="', 1)[1].split('"', 1)[0])
    except OSError:
        pass
    candidates += [
        f"{origin}/.well-known/oauth-protected-resource{parts.path}",
        f"{origin}/.well-known/oauth-protected-resource",
    ]
    for candidate in candidates:
        servers = _get_json(candidate).get("authorization_servers")
        if isinstance(servers, list) and servers:
            return str(servers[0])
    return origin


def flags(url: str, context: dict[str, Any], workdir: str) -> tuple[list[str], dict[str, str]]:
    """The CLI flags and environment that carry the scenario's credentials."""
    argv = ["--oauth-redirect", "follow", "--client-metadata-url", CIMD_URL, "--timeout", "10"]
    env = dict(os.environ)
    if context.get("client_id"):
        argv += ["--client-id", str(context["client_id"])]
    if context.get("client_secret"):
        env["CONFORMANCE_CLIENT_SECRET"] = str(context["client_secret"])
        argv += ["--client-secret-env", "CONFORMANCE_CLIENT_SECRET"]
        argv += ["--oauth-issuer", issuer_of(url)]
    if context.get("private_key_pem"):
        key = Path(workdir) / "client-key.pem"
        key.write_text(str(context["private_key_pem"]))
        argv += ["--private-key-file", str(key)]
        argv += ["--signing-algorithm", str(context.get("signing_algorithm") or "ES256")]
    return argv, env


def main() -> int:
    url = sys.argv[-1]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory() as workdir:
        extra, env = flags(url, context, workdir)
        cli = subprocess.Popen(
            [CLI, "tools", "call", url, "-", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert cli.stdin is not None and cli.stdout is not None
        cli.stdin.write('{"list": true}\n')
        cli.stdin.flush()
        listed = json.loads(cli.stdout.readline() or '{"error": "no answer"}')
        for tool in listed.get("tools", []):
            request = {"name": tool["name"], "arguments": sample_arguments(tool)}
            cli.stdin.write(json.dumps(request) + "\n")
            cli.stdin.flush()
            answer = json.loads(cli.stdout.readline() or '{"error": "no answer"}')
            if "error" in answer:
                print(f"error: {answer['error']}", file=sys.stderr)
        cli.stdin.close()
        return cli.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
