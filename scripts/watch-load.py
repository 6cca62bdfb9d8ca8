#!/usr/bin/env python3
"""Pushes a running pincheck-watch's /metrics server past its budget, as a hostile peer would, and
reports what it cost: resident memory (VmRSS of the watch's process) and the time a normal scrape
takes beside the attack.

  scripts/watch-load.py --port PORT --pid PID [--pipelined 50000] [--slow 300] [--budget-mib 64] [--check]

Two phases, each bounded in time (traffic to 127.0.0.1 only):
  1. one client pipelines --pipelined `GET /metrics` requests with a 4 KiB receive buffer and never
     reads the answers (what grew the watch to 1.66 GiB before it respected backpressure);
  2. --slow connections each send a request head a few bytes a second (slowloris).
During and after each phase a normal scrape must be answered within a second. With --check the
exit status is 1 when a budget is exceeded: resident memory over --budget-mib, a scrape slower
than a second, or slow connections still open after the server's request timeout (10 s) plus 5 s.
Lines it prints (one fact each, for scripts/bench.sh and the tests):
  watch rss MiB start: 21.3
  watch rss MiB after 50000 pipelined requests: 24.0 (budget 64)
  ...
"""
import argparse
import socket
import sys
import time

REQUEST = b"GET /metrics HTTP/1.1\r\nHost: watch\r\n\r\n"


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def scrape(port, timeout=5.0):
    """One normal scrape on a new connection; its time in seconds, or None when it failed."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: watch\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        if not data.startswith(b"HTTP/1.1 200"):
            return None
        return time.monotonic() - started
    except OSError:
        return None


def flood(port, count, seconds):
    """Sends `count` pipelined requests without reading, for at most `seconds`; returns the socket
    (still open) and how many requests went out whole."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    payload = REQUEST * count
    sent = 0
    deadline = time.monotonic() + seconds
    stalled_since = None
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            n = s.send(payload[sent:sent + 65536])
            sent += n
            stalled_since = None
        except BlockingIOError:
            # The server stopped reading: that is backpressure working. Give it a moment, then stop.
            stalled_since = stalled_since or time.monotonic()
            if time.monotonic() - stalled_since > 2:
                break
            time.sleep(0.01)
        except OSError:
            break  # closed by the server (the pipelining cap)
    return s, sent // len(REQUEST)


def slow_connections(port, count, seconds, midway):
    """Opens `count` connections that send a request head a few bytes at a time for `seconds`,
    calling `midway()` once 3 s in; returns how many opened and how many the server had closed by
    the end."""
    head = b"GET /metrics HTTP/1.1\r\nHost: watch\r\n" + b"X-Slow: " + b"a" * 4096
    conns = []
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.setblocking(False)
            conns.append([s, 0, True])
        except OSError:
            pass
    started = time.monotonic()
    deadline = started + seconds
    while time.monotonic() < deadline:
        if midway and time.monotonic() - started >= 3:
            midway()
            midway = None
        for conn in conns:
            s, offset, alive = conn
            if not alive:
                continue
            try:
                s.send(head[offset:offset + 2])
                conn[1] = (offset + 2) % len(head)
                # A closed connection reads as end of file.
                if s.recv(1, socket.MSG_PEEK) == b"":
                    conn[2] = False
            except BlockingIOError:
                pass
            except OSError:
                conn[2] = False
        time.sleep(1)
    closed = sum(1 for c in conns if not c[2])
    for s, _, _ in conns:
        s.close()
    return len(conns), closed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--pipelined", type=int, default=50000)
    parser.add_argument("--slow", type=int, default=300)
    parser.add_argument("--budget-mib", type=float, default=64)
    parser.add_argument("--request-timeout", type=float, default=10, help="the server's request timeout, seconds")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    failures = []

    def timed_scrape(when):
        took = scrape(args.port)
        if took is None:
            print(f"watch scrape {when}: failed")
            failures.append(f"no scrape answered {when}")
        else:
            print(f"watch scrape ms {when}: {took * 1000:.1f}")
            if took > 1:
                failures.append(f"a scrape {when} took {took:.2f} s")

    def memory(when):
        mib = rss_mib(args.pid)
        print(f"watch rss MiB {when}: {mib:.1f} (budget {args.budget_mib:g})")
        if mib > args.budget_mib:
            failures.append(f"resident memory {when}: {mib:.1f} MiB")

    print(f"watch rss MiB start: {rss_mib(args.pid):.1f}")
    timed_scrape("before")

    s, sent = flood(args.port, args.pipelined, seconds=20)
    print(f"watch pipelined requests sent before the server stopped reading or closed: {sent} of {args.pipelined}")
    timed_scrape("during the pipelined flood")
    # The flood's connection still open: what the server holds for it once it has had time to work.
    time.sleep(2)
    memory(f"after {args.pipelined} pipelined requests")
    s.close()

    def beside_slow():
        timed_scrape(f"beside {args.slow} slow connections")
        memory(f"with {args.slow} slow connections")

    # Past the server's request timeout every slow connection must have been closed.
    seconds = args.request_timeout + 5
    opened, closed = slow_connections(args.port, args.slow, seconds, beside_slow)
    print(f"watch slow connections closed by the server within {seconds:g} s: {closed} of {opened}")
    if opened < args.slow:
        failures.append(f"only {opened} of {args.slow} slow connections could be opened")
    if closed < opened:
        failures.append(f"{opened - closed} slow connections still open after {seconds:g} s")
    memory("after the slow connections")
    timed_scrape("after")

    for failure in failures:
        print(f"watch budget exceeded: {failure}", file=sys.stderr)
    return 1 if (args.check and failures) else 0


if __name__ == "__main__":
    sys.exit(main())
