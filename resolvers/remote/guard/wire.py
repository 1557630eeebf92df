"""Every byte a remote request reads or writes, bounded at the socket.

httpx bounds each socket read by a timeout, and a server that sends one byte a second (in its
headers or its body), or an endless run of ``102 Processing`` answers, keeps every read within it.
So the polite client's connections use this module's network backend (``GuardedTransport``): each
read and write of a request is bounded by the request's own ``RequestGuard``, set for the thread
that sends the request (httpx's sync client reads an answer in the thread that asked for it):

* every read and write waits at most until the request's deadline and the run's remote time end
  (``deadline passed``, ``run's remote time spent``);
* from the answer's first byte, every ``stall_seconds`` must bring ``min_bytes_per_second`` (the
  headers count): a slower answer is cut (``answer too slow``), however long its deadline;
* ``cut`` (the session's stop) shuts the socket down: a read or a connect blocked on it returns at
  once, and the request raises ``RemoteStopped``.

A connection is opened without blocking (the connect is waited for in slices of at most
``CONNECT_SLICE`` seconds), so a stop reaches a request still connecting to a host that never
answers. Connections made by other transports (a test's ``MockTransport``, an environment proxy)
are not guarded; the deadline is still checked at every chunk of the body (``bounds.py``).
"""
from __future__ import annotations

import errno
import math
import select
import socket
import ssl
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

import httpcore
import httpx

from resolvers.errors import RemoteStopped
from resolvers.remote.bounds import Fault, RequestBounds, unavailable

CONNECT_SLICE = 0.25  # seconds a connect is waited for between two looks at the stop
_CURRENT = threading.local()


class RequestGuard:
    """One attempt's bounds at the socket: its deadline, the run's remote time, the minimum rate
    of its answer, and the stop."""

    def __init__(self, bounds: RequestBounds, url: object, min_bytes_per_second: float, stall_seconds: float,
                 run_left: Callable[[], float] = lambda: math.inf, run_spent: Callable[[str], Exception] | None = None):
        self.bounds = bounds
        self.url = url
        self.min_rate = min_bytes_per_second
        self.window = stall_seconds
        self._run_left = run_left
        self._run_spent = run_spent
        self._spent: Exception | None = None
        self.stopped = False
        self._sock: socket.socket | None = None
        self._window_start: float | None = None  # set at the answer's first byte
        self._window_bytes = 0

    # -- where the request stands --------------------------------------------------------------
    def _clock(self) -> float:
        return self.bounds.clock()

    def check(self) -> None:
        """Raise what ends the request now: a stop, the deadline, the run's remote time."""
        if self.stopped:
            raise RemoteStopped(self.bounds.service)
        if self.bounds.left() <= 0:
            raise self.bounds.passed(self.url)
        if self._run_left() <= 0 and self._run_spent is not None:
            if self._spent is None:  # (made once: the session counts the request cut)
                self._spent = self._run_spent(self.bounds.service)
            raise self._spent

    def clip(self, timeout: float | None) -> float:
        """``timeout`` (None: none) cut to the time the request has left; raises when none is left."""
        self.check()
        left = min(self.bounds.left(), self._run_left())
        return left if timeout is None else max(0.0, min(timeout, left))

    def took(self, size: int) -> None:
        """``size`` bytes read (0: the peer closed): a stop shows here, and so does a slow answer."""
        if self.stopped:
            raise RemoteStopped(self.bounds.service)
        now = self._clock()
        if self._window_start is None:
            self._window_start = now
        self._window_bytes += size
        elapsed = now - self._window_start
        if elapsed < self.window or self.min_rate <= 0:
            return
        if self._window_bytes < self.min_rate * elapsed:
            why = (f"{self.url} sent {self._window_bytes:,} bytes in {elapsed:.1f} s, under {self.min_rate:g} "
                   f"bytes/s (min_bytes_per_second over stall_seconds {self.window:g})")
            raise unavailable(self.bounds.service, Fault.TOO_SLOW, why)
        self._window_start, self._window_bytes = now, 0

    # -- the socket ------------------------------------------------------------------------------
    def attach(self, sock: socket.socket) -> None:
        self._sock = sock
        if self.stopped:
            self.cut()

    def cut(self) -> None:
        """Stop the request: its socket is shut down, so a read or write blocked on it returns."""
        self.stopped = True
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # not connected yet, or already closed
                pass


