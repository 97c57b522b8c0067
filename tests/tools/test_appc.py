# SPDX-License-Identifier: MIT
"""appc, the application description compiler: the hello application
compiles to the golden bytes the kernel's unit test parses, decode() inverts
it, and every kind of mistake in a text description is reported by name
with exit status 2."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "apps" / "hello" / "hello.toml"
GOLDEN = Path(__file__).with_name("hello_golden.hex")
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import appc, appc_text, appdesc  # noqa: E402

PORT_0 = appdesc.PORT_0


@pytest.fixture(scope="module")
def hello_blob() -> bytes:
    return appc_text.compile_file(HELLO)


# ---- the hello application ---------------------------------------------------


def test_hello_matches_golden(hello_blob):
    # The same bytes are parsed by tests/unit/test_appdesc.c; if this fails
    # after an intended change, regenerate the golden as its comment says.
    assert hello_blob == appc.parse_dump(GOLDEN.read_text())


def test_golden_dump_text_is_current(hello_blob):
    body = GOLDEN.read_text().split("*/\n", 2)[-1]  # after the two comments
    assert body == appc.dump(hello_blob)


def test_hello_decodes_to_its_description(hello_blob):
    d = appdesc.decode(hello_blob)
    assert d["length"] == len(hello_blob) == 62
    timer, hello, radio = d["tasks"]
    assert timer == {
        "prog_id": 1,
        "rel_pid": 0,
        "priority": 1,
        "flags": appdesc.TASK_MOVABLE,
        "module": 0,
        "routes": [(appdesc.PID_MULTICAST, 0)],
        "init": (125000).to_bytes(4, "little"),
    }
    assert hello["prog_id"] == 2 and hello["routes"] == [(2, PORT_0)]
    assert hello["init"] == b""
    assert radio["prog_id"] == 3 and radio["priority"] == 2 and radio["flags"] == 0
    assert radio["routes"] == []
    assert d["groups"] == [{"rel_group": 0, "members": [(1, PORT_0)]}]


def test_encode_inverts_decode(hello_blob):
    assert appdesc.encode(appdesc.decode(hello_blob)) == hello_blob


def test_crc_check_value():
    assert appdesc.crc16(b"123456789") == 0x29B1


# ---- every feature of the text format ------------------------------------------

FULL = """
[app]
name = "full"
[programs]
a = 1
b = 200
[[task]]
name = "first"
program = "b"
priority = 6
module = 3
routes = ["second:15", "@g1", "@g0", {pid = "appmgr", port = 8}, {pid = 0xF1, port = 23}]
init = [{u8 = 255}, {u16 = 0x1234}, {u32 = 4294967295}, {i8 = -1}, {i16 = -2},
        {i32 = -2147483648}, {str = "hi"}, {hex = "de ad_BE EF"}]
