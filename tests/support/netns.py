"""The local cluster's pod network: a network namespace the test makes itself, owning the pod
range, so the real API server's service proxy reaches servers the test runs "in" its pods.

kwok gives pods addresses from its node's pod range (10.0.0.0/24) and runs no container. The
API server refuses to proxy to loopback, so the test's own host takes the pods' place: a
namespace joined to this one by a veth pair, routed the pod range, which it answers on every
address of (a `local` route, Linux's "AnyIP"). A server bound in that namespace at a tool's
container port answers for that tool's pods. Nothing is routed anywhere else.
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from tests.support.kube import local_cluster
from tests.support.loopback import running

POD_RANGE = local_cluster.POD_RANGE
CLONE_NEWNET = 0x40000000


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass(frozen=True)
class PodNetwork:
    """A namespace that holds the pod range; ``host`` is this side's end of the veth."""

    name: str
    host: str

    def bind(self, port: int) -> socket.socket:
        """A listening TCP socket on every address of the namespace at ``port``."""
        made: list[socket.socket | BaseException] = []
        thread = threading.Thread(target=self._bind_inside, args=(port, made))
        thread.start()
        thread.join(30)
        if not made or isinstance(made[0], BaseException):
            raise RuntimeError(f"cannot bind port {port} in {self.name}: {made}")
        return made[0]

    def _bind_inside(self, port: int, made: list[Any]) -> None:
        # setns moves only the calling thread: a socket made here stays in the namespace.
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/var/run/netns/{self.name}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
            finally:
                os.close(fd)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("0.0.0.0", port))
            sock.listen(128)
            made.append(sock)
        except BaseException as error:  # handed to the caller's thread
            made.append(error)


def remove_stale() -> None:
    """Namespaces (and their veth and route) a killed test run left behind."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    for line in listed.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        tag = name.removeprefix("langop-pods-")
        if tag != name and tag.isdigit() and not os.path.exists(f"/proc/{tag}"):
            subprocess.run(["ip", "link", "del", f"lgp{tag}a"], capture_output=True, timeout=30)
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


@contextmanager
def pod_network(pod_range: str = POD_RANGE) -> Iterator[PodNetwork]:
    """The namespace and its routes for the block; all of it removed afterwards."""
    remove_stale()
    tag = str(os.getpid())
    name, outer, inner = f"langop-pods-{tag}", f"lgp{tag}a", f"lgp{tag}b"
    ip("netns", "add", name)
    try:
        ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        ip("link", "set", inner, "netns", name)
        ip("addr", "add", "10.250.0.1/30", "dev", outer)
        ip("link", "set", outer, "up")
        inside = ("netns", "exec", name, "ip")
        ip(*inside, "addr", "add", "10.250.0.2/30", "dev", inner)
        ip(*inside, "link", "set", inner, "up")
        ip(*inside, "link", "set", "lo", "up")
        ip(*inside, "route", "add", "local", pod_range, "dev", "lo")
        ip("route", "add", pod_range, "via", "10.250.0.2", "dev", outer)
        yield PodNetwork(name, "10.250.0.1")
    finally:
        subprocess.run(["ip", "link", "del", outer], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


@contextmanager
def serve_in_pods(network: PodNetwork, app: Any, port: int) -> Iterator[None]:
    """Serve ``app`` with uvicorn at ``port`` on every pod address until the block ends."""
    sock = network.bind(port)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    try:
        with running(uvicorn.Server(config), [sock], limit=30):
            yield
    finally:
        sock.close()