@contextmanager
def guarding(guard: RequestGuard) -> Iterator[RequestGuard]:
    """The guard of this thread's request while the block runs."""
    previous = getattr(_CURRENT, "guard", None)
    _CURRENT.guard = guard
    try:
        yield guard
    finally:
        _CURRENT.guard = previous


def current_guard() -> RequestGuard | None:
    return getattr(_CURRENT, "guard", None)


class SocketStream(httpcore.NetworkStream):
    """One connection's socket, every read and write bounded by the request's guard."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        guard = current_guard()
        if guard is not None:
            guard.attach(self._sock)
            timeout = guard.clip(timeout)
        try:
            self._sock.settimeout(timeout)
            data = self._sock.recv(max_bytes)
        except (socket.timeout, OSError) as exc:
            if guard is not None:
                guard.check()  # the deadline, the run's time or a stop ended the wait: say which
            raise (httpcore.ReadTimeout if isinstance(exc, socket.timeout) else httpcore.ReadError)(exc) from exc
        if guard is not None:
            guard.took(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        guard = current_guard()
        if guard is not None:
            guard.attach(self._sock)
        while buffer:
            try:
                self._sock.settimeout(guard.clip(timeout) if guard is not None else timeout)
                buffer = buffer[self._sock.send(buffer):]
            except (socket.timeout, OSError) as exc:
                if guard is not None:
                    guard.check()
                raise (httpcore.WriteTimeout if isinstance(exc, socket.timeout) else httpcore.WriteError)(exc) \
                    from exc

    def close(self) -> None:
        self._sock.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        guard = current_guard()
        try:
            self._sock.settimeout(guard.clip(timeout) if guard is not None else timeout)
            tls = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except (socket.timeout, OSError) as exc:
            self.close()
            if guard is not None:
                guard.check()
            raise (httpcore.ConnectTimeout if isinstance(exc, socket.timeout) else httpcore.ConnectError)(exc) \
                from exc
        if guard is not None:
            guard.attach(tls)
        return SocketStream(tls)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":  # httpcore asks it the negotiated protocol (an SSLSocket answers that too)
            return self._sock if isinstance(self._sock, ssl.SSLSocket) else None
        if info == "socket":
            return self._sock
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "is_readable":  # an idle connection the server closed: readable (at EOF)
            return self._sock.fileno() < 0 or bool(select.select([self._sock], [], [], 0)[0])
        return None


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's network backend for the polite client: connections whose every byte is guarded."""

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        guard = current_guard()
        last: Exception | None = None
        try:
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:  # the name does not resolve
            raise httpcore.ConnectError(exc) from exc
        for family, kind, proto, _, address in addresses:
            sock = socket.socket(family, kind, proto)
            try:
                for option in socket_options or ():
                    sock.setsockopt(*option)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if local_address is not None:
                    sock.bind((local_address, 0))
                if guard is not None:
                    guard.attach(sock)
                _connect(sock, address, timeout, guard)
                return SocketStream(sock)
            except OSError as exc:  # refused, unreachable: the next address, if any
                sock.close()
                last = exc
            except BaseException:  # the connect timed out, the guard ended it, an interrupt
                sock.close()
                raise
        raise httpcore.ConnectError(last or OSError(f"no address for {host}"))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return httpcore.SyncBackend().connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        httpcore.SyncBackend().sleep(seconds)


def _connect(sock: socket.socket, address: Any, timeout: float | None, guard: RequestGuard | None) -> None:
    """Connect without blocking for more than ``CONNECT_SLICE`` at a time, looking at the guard
    (a stop, the deadline) between slices; ``timeout`` (None: none) bounds the whole connect."""
    sock.setblocking(False)
    status = sock.connect_ex(address)
    waited = 0.0
    while status in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY, errno.EINTR):
        left = math.inf if timeout is None else timeout - waited
        if left <= 0:
            raise httpcore.ConnectTimeout(f"connecting to {address} took more than {timeout:g} s")
        step = min(CONNECT_SLICE, left, guard.clip(None) if guard is not None else math.inf)
        _, writable, _ = select.select([], [sock], [], step)
        waited += step
        if writable:
            status = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            break
        if guard is not None:
            guard.check()
    if status != 0:
        raise OSError(status, errno.errorcode.get(status, str(status)))
    sock.setblocking(True)


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport with the guarded network backend (``limits``: connections and keep-alive)."""

    def __init__(self, limits: httpx.Limits):
        super().__init__(limits=limits)
        # httpx builds its connection pool without a network backend of the caller's choice; this
        # pool is the same but for the backend (a test trickling headers fails if it is not used)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend())
