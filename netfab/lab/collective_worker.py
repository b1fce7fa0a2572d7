"""One host's side of the lab collective: run inside a host namespace as a script (stdlib only, no netfab).

`python3 collective_worker.py PORT ADDR...` listens on PORT at each ADDR (the host's NIC addresses) and answers
JSON lines on stdin, one JSON line each on stdout:

    {"op": "connect", "flows": [{"id": "f0", "src": "10.64.0.1", "dst": "10.64.0.3", "port": 7400}]}
    {"op": "step", "step": 3, "start": <CLOCK_MONOTONIC seconds>, "sizes": {"f0": 1048576}, "timeout": 30}
    {"op": "quit"}

A step sends `sizes[id]` bytes on each of this host's persistent flow connections at `start` (every worker gets
the same instant: CLOCK_MONOTONIC is one clock for all network namespaces, so it acts as the barrier) and
reports, per flow, the seconds from `start` until the receiver acknowledged the last byte (null = timed out).
Connections persist across steps, as a collective library's queue pairs do, so steps measure the path and not
TCP's handshake and slow start.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from typing import Any

_HEADER = struct.Struct("!Q")
_ACK = b"\x01"
_CHUNK = 1 << 20


def _recv_exact(conn: socket.socket, n: int, buf: memoryview) -> bool:
    """Read n bytes (discarding them into buf); False when the peer closed first."""
    got = 0
    while got < n:
        k = conn.recv_into(buf, min(len(buf), n - got))
        if k == 0:
            return False
        got += k
    return True


def _serve_connection(conn: socket.socket) -> None:
    buf = memoryview(bytearray(_CHUNK))
    head = memoryview(bytearray(_HEADER.size))
    with conn:
        while True:
            got = 0
            while got < _HEADER.size:
                k = conn.recv_into(head[got:], _HEADER.size - got)
                if k == 0:
                    return
                got += k
            (size,) = _HEADER.unpack(head)
            if not _recv_exact(conn, size, buf):
                return
            conn.sendall(_ACK)


def _listen(addr: str, port: int) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(64)

    def accept() -> None:
        while True:
            conn, _ = srv.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_serve_connection, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def _wait_until(when: float) -> None:
    # Sleep most of the way, then spin: a sleep alone wakes up to a millisecond late, which would skew the
    # flows' common start by more than the healthy ones take on a fast path.
    while True:
        left = when - time.monotonic()
        if left <= 0:
            return
        time.sleep(left - 0.002 if left > 0.003 else 0)


def _send(
    conn: socket.socket, size: int, start: float, timeout: float, payload: memoryview, out: dict[str, Any], fid: str
) -> None:
    _wait_until(start)
    try:
        conn.settimeout(timeout)
        conn.sendall(_HEADER.pack(size))
        sent = 0
        while sent < size:
            n = min(len(payload), size - sent)
            conn.sendall(payload[:n])
            sent += n
        if conn.recv(1) != _ACK:
            out[fid] = None
            return
        out[fid] = time.monotonic() - start
    except OSError:
        out[fid] = None


def main(argv: list[str]) -> int:
    port = int(argv[1])
    for addr in argv[2:]:
        _listen(addr, port)
    payload = memoryview(bytes(_CHUNK))
    conns: dict[str, socket.socket] = {}
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.get("op")
        if op == "quit":
            break
        if op == "connect":
            errors = []
            for flow in cmd["flows"]:
                try:
                    conn = socket.create_connection(
                        (flow["dst"], int(flow["port"])), timeout=10, source_address=(flow["src"], 0)
                    )
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    conns[flow["id"]] = conn
                except OSError as exc:
                    errors.append(f"{flow['src']} -> {flow['dst']}: {exc}")
            print(json.dumps({"ok": not errors, "errors": errors}), flush=True)
        elif op == "step":
            results: dict[str, Any] = {fid: None for fid in cmd["sizes"] if fid not in conns}
            threads = [
                threading.Thread(
                    target=_send,
                    args=(
                        conns[fid],
                        int(size),
                        float(cmd["start"]),
                        float(cmd.get("timeout", 30)),
                        payload,
                        results,
                        fid,
                    ),
                )
                for fid, size in cmd["sizes"].items()
                if fid in conns
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for fid, took in results.items():
                if took is None and fid in conns:  # bytes of a timed-out step may still be in flight: unusable
                    conns.pop(fid).close()
            print(json.dumps({"step": cmd["step"], "flows": results}), flush=True)
    for conn in conns.values():
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