[[task]]
name = "second"
program = "a"
priority = 0
movable = true
[[group]]
name = "g0"
members = ["first:0", "second:0", "second:1"]
[[group]]
name = "g1"
members = ["first:15"]
"""


def test_full_feature_description():
    d = appdesc.decode(appc_text.compile_text(FULL))
    first, second = d["tasks"]
    assert (first["prog_id"], first["priority"], first["module"], first["flags"]) == (200, 6, 3, 0)
    assert first["routes"] == [(1, PORT_0 + 15), (0xF0, 1), (0xF0, 0), (0xF3, 8), (0xF1, 23)]
    assert first["init"] == bytes.fromhex("ff 3412 ffffffff ff feff 00000080 6869 deadbeef")
    assert second["flags"] == appdesc.TASK_MOVABLE and second["routes"] == []
    assert [g["members"] for g in d["groups"]] == [
        [(0, PORT_0), (1, PORT_0), (1, PORT_0 + 1)],
        [(0, PORT_0 + 15)],
    ]


def test_limits_are_configurable():
    text = FULL.replace("priority = 6", "priority = 10")
    with pytest.raises(appdesc.AppcError):
        appc_text.compile_text(text)
    limits = appdesc.Limits(prio_levels=12)
    assert appdesc.decode(appc_text.compile_text(text, limits), limits)["tasks"][0]["priority"] == 10


# ---- the command line ------------------------------------------------------------


def test_main_writes_binary_and_c(tmp_path, hello_blob):
    out_bin, out_c = tmp_path / "hello.bin", tmp_path / "hello_desc.c"
    rc = appc.main([str(HELLO), "-o", str(out_bin), "--c", str(out_c), "--symbol", "hello_desc"])
    assert rc == 0
    assert out_bin.read_bytes() == hello_blob
    c = out_c.read_text()
    assert "#include <stdint.h>" in c
    assert "const uint8_t hello_desc[] = {" in c
    assert f"const uint16_t hello_desc_len = {len(hello_blob)};" in c
    assert appc.parse_dump(c.split("= {", 1)[1]) == hello_blob


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_generated_c_compiles(tmp_path):
    out_c = tmp_path / "d.c"
    assert appc.main([str(HELLO), "--c", str(out_c)]) == 0
    assert "const uint8_t hello_desc[]" in out_c.read_text()  # default symbol
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", str(out_c)]
    subprocess.run(cmd + ["-o", str(tmp_path / "d.o")], check=True)


def test_main_without_outputs_prints_the_dump(capsys, hello_blob):
    assert appc.main([str(HELLO)]) == 0
    assert appc.parse_dump(capsys.readouterr().out) == hello_blob


def test_main_usage_error_returns_2(capsys):
    assert appc.main([]) == 2
    assert "usage: appc" in capsys.readouterr().err


def test_main_missing_input(tmp_path, capsys):
    assert appc.main([str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_main_description_not_utf8_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "latin1.toml"
    path.write_bytes(HELLO.read_bytes().replace(b'name = "hello"', b'name = "h\xe9llo"', 1))
    assert appc.main([str(path), "--c", str(tmp_path / "x.c")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"appc: error: {path}: line 7, column 10: byte 0xe9 is not UTF-8 "
                                "text; a description is TOML, which is UTF-8"]
    assert not (tmp_path / "x.c").exists()


def test_motet_appc_on_random_bytes_is_one_line_and_status_2(tmp_path):
    path = tmp_path / "noise.toml"
    path.write_bytes(bytes(range(256)) * 3)
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "appc", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [f"appc: error: {path}: line 2, column 118: byte 0x80 is "
                                       "not UTF-8 text; a description is TOML, which is UTF-8"]
    assert res.stdout == ""


def test_an_output_appc_cannot_write_is_no_refusal_of_the_description(tmp_path, capsys):
    """A write failure was recorded as a refused description, status 2:
    it says what it is, exits with its own status and leaves no refusal."""
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    refusal = tmp_path / "refused" / "hello.txt"
    for out in (["-o", str(blocked / "hello.bin")], ["--c", str(blocked / "hello.c")]):
        status = appc.main([str(HELLO), *out, "--refusal-file", str(refusal)])
        assert status == appc.OUTPUT_FAILED != appc.REFUSED
        assert capsys.readouterr().err == (f"appc: error: cannot write {out[1]}: "
                                           "Not a directory\n")
        assert not refusal.exists()
    assert appc.main([str(tmp_path / "nope.toml"), "--refusal-file", str(refusal)]) == 2
    assert refusal.read_text() == (f"appc: error: cannot read {tmp_path / 'nope.toml'}: No such "
                                   "file or directory\n")


def test_main_rejects_bad_symbol(tmp_path, capsys):
    rc = appc.main([str(HELLO), "--c", str(tmp_path / "x.c"), "--symbol", "9x"])
    assert rc == 2
    assert "--symbol" in capsys.readouterr().err


# ---- text errors: each names its offender, exit status 2 ----------------------

HELLO_TEXT = HELLO.read_text()

def case(test_id, old, new, *patterns):
    """hello.toml with `old` replaced by `new` must fail with a message
    matching every regex in `patterns`."""
    return pytest.param(old, new, patterns, id=test_id)


MOVABLE_HELLO = 'movable = true\nroutes = ["radio'
TEXT_ERRORS = [
    case("unknown_program", 'program = "radio"', 'program = "radar"', "task 'radio'", "radar"),
    case("unknown_route_task", '"radio:0"', '"radion:0"', "task 'hello'", r"routes\[0\]", "radion"),
    case("unknown_route_group", '"@ticks"', '"@tocks"', "task 'timer'", "tocks"),
    case("bad_route_port", '"radio:0"', '"radio:16"', "task 'hello'", "port 16", r"0\.\.15"),
    case("bad_route_syntax", '"radio:0"', '"radio"', "task 'hello'", "'radio'"),
    case("bad_member_port", '"hello:0"', '"hello:99"', "group 'ticks'", "port 99"),
    case("unknown_member", '"hello:0"', '"hi:0"', "group 'ticks'", "unknown task 'hi'"),
    case("duplicate_member", '["hello:0"]', '["hello:0", "hello:0"]', "group 'ticks'", "already"),
    case("empty_group", '["hello:0"]', "[]", "group 'ticks'", "at least one member"),
    case("priority_too_high", "priority = 2", "priority = 7", "task 'radio'", "at most 6"),
    case("priority_negative", "priority = 2", "priority = -1", "task 'radio'", "priority", "-1"),
    case("priority_not_int", "priority = 2", 'priority = "high"', "task 'radio'", "priority"),
    case("duplicate_task", 'name = "radio"', 'name = "hello"', "task #2 'hello'", "task #1"),
    case(
        "duplicate_group",
        "[[group]]",
        '[[group]]\nname = "ticks"\nmembers = ["hello:1"]\n[[group]]',
        "group #1 'ticks'",
        "already used by group #0",
    ),
    case("bad_init_type", "u32 = 125000", "u64 = 125000", "task 'timer'", r"init\[0\]", "u64"),
    case("init_out_of_range", "u32 = 125000", "u8 = 256", "task 'timer'", r"init\[0\]", "256"),
    case("init_bad_hex", "u32 = 125000", 'hex = "abc"', "task 'timer'", "hex"),
    case("init_not_a_table", "{ u32 = 125000 }", "125000", "task 'timer'", r"init\[0\]"),
    case("missing_priority", "priority = 2\n", "", "task 'radio'", "missing field 'priority'"),
    case("missing_program", 'program = "radio"\n', "", "task 'radio'", "missing field 'program'"),
    case("missing_members", 'members = ["hello:0"]\n', "", "group 'ticks'", "field 'members'"),
    case("missing_programs", "[programs]", "[progs]", "unknown field 'progs'"),
    case("unknown_task_field", MOVABLE_HELLO, "moveable = true\nroutes = [\"radio", "'moveable'"),
    case("movable_not_bool", MOVABLE_HELLO, 'movable = 1\nroutes = ["radio', "task 'hello'"),
    case("module_out_of_range", "priority = 2\n", "priority = 2\nmodule = 256\n", "module", "256"),
    case("bad_task_name", 'name = "radio"', 'name = "ra dio"', "task #2", "ra dio"),
    case("program_id_zero", "radio = 3", "radio = 0", r"\[programs\] radio", "0"),
    case("program_id_shared", "radio = 3", "radio = 2", r"\[programs\] radio", "'hello'"),
    case("system_pid_not_global", '"radio:0"', "{pid = 0x05, port = 9}", "pid 0x05", "global"),
    case("unknown_system_task", '"radio:0"', '{pid = "clock", port = 9}', "'clock'"),
    case("system_port_range", '"radio:0"', '{pid = "appmgr", port = 24}', "port", "24"),
    case("route_to_system_init", '"radio:0"', '{pid = "appmgr", port = 0}', "task 'hello'",
         r"routes\[0\]", "port 0 is the system port INIT", r"8\.\.23"),
    case("route_to_system_timeout", '"radio:0"', '{pid = 0xF1, port = 4}', "task 'hello'",
         "system port TIMEOUT0"),
    case("route_to_last_system_port", '"radio:0"', '{pid = "migrator", port = 7}',
         "system port TIMEOUT3"),
    case("route_to_appmgr_bus_port", '"radio:0"', '{pid = "appmgr", port = 9}', "task 'hello'",
         r"routes\[0\]", "port 9 of pid 0xf3 \\(appmgr\\) is the bus's", "PORT_0 \\(8\\) only"),
    case("invalid_toml", "[app]", "[app", "invalid TOML"),
    case("oversize", "u32 = 125000", 'hex = "' + "00" * 1000 + '"', "1024"),
]


@pytest.mark.parametrize("old,new,patterns", TEXT_ERRORS)
def test_text_error(tmp_path, capsys, old, new, patterns):
    text = HELLO_TEXT
    assert old in text, old
    path = tmp_path / "app.toml"
    path.write_text(text.replace(old, new, 1))
    assert appc.main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.startswith("appc: error: ") and str(path) in err
    for pattern in patterns:
        assert re.search(pattern, err), f"{pattern!r} not in {err!r}"


def test_no_tasks():
    with pytest.raises(appdesc.AppcError, match="at least one task"):
        appc_text.compile_text('task = []\n[app]\nname = "x"\n[programs]\nt = 1\n')


# ---- decode() validates as the kernel does -------------------------------------


def _reseal(blob: bytearray) -> bytes:
    blob[10:12] = b"\0\0"
    blob[10:12] = appdesc.crc16(bytes(blob)).to_bytes(2, "little")
    return bytes(blob)


# (offset, new byte, kernel error, bad offset): the same rules as
# tests/unit/test_appdesc.c, applied to the hello bytes.
DECODE_ERRORS = [
    (0, ord("X"), "MT_ERR_DESC_HEADER", 0),
    (4, 2, "MT_ERR_DESC_HEADER", 4),
    (7, 1, "MT_ERR_DESC_HEADER", 7),
    (5, 0, "MT_ERR_DESC_HEADER", 5),
    (6, 9, "MT_ERR_DESC_LENGTH", 6),
    (12 + 1, 1, "MT_ERR_DESC_TASK", 25),  # rel_pid 1 twice: found at the second
    (36 + 2, 7, "MT_ERR_DESC_TASK", 38),  # the manager's priority
    (36 + 3, 2, "MT_ERR_DESC_TASK", 39),  # unknown flag
    (24 + 6, 10, "MT_ERR_DESC_LENGTH", 30),  # routes into the header
    (0x34, 0x10, "MT_ERR_DESC_ROUTE", 0x34),  # neither relative nor global
    (0x35, 1, "MT_ERR_DESC_ROUTE", 0x35),  # multicast to group 1 of 1
    (0x30 + 1, 0, "MT_ERR_DESC_GROUP", 0x31),  # empty group
    (0x3D, 7, "MT_ERR_DESC_GROUP", 0x3D),  # member on a system port
    (0x3B, 0, "MT_ERR_DESC_ROUTE", 0x3B),  # hello's route to radio's INIT
    (0x3B, 5, "MT_ERR_DESC_ROUTE", 0x3B),  # ... to radio's TIMEOUT1
    (0x3B, 7, "MT_ERR_DESC_ROUTE", 0x3B),  # ... to the last system port
]


@pytest.mark.parametrize("at,value,code,offset", DECODE_ERRORS)
def test_decode_rejects(hello_blob, at, value, code, offset):
    blob = bytearray(hello_blob)
    blob[at] = value
    with pytest.raises(appdesc.DescError) as e:
        appdesc.decode(_reseal(blob))
    assert (e.value.code, e.value.offset) == (code, offset)


def test_decode_rejects_a_route_to_the_senders_own_timeout_port(hello_blob):
    blob = bytearray(hello_blob)
    blob[0x3A:0x3C] = bytes([1, 4])  # hello (relative pid 1) -> itself, TIMEOUT0
    with pytest.raises(appdesc.DescError, match="system port TIMEOUT0") as e:
        appdesc.decode(_reseal(blob))
    assert (e.value.code, e.value.offset) == ("MT_ERR_DESC_ROUTE", 0x3B)


def test_decode_rejects_a_global_route_to_a_system_port():
    text = HELLO_TEXT.replace('"radio:0"', '{pid = "appmgr", port = 8}')
    blob = bytearray(appc_text.compile_text(text))
    at = blob.index(bytes([0xF3, 8]))
    blob[at + 1] = 0  # appmgr's INIT
    with pytest.raises(appdesc.DescError) as e:
        appdesc.decode(_reseal(blob))
    assert (e.value.code, e.value.offset) == ("MT_ERR_DESC_ROUTE", at + 1)


def test_decode_rejects_a_route_to_the_managers_bus_ports():
    text = HELLO_TEXT.replace('"radio:0"', '{pid = "appmgr", port = 8}')
    blob = bytearray(appc_text.compile_text(text))
    at = blob.index(bytes([0xF3, 8]))
    for port in (9, 10, 11, 23):  # the verdict's, DISAGREED, DESC, the last
        blob[at + 1] = port
        bus_port = rf"port {port} of pid 0xf3 \(appmgr\) is the bus's"
        with pytest.raises(appdesc.DescError, match=bus_port) as e:
            appdesc.decode(_reseal(blob))
        assert (e.value.code, e.value.offset) == ("MT_ERR_DESC_ROUTE", at + 1)


def test_system_ports_match_the_kernel_header():
    header = (ROOT / "kernel/include/motet/sched.h").read_text()
    ports = re.findall(r"^\s*PORT_(\w+)", header[header.index("PORT_INIT = 0"):], re.M)
    assert tuple(ports[:ports.index("0")]) == appdesc.SYSTEM_PORTS
    assert appdesc.PORT_0 == 8


def test_every_application_in_the_tree_compiles():
    # *.profile.toml are task-cost profiles for `motet plan`, *.table.toml its
    # re-placement tables (docs/planner.md)
    for toml in sorted((ROOT / "apps").glob("*/*.toml")):
        if not toml.name.endswith((".profile.toml", ".table.toml")):
            appc_text.compile_file(toml)


def test_decode_rejects_checksum_and_length(hello_blob):
    with pytest.raises(appdesc.DescError, match="CHECKSUM"):
        appdesc.decode(hello_blob[:-1] + b"\x09")
    with pytest.raises(appdesc.DescError, match="LENGTH"):
        appdesc.decode(hello_blob[:-1])


def test_an_output_write_failing_part_way_leaves_the_old_output_whole(tmp_path):
    """appc truncated its output before writing it: a write failing part
    way (here the file size limit, as a full disk would) left a cut-off C
    file, which the build's next step compiled. The old output stays as it
    was, and no temporary is left beside it."""
    out = tmp_path / "hello_desc.c"
    out.write_text("/* the previous output */\n")
    limit = ("import resource, sys; sys.path.insert(0, sys.argv[1]); "
             "resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64)); "
             "from motetlib import appc; sys.exit(appc.main(sys.argv[2:]))")
    res = subprocess.run([sys.executable, "-c", limit, str(ROOT / "tools"), str(HELLO),
                          "--c", str(out)], capture_output=True, text=True)
    assert res.returncode == appc.OUTPUT_FAILED, res.stderr
    assert res.stderr == f"appc: error: cannot write {out}: File too large\n", res.stderr
    assert out.read_text() == "/* the previous output */\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hello_desc.c"]
    assert appc.main([str(HELLO), "--c", str(out)]) == 0
    assert "hello_desc[]" in out.read_text()
