"""What ``tools`` and ``tools call`` share: the OAuth flags, the client options, and output
scrubbed of every credential the command sends."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from langop_infra.cli._stack import UsageError

if TYPE_CHECKING:
    from langop_infra.mcp.oauth._flow import Grant

DEFAULT_TIMEOUT = 10.0
_GRANTS = ("auto", "client-credentials", "authorization-code")
_REDIRECTS = ("browser", "print", "follow")
_LOGIN_SECONDS = 300.0  # how long a person has to approve in the browser


def command_deadline(timeout: float) -> float:
    """The whole command's bound: the listing's, and the login's requests (not a person's)."""
    return max(30.0, 3 * timeout)


def add_oauth_arguments(oauth: argparse._ArgumentGroup) -> None:
    """The OAuth flags; any of them turns OAuth on."""
    oauth.add_argument("--client-id", metavar="ID", help="pre-registered OAuth client id")
    oauth.add_argument(
        "--client-secret-env",
        metavar="VAR",
        help="environment variable holding the client secret (never pass it as an argument)",
    )
    oauth.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help="the authorization server the client secret may go to (its metadata's issuer); "
        "required with --client-secret-env",
    )
    oauth.add_argument(
        "--private-key-file",
        metavar="PEM",
        help="client private key: authenticate with private_key_jwt (RFC 7523) instead",
    )
    oauth.add_argument(
        "--signing-algorithm",
        choices=("ES256", "RS256"),
        default="ES256",
        help="algorithm of --private-key-file (default ES256)",
    )
    oauth.add_argument(
        "--client-metadata-url",
        metavar="URL",
        help="https URL of this client's metadata document, used as its client id where the "
        "authorization server supports them (CIMD); else it registers itself",
    )
    oauth.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="scope to request besides what the server asks for (repeatable)",
    )
    oauth.add_argument(
        "--grant",
        choices=_GRANTS,
        default=None,
        help="auto (default): client credentials with a secret where offered, else a login",
    )
    oauth.add_argument(
        "--oauth-redirect",
        choices=_REDIRECTS,
        default=None,
        help="login: print the URL (default), also open a browser, or follow the "
        "authorization server's redirects without a person",
    )


def oauth(args: argparse.Namespace) -> Any:
    """The OAuth2Auth the flags ask for, or None when no OAuth flag is given."""
    scopes = [scope for value in args.scope for scope in value.split()]
    wanted = (
        args.client_id,
        args.client_secret_env,
        args.private_key_file,
        args.client_metadata_url,
        scopes,
        args.grant,
        args.oauth_redirect,
        args.oauth_issuer,
    )
    if not any(wanted):
        return None
    secret, key = _client_secret(args), _private_key(args)
    if args.oauth_issuer:
        from langop_infra.config._fields import issuer_allowed  # pydantic: only when used

        if not issuer_allowed(args.oauth_issuer):
            raise UsageError(
                f"--oauth-issuer {args.oauth_issuer!r} must be an https URL (http only on loopback)"
            )
    grant = cast("Grant", (args.grant or "auto").replace("-", "_"))
    if grant == "client_credentials" and not (secret or key):
        raise UsageError(
            "--grant client-credentials needs --client-id and --client-secret-env "
            "(or --private-key-file)"
        )
    if args.client_metadata_url and not args.client_metadata_url.startswith("https://"):
        raise UsageError("--client-metadata-url must be an https URL with a path")

    from langop_infra.mcp.oauth import FollowRedirect, LoopbackRedirect, OAuth2Auth

    redirect = args.oauth_redirect or "print"
    timeout = args.timeout or DEFAULT_TIMEOUT
    try:
        return OAuth2Auth(
            issuer=args.oauth_issuer,
            timeout=timeout,
            deadline=command_deadline(timeout),
            client_id=args.client_id,
            client_secret=secret,
            private_key=key,
            signing_algorithm=args.signing_algorithm,
            client_metadata_url=args.client_metadata_url,
            scopes=scopes,
            grant=grant,
            redirect=FollowRedirect()
            if redirect == "follow"
            else LoopbackRedirect(open_browser=redirect == "browser", timeout=_LOGIN_SECONDS),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _client_secret(args: argparse.Namespace) -> str | None:
    if not args.client_secret_env:
        return None
    if not args.client_id:
        raise UsageError("--client-secret-env needs --client-id")
    if not args.oauth_issuer:
        raise UsageError(
            "--client-secret-env needs --oauth-issuer URL: the authorization server the "
            "secret may be sent to (the `issuer` of its "
            "/.well-known/oauth-authorization-server), so a server cannot redirect it"
        )
    secret = os.environ.get(args.client_secret_env)
    if not secret:
        raise UsageError(
            f"environment variable {args.client_secret_env} (--client-secret-env) is unset "
            "or empty; export the client secret in it"
        )
    return secret


def _private_key(args: argparse.Namespace) -> str | None:
    if not args.private_key_file:
        return None
    if not args.client_id:
        raise UsageError("--private-key-file needs --client-id")
    try:
        with open(args.private_key_file, encoding="utf-8") as file:
            key = file.read(64 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read --private-key-file {args.private_key_file}: {exc}") from None
    if "PRIVATE KEY-----" not in key:
        raise UsageError(f"--private-key-file {args.private_key_file} holds no PEM private key")
    return key


def secrets_sent(args: argparse.Namespace, headers: dict[str, str]) -> list[str]:
    """Every credential this run sends: what no output may repeat, whatever the server echoes."""
    from langop_infra.core._log_scrub import watch
    from langop_infra.core._redact import Scrubber, secret_strings

    env = args.client_secret_env
    key = _private_key(args) if args.private_key_file else None
    found = secret_strings(headers, os.environ.get(env, "") if env else "", key or "")
    watch(Scrubber(found))  # log lines (LANGOP_LOG_LEVEL) mask them too
    return found


def person_may_log_in(args: argparse.Namespace) -> bool:
    """Whether the login may wait on a person (then it runs before any request timeout)."""
    confidential = bool(args.client_secret_env or args.private_key_file)
    return args.oauth_redirect != "follow" and not (
        confidential and args.grant == "client-credentials"
    )


def fail(exc: Exception, secrets: list[str]) -> int:
    """Print the one-line error, credentials and control characters removed; exit 1."""
    from langop_infra.core._redact import redact

    print(f"langop-infra tools: error: {redact(str(exc), secrets, limit=2000)}", file=sys.stderr)
    return 1


def scrub(value: object, secrets: list[str]) -> Any:
    """``value`` with every credential this run sent replaced by a marker."""
    from langop_infra.core._redact import Scrubber

    return Scrubber(secrets).value(value)


def scrubbed_json(document: object, secrets: list[str], indent: int | None = 2) -> str:
    """``document`` as terminal-safe JSON without the credentials this run sent."""
    from langop_infra.core._redact import json_text

    return json_text(scrub(document, secrets), indent)


def options(args: argparse.Namespace, headers: dict[str, str]) -> Any:
    """The client options the flags ask for."""
    from langop_infra.mcp import ClientOptions

    timeout = args.timeout or DEFAULT_TIMEOUT
    caps = {
        name: value
        for name, value in (
            ("max_total_bytes", args.max_bytes),
            ("max_pages", args.max_pages),
            ("max_tools", args.max_tools),
            ("max_response_bytes", getattr(args, "max_response_bytes", None)),
        )
        if value is not None
    }
    return ClientOptions(
        headers=headers,
        timeout=timeout,
        deadline=command_deadline(timeout),
        auth=getattr(args, "auth", None),
        transport=args.transport,
        verify=args.ca_bundle or True,
        protocol=args.protocol,
        **caps,
    )


def log_in_first(args: argparse.Namespace, target: str | list[str]) -> None:
    """Authorize before any request when a person may have to approve: the request
    timeouts must not run while they do. Otherwise the server's 401 starts the flow, and
    its challenge (scope included) is used as it stands."""
    if isinstance(target, str) and args.auth is not None and person_may_log_in(args):
        asyncio.run(args.auth.login(target))
