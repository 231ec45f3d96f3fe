"""http(s) URLs in stack config: a scheme, a host, a port in range, no credentials, and no
template placeholder left in (a documentation example copied as written)."""

from __future__ import annotations

import re

from langop_infra.config._invalid import invalid

# A documentation template's placeholder (`<YOUR_DOMAIN>`, `{{ .host }}`): never a real URL.
TEMPLATE_PLACEHOLDER = re.compile(r"<[^<>]*>|\{\{.*?\}\}")
UNEXPANDED_VARIABLE = re.compile(r"\$\{[^}]*\}")


def http_url(value: str) -> str:
    placeholder = TEMPLATE_PLACEHOLDER.search(value)
    if placeholder:
        raise invalid(
            "url_placeholder",
            f"{value!r} holds the template placeholder {placeholder.group(0)}: replace it "
            "with the real value",
        )
    if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
        raise invalid(
            "http_url", f"{value!r} is not an http(s) URL: write it as https://host[:port]/path"
        )
    authority = value.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        # The URL lands in a ConfigMap and env literals; credentials there would leak.
        raise invalid(
            "http_url",
            "the URL carries a user or password; remove them and send credentials in a "
            "header from a Secret",
        )
    _host_and_port(value, authority)
    return value


def _host_and_port(value: str, authority: str) -> None:
    """A host, and a port (when given) in 1-65535; ``${VAR}`` parts are the agent's to expand."""
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else None
    else:
        host, sep, port_text = (
            authority.rpartition(":") if ":" in authority else (authority, "", "")
        )
        port = port_text if sep else None
    if not host:
        raise invalid("http_url", f"{value!r} has no host: write it as https://host[:port]/path")
    if port is None or "${" in port:
        return
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise invalid(
            "http_url", f"{value!r}: port {port!r} is not a number in 1-65535; fix the port"
        )


def concrete_http_url(value: str) -> str:
    """An http(s) URL that nothing expands: ``${VAR}`` in it would be sent as written."""
    variable = UNEXPANDED_VARIABLE.search(value)
    if variable:
        raise invalid(
            "url_placeholder",
            f"{value!r} holds {variable.group(0)}, which nothing expands here: write the "
            "value itself (Pulumi config does not expand variables)",
        )
    return value
