# SPDX-License-Identifier: MIT
"""A native module's end of the hub link against a hub that breaks the
protocol (ports/native/bus_native.c, docs/bus.md).

The test plays the hub: it welcomes the module, answers its first ADVANCE
with one EVENT and a GRANT past it, and looks at what the module does. A
well-formed event is taken and the module asks for time again; an event of
no known kind, one shorter than its kind's fields or with a transmission
result the interface has no name for ends the run with a clear message and
status 2, before any of it is used, rather than being taken with whatever
bytes the buffer held from an earlier message, or dropped unnoticed.
"""

import socket
import struct
import subprocess

import pytest

HELLO = "apps/hello/hello"
EV_RX, EV_TX_DONE, EV_PROBE, EV_HOST = 1, 2, 3, 4
WAIT_S = 20  # a guard against a hung module, not a timing check


def pack_msg(mtype, body=b""):
    return struct.pack("<IB", 1 + len(body), ord(mtype)) + body


def read_msg(conn):
    """(type, body) of the module's next message; body starts with its time."""
    head = read_exact(conn, 5)
    length, mtype = struct.unpack("<IB", head)
    return chr(mtype), read_exact(conn, length - 1)


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the module closed the link")
        data += chunk
    return data


def next_advance(conn):
    """The module's next ADVANCE: its time (the messages before it skipped)."""
    while True:
        mtype, body = read_msg(conn)
        if mtype == "A":
            return struct.unpack_from("<Q", body)[0]


def run_with_event(build_dir, tmp_path, event_tail):
    """Start a module on a hub of the test's, send it one EVENT whose body
    after its time is `event_tail`, then a GRANT past it. Returns (the
    module's time at its next ADVANCE or None if it closed the link, its
    exit status or None if it still runs, its stderr)."""
    exe = build_dir / HELLO
    assert exe.exists(), f"{exe} was not built"
    path = str(tmp_path / "hub.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    listener.settimeout(WAIT_S)
    proc = subprocess.Popen([str(exe), "--sim", "--bus", path, "--module", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        conn, _ = listener.accept()
        conn.settimeout(WAIT_S)
        mtype, _ = read_msg(conn)
        assert mtype == "H"
        conn.sendall(pack_msg("W", struct.pack("<I", 1)))
        now = next_advance(conn)
        at = now + 100
        try:
            conn.sendall(pack_msg("E", struct.pack("<Q", at) + event_tail))
            conn.sendall(pack_msg("G", struct.pack("<Q", at + 100)))
            asked = next_advance(conn)
        except (EOFError, ConnectionError):  # it stopped at the event
            asked = None
        if asked is not None:  # it went on: end the run as the hub does
            conn.sendall(pack_msg("Q", b"\0"))
        try:
            status = proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            status = None
        conn.close()
        return asked, status, proc.stderr.read().decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        listener.close()


def test_a_well_formed_event_is_taken_and_quit_gives_its_status(build_dir, tmp_path):
    # The end of a frame the module never sent: taken, and found spurious;
    # then QUIT's status 0 is the module's exit status (it was the length
    # byte of the STATS message the module sends before it exits).
    asked, status, _ = run_with_event(build_dir, tmp_path, bytes([EV_TX_DONE, 0]))
    assert asked is not None
    assert status == 0


@pytest.mark.parametrize("tail", [
    bytes([9]),                                 # no such kind
    bytes([EV_TX_DONE]),                        # its result missing
    bytes([EV_TX_DONE, 7]),                     # no such result
    bytes([EV_TX_DONE, 0, 0]),                  # a byte too many
    bytes([EV_PROBE, 1, 2]),                    # its id cut short
    bytes([EV_RX, 1, 2, 3]),                    # its counter capture cut short
], ids=["unknown-kind", "no-result", "bad-result", "long-result", "short-probe", "short-rx"])
def test_a_malformed_event_ends_the_run_before_it_is_used(build_dir, tmp_path, tail):
    asked, status, err = run_with_event(build_dir, tmp_path, tail)
    assert asked is None, "the module took the event and went on"
    assert status == 2
    assert "bad bus event from the hub" in err
