# SPDX-License-Identifier: MIT
"""The SPIN model of the task migration protocol (models/migration.pml):
it must verify, and each deliberately broken variant must fail. The model
is the protocol with the CONFIRM step: the destination may die at any
moment, the source may give up before its decision (out of time), and no
message is lost unless the destination dies after it started the task.
models/migration_casts.pml is the same with multicasts to the task's group,
every frame (the RESULT included) reaching each module at its own moment,
and a destination that may miss the successful RESULT and join late.

Each verifier (`spin -a`, then the C compiler) is built once per test
session for a model and its compile flags, and shared by the checks that
run it, each in a directory of its own (where pan leaves its trail); the
largest state space, the multicast model's, is about a million states,
about a minute for its slowest check. Skipped, saying why, when spin or a
C compiler is missing (`motet setup` installs spin).
"""

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
TIMEOUT_S = 300  # the slowest check takes about a minute on a loaded 2-core machine
PAN_CFLAGS = ("-O2", "-DVECTORSZ=2048")
# A check that expects a counterexample ends at the first error (pan's -c1):
# its search takes under a second even unoptimised, and its verifier is
# built without optimisation, 1.5 s of CPU against 8.5 s with -O2.
PAN_CFLAGS_COUNTEREXAMPLE = ("-O0", "-DVECTORSZ=2048")

pytestmark = [
    pytest.mark.skipif(not shutil.which("spin") or not shutil.which("cc"),
                       reason="spin or cc is not installed: run `motet setup` (Debian package "
                              "spin)"),
    pytest.mark.long,  # half the scenario stage's CPU (tests/conftest.py)
]


def copy_models(dest):
    for f in MODELS.glob("*.pml"):
        shutil.copy(f, dest)


def build_verifier(dest, model, cflags):
    """`spin -a model` and compile its pan.c in dest; returns dest / "pan"."""
    copy_models(dest)
    run = dict(cwd=dest, capture_output=True, text=True, timeout=TIMEOUT_S)
    res = subprocess.run(["spin", "-a", model], **run)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(["cc", *cflags, "-o", "pan", "pan.c"], **run)
    assert res.returncode == 0, res.stdout + res.stderr
    return dest / "pan"


