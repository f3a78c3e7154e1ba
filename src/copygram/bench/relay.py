"""A counting TCP relay for benchmarks: it forwards a loopback port to a server and counts the
bytes each way and the round trips (the client sending again after the server answered), so
that a figure measured on loopback can be moved to a network (:mod:`copygram.bench.rpc`).

Not a transport for users: copygram talks to RPC servers directly; this sits between them
only while a benchmark measures. One thread per direction per connection; ~0.1 ms a round trip.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

__all__ = ["Relay", "Traffic"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Traffic:
    """Round trips and bytes (both ways) through one or more relays."""

    trips: int = 0
    bytes: int = 0

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(self.trips + other.trips, self.bytes + other.bytes)

    def __sub__(self, other: Traffic) -> Traffic:
        return Traffic(self.trips - other.trips, self.bytes - other.bytes)


class Relay:
    """Listens on a free loopback port (:attr:`endpoint`) and relays every connection to
    ``upstream``, counting as it goes. :meth:`close` stops it."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self._upstream = upstream
        self._lock = threading.Lock()
        self._trips = 0
        self._bytes = 0
        self._last = "down"  # a client's first send is a round trip
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        self.endpoint = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def traffic(self) -> Traffic:
        with self._lock:
            return Traffic(self._trips, self._bytes)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self._upstream)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, "up"), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, "down"),
                             daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, direction: str) -> None:
        try:
            while data := source.recv(_CHUNK):
                with self._lock:
                    self._bytes += len(data)
                    if direction == "up" and self._last == "down":
                        self._trips += 1
                    self._last = direction
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            sock.close()