@pytest.fixture(scope="session")
def verifier(tmp_path_factory):
    """verifier(model, noclaim, counterexample) -> the built pan of `model`
    (with -DNOCLAIM or with its claims; unoptimised for a check that expects
    a counterexample), built once per session and flags. Under
    pytest-xdist the directory is shared by the session's workers (the
    parent of each one's base temporary directory), a lock making one of
    them build it."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "spin-verifiers"
    shared.mkdir(exist_ok=True)

    def get(model, noclaim, counterexample):
        cflags = (*(PAN_CFLAGS_COUNTEREXAMPLE if counterexample else PAN_CFLAGS),
                  *(["-DNOCLAIM"] if noclaim else []))
        dest = shared / (Path(model).stem + ("-noclaim" if noclaim else "-claims")
                         + ("-counterexample" if counterexample else ""))
        with open(shared / f"{dest.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = dest / "built"
            if not done.exists():
                shutil.rmtree(dest, ignore_errors=True)
                dest.mkdir()
                build_verifier(dest, model, cflags)
                done.write_text(" ".join(cflags))
        return dest / "pan"

    return get


@pytest.fixture
def verify(tmp_path, verifier):
    """verify(model, *pan_args, noclaim=False, counterexample=False) ->
    (errors, output): runs the verifier of `model` in tmp_path, beside a
    copy of the models. counterexample: the check expects one (errors >= 1)."""
    copy_models(tmp_path)

    def run(model, *pan_args, noclaim=False, counterexample=False):
        res = subprocess.run([verifier(model, noclaim, counterexample), *pan_args],
                             cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
        found = re.search(r"errors: (\d+)", res.stdout)
        assert found, res.stdout + res.stderr
        return int(found.group(1)), res.stdout

    return run


def counterexample(tmp_path, model):
    """The failed assertion of the trail pan left."""
    res = subprocess.run(["spin", "-t", model], cwd=tmp_path, capture_output=True, text=True,
                         timeout=TIMEOUT_S)
    return [line for line in res.stdout.splitlines() if "assert" in line]


MODELS_CHECKED = ["migration.pml", "migration_casts.pml"]


@pytest.mark.parametrize("model", MODELS_CHECKED)
def test_model_has_no_assertion_violation_or_deadlock(verify, model):
    errors, out = verify(model, noclaim=True)
    assert errors == 0, out
    assert "invalid end states\t+" in out  # deadlocks were looked for


@pytest.mark.parametrize("model", MODELS_CHECKED)
def test_task_is_never_live_on_two_modules(verify, model):
    errors, out = verify(model, "-a", "-N", "single")
    assert errors == 0, out


@pytest.mark.parametrize("model,claim", [("migration.pml", "complete"),
                                         ("migration.pml", "settles"),
                                         ("migration_casts_no_clock.pml", "complete")])
def test_no_message_is_lost_and_the_task_settles(verify, model, claim):
    """Under weak fairness: every message is handled and the task ends up
    live on one module, however early the destination dies, unless it had
    already started the task (taken END), which then dies with it; the
    source may take the task back on a clock after its decision, until END
    is out, and send RESULT ok again. With multicasts, `complete` only
    (where the task settles does not depend on them), and without those
    timeouts after the decision: with them that search is too large for
    the run (models/migration_casts_no_clock.pml)."""
    errors, out = verify(model, "-a", "-f", "-N", claim)
    assert errors == 0, out


def test_a_migration_given_up_leaves_no_copy_at_a_live_destination(verify):
    """The source gives up before its decision at any moment (out of time),
    the destination stays up and may take the image after the failed
    outcome: the copy it attaches then is dropped on the source's ABORT.
    Without fairness: every run of the model ends, and its last state must
    hold no frozen copy at the destination. The task is still never live
    twice, and loses no message."""
    for claim, fair in (("no_stale_copy", []), ("single", []), ("complete", ["-f"])):
        errors, out = verify("migration_timeout.pml", "-a", *fair, "-N", claim)
        assert errors == 0, (claim, out)


def test_a_take_back_on_a_clock_with_end_out_makes_the_task_live_twice(verify):
    """The source takes the task back on a clock after its decision
    whether END is out or not: the destination may have taken END and
    started the task, which is then live on two modules (`single` fails).
    The protocol takes END out of the send queue first, and waits for its
    verdict once the bus interface has it (migration.pml verifies)."""
    errors, out = verify("migration_clock_after_end.pml", "-a", "-N", "single",
                         counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out and "live[0]&&live[1]" in out, out  # the claim `single`


def test_without_abort_a_late_image_leaves_a_copy_behind(verify):
    """A source that ignores the late ATTACHED of a migration it gave up:
    the copy stays frozen at the destination for good."""
    errors, out = verify("migration_no_abort.pml", "-a", "-N", "no_stale_copy",
                         counterexample=True)
    assert errors >= 1, out
    assert "acceptance cycle" in out


@pytest.mark.parametrize("variant", ["migration_reply_overtakes.pml",
                                     "migration_release_before_route.pml"])
def test_broken_variant_fails_verification(verify, tmp_path, variant):
    errors, out = verify(variant, noclaim=True, counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out
    # The counterexample: the task gets a bystander's message out of order.
    trail = counterexample(tmp_path, variant)
    assert any("next_p" in line for line in trail), trail


def test_without_copies_a_destination_dying_before_end_loses_messages(verify, tmp_path):
    """The protocol as it was before CONFIRM: the source frees what it
    forwards. A destination dying between the commit and END loses those
    messages, and the task, taken back, handles a later one first."""
    errors, out = verify("migration_no_copies.pml", noclaim=True, counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out
    trail = counterexample(tmp_path, "migration_no_copies.pml")
    assert any("next_" in line for line in trail), trail


def assert_multicasts_out_of_order(verify, tmp_path, model):
    """The broken `model` fails: the task handles a multicast out of order
    (twice, or after a later one)."""
    errors, out = verify(model, noclaim=True, counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out
    trail = counterexample(tmp_path, model)
    assert any("next_c" in line for line in trail), trail


def test_multicast_during_a_result_sent_again_is_handled_twice_before_the_cut(verify, tmp_path):
    """The protocol before the cut (the soak's duplicate): the task stays
    in its group at the source until the source's RESULT has reached every
    module, the destination joins at its own copy, and keeps whatever is
    forwarded. A multicast taken by both in between reaches the task twice:
    the assertion on the multicast sender's numbers fails."""
    assert_multicasts_out_of_order(verify, tmp_path, "migration_cast_at_result.pml")


def test_a_multicast_taken_before_a_late_join_is_lost_without_the_tail(verify, tmp_path):
    """The protocol before the tail: a destination that missed the
    successful RESULT (it went by while the destination was stopped) joins
    only at END. It has no cut when the FORWARDs come, so it drops every
    forwarded multicast; a multicast it took before joining is lost and the
    task handles a later one first. With the tail (migration_casts.pml: the
    late join at the first FORWARD, the multicasts recorded since the commit
    forwarded before END) the same runs verify."""
    assert_multicasts_out_of_order(verify, tmp_path, "migration_late_join.pml")


def test_a_module_that_missed_an_outcome_no_longer_kept_is_answered(verify):
    """A bounded history at the source: once it has decided, it may forget
    the outcome at any moment, and the bystander and the destination may
    each miss the final outcome and ask (PING) until answered. The source
    answers from where the task is; every message still reaches the task
    once, in order, the task is never live twice, and no run deadlocks."""
    model = "migration_forgotten.pml"
    errors, out = verify(model, noclaim=True)
    assert errors == 0, out
    assert "invalid end states\t+" in out
    for claim, fair in (("single", []), ("complete", ["-f"])):
        errors, out = verify(model, "-a", *fair, "-N", claim)
        assert errors == 0, (claim, out)


def test_without_an_answer_for_an_outcome_no_longer_kept_a_bystander_holds_for_good(verify):
    """The source as it was: it answers only the outcomes it still keeps. A
    bystander that missed one asks for good and never releases what it held
    back: `complete` fails (an acceptance cycle)."""
    errors, out = verify("migration_forgotten_no_answer.pml", "-a", "-f", "-N",
                         "complete", counterexample=True)
    assert errors >= 1, out
    assert "acceptance cycle" in out


def test_a_destination_stopped_and_taken_back_from_gives_back_nothing_twice(verify):
    """A destination that stops at any moment before it takes END and goes
    on at any later moment: once the source was told a frame to it went by
    (and took the task back), it learns the migration failed and drops its
    copy, giving back only what the source lacks; before that, it may join
    late with multicasts that went by it numbered past its cut, and keeps
    those it did not deliver itself. Every message is still handled once,
    in order, the task is never live twice, and no run deadlocks."""
    model = "migration_stalls.pml"
    errors, out = verify(model, noclaim=True)
    assert errors == 0, out
    assert "invalid end states\t+" in out
    errors, out = verify(model, "-a", "-N", "single")
    assert errors == 0, out


def test_a_destination_taken_back_from_that_gives_back_everything_duplicates(verify, tmp_path):
    """Motet before: the dropped copy gave back everything that reached it,
    the forwarded messages (the source kept copies) and the multicasts
    delivered after joining (the source recorded them): the task, taken
    back, handles one twice."""
    model = "migration_stall_gives_back_all.pml"
    errors, out = verify(model, noclaim=True, counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out
    trail = counterexample(tmp_path, model)
    assert any("next_" in line for line in trail), trail


def test_a_destination_that_drops_every_multicast_past_its_cut_loses_one(verify, tmp_path):
    """Motet before: a forwarded multicast numbered past the destination's
    cut was dropped as delivered there. One that went by the stopped
    destination before it joined late (at the FORWARD, having taken
    nothing later from its link) is lost: the task handles a later one
    first."""
    model = "migration_stall_went_by.pml"
    errors, out = verify(model, noclaim=True, counterexample=True)
    assert errors >= 1, out
    assert "assertion violated" in out
    trail = counterexample(tmp_path, model)
    assert any("next_c" in line for line in trail), trail
