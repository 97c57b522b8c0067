/* SPDX-License-Identifier: MIT */
/*
 * Kills that race with interrupts and with a more important killer, on the
 * native port (whose interrupts a test can make pending at an exact
 * point: the next port_irq_restore() that turns them on takes it).
 *
 * - A task killed while on the stack, with a message of its own waiting at
 *   its level: an interrupt at the end of its handler (where its frame is
 *   popped and its kill begins) or during its FINAL must not run it again.
 * - A task killed by a more important handler runs FINAL under the
 *   killer's priority: nothing the killer outranks, its own waiting
 *   message among them, may start above FINAL (rule 4 for the killer).
 * - A task called by the kernel (sched_task_call(), the migrator's
 *   SERIALIZE and DESERIALIZE) that kills itself is reported gone, even
 *   when an interrupt right after its pop creates a new task of the same
 *   pid in its freed control block (the same pid at the same address),
 *   or when another handler asked for its kill while it ran; and what it
 *   queued above its caller's level has run when the call returns.
 * - A task whose INIT failed, between that INIT's pop and its destruction
 *   (interrupts on, as for a kill): a handler run at an interrupt's exit
 *   there finds it, and neither its message nor a second INIT starts it.
 *
 * Without the event log the pending interrupt is taken exactly in those
 * windows (with it, a record's own lock may take it earlier, which must be
 * as harmless).
 *
 * MOTET_TEST_KERNEL: default nolog
 */
#include <stdatomic.h>

#include "native.h"
#include "sched_internal.h"
#include "slab.h"
#include "test_support.h"

enum { PID_LOW = 0x20, PID_VICTIM, PID_HIGH, PID_LOWT, PID_MID };

static unsigned victim_runs, victim_finals, isr_runs;
static bool irq_after_handler, irq_in_final;

static void isr_counts(void)
{
    isr_runs++;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static mt_err_t victim(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_FINAL) {
        victim_finals++;
        if (irq_in_final) atomic_fetch_or(&port_native_irq_pending, 1u << 0);
        return MT_OK;
    }
    if (port < PORT_0) return MT_OK;
    victim_runs++;
    if (port == PORT_0) {
        assert_int_equal(sched_task_kill(PID_VICTIM), MT_OK); /* waits: on the stack */
        assert_int_equal(sched_send_to(PID_VICTIM, PORT_0 + 1, NULL, 0, 0), MT_OK); /* waits */
        if (irq_after_handler) atomic_fetch_or(&port_native_irq_pending, 1u << 0);
    }
    return MT_OK;
}

static mt_err_t low(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    return port == PORT_0 ? sched_send_to(PID_VICTIM, PORT_0, NULL, 0, 0) : MT_OK;
}

static void run_victim(bool after_handler, bool in_final)
{
    make(PID_LOW, 1, low);
    make(PID_VICTIM, 3, victim);
    port_native_irq_attach(0, isr_counts);
    victim_runs = victim_finals = isr_runs = 0;
    irq_after_handler = after_handler;
    irq_in_final = in_final;
    assert_int_equal(sched_send_to(PID_LOW, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(victim_runs, 1); /* its waiting message died with it */
    assert_int_equal(victim_finals, 1);
    assert_null(sched_find_task(PID_VICTIM));
    assert_int_equal(sched_queued_count(), 0);
}

static void test_a_kill_on_the_stack_runs_final_once_and_nothing_after(void **state)
{
    (void) state;
    run_victim(false, false);
    assert_int_equal(isr_runs, 0);
}

static void test_an_interrupt_as_the_killed_frame_pops_runs_nothing_of_it(void **state)
{
    (void) state;
    run_victim(true, false);
    assert_int_equal(isr_runs, 1);
}

static void test_an_interrupt_during_final_runs_nothing_of_it(void **state)
{
    (void) state;
    run_victim(false, true);
    assert_int_equal(isr_runs, 1);
}

/* ---- FINAL under a more important killer ---- */

static unsigned high_entries, high_depth, high_max_depth, mid_runs;

static mt_err_t high(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port < PORT_0) return MT_OK;
    high_entries++;
    if (++high_depth > high_max_depth) high_max_depth = high_depth;
    if (port == PORT_0) {
        assert_int_equal(sched_send_to(PID_HIGH, PORT_0 + 1, NULL, 0, 0), MT_OK); /* rule 4 */
        assert_int_equal(sched_task_kill(PID_LOWT), MT_OK);
        assert_int_equal(mid_runs, 0); /* FINAL's send waits below the killer */
    }
    high_depth--;
    return MT_OK;
}

static mt_err_t lowt(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    return port == PORT_FINAL ? sched_send_to(PID_MID, PORT_0, NULL, 0, 0) : MT_OK;
}

static mt_err_t mid(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) mid_runs++;
    return MT_OK;
}

static void test_final_under_a_more_important_killer_keeps_its_priority(void **state)
{
    (void) state;
    make(PID_HIGH, 7, high);
    make(PID_LOWT, 1, lowt);
    make(PID_MID, 4, mid);
    high_entries = high_depth = high_max_depth = mid_runs = 0;
    assert_int_equal(sched_send_to(PID_HIGH, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(high_max_depth, 1); /* never entered twice */
    assert_ptr_equal(sched.current, &task_none);
    assert_int_equal(sched_stack_depth(), 0);
    assert_int_equal(high_entries, 2); /* its own message, once it had returned */
    assert_int_equal(mid_runs, 1);
    assert_null(sched_find_task(PID_LOWT));
}

/* ---- a called task that kills itself, and its pid's new task ---- */

extern slab_cache_t task_cache; /* task.c */

enum { PID_CALLED = 0x30, PID_CREATOR };

static task_t *called_block;
static bool called_block_was_free;

/* Its FINAL returns with interrupts off and one pending: nothing of the
 * kill takes it, and the first restore after the pop does, the moment an
 * interrupt would find the control block freed and the pid unused. */
static mt_err_t called(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) assert_int_equal(sched_task_kill(PID_CALLED), MT_OK); /* waits */
    if (port == PORT_FINAL) {
        (void) port_irq_save();
        atomic_fetch_or(&port_native_irq_pending, 1u << 0);
    }
    return MT_OK;
}

static void isr_recreates_called(void)
{
    called_block_was_free = !sched_find_task(PID_CALLED) && !slab_owns(&task_cache, called_block);
    assert_int_equal(sched_post_isr(PID_CREATOR, PORT_0, NULL, 0, 0), MT_OK);
}

static mt_err_t creator(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    task_spec_t spec = {.pid = PID_CALLED, .prio = 2, .handler = called};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    return MT_OK;
}

static void test_a_called_task_that_kills_itself_is_gone_though_its_pid_lives_again(void **state)
{
    (void) state;
    make(PID_CALLED, 2, called);
    make(PID_CREATOR, 7, creator);
    port_native_irq_attach(0, isr_recreates_called);
    called_block_was_free = false;
    called_block = sched_find_task(PID_CALLED);
    assert_int_equal(sched_task_call(PID_CALLED, PORT_0, NULL, 0), MT_ERR_NO_TASK);
    /* The case this tests: the new task took the old one's freed block. */
    assert_true(called_block_was_free);
    assert_ptr_equal(sched_find_task(PID_CALLED), called_block);
    assert_int_equal(called_block->flags & TASK_INITIALISED, 0);
}

/* ---- what a called task leaves below it, and a kill by another ---- */

enum { PID_CALLED_HIGH = 0x40, PID_BELOW, PID_KILLER };

static unsigned below_runs, called_high_runs;

static mt_err_t below(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port == PORT_0) below_runs++;
    return MT_OK;
}

static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port == PORT_0) assert_int_equal(sched_task_kill(PID_CALLED_HIGH), MT_OK); /* waits */
    return MT_OK;
}

/* PORT_0: sends to a less important task (queued, below it); PORT_0 + 1:
 * to a more important one that asks for its kill (run at once). */
static mt_err_t called_high(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port < PORT_0) return MT_OK;
    called_high_runs++;
    mt_pid_t to = port == PORT_0 ? PID_BELOW : PID_KILLER;
    assert_int_equal(sched_send_to(to, PORT_0, NULL, 0, 0), MT_OK);
    return MT_OK;
}

/* The call drains what its handler queued above the caller's level
 * before it returns: the prio-3 task the prio-5 one sent to has run. */
static void test_a_called_task_leaves_nothing_queued_above_its_caller(void **state)
{
    (void) state;
    make(PID_CALLED_HIGH, 5, called_high);
    make(PID_BELOW, 3, below);
    below_runs = called_high_runs = 0;
    task_t *t = sched_find_task(PID_CALLED_HIGH);
    assert_int_equal(sched_task_call(PID_CALLED_HIGH, PORT_0, NULL, 0), MT_OK);
    assert_int_equal(called_high_runs, 1);
    assert_int_equal(below_runs, 1);
    assert_ptr_equal(sched_find_task(PID_CALLED_HIGH), t);
}

/* A kill asked for by another handler while the called one ran ends it at
 * its pop, and the call says so. */
static void test_a_called_task_killed_by_another_handler_is_reported_gone(void **state)
{
    (void) state;
    make(PID_CALLED_HIGH, 5, called_high);
    make(PID_KILLER, 7, killer);
    called_high_runs = 0;
    assert_int_equal(sched_task_call(PID_CALLED_HIGH, PORT_0 + 1u, NULL, 0), MT_ERR_NO_TASK);
    assert_int_equal(called_high_runs, 1);
    assert_null(sched_find_task(PID_CALLED_HIGH));
}

/* ---- a failed INIT's task, between its pop and its destruction ---- */

enum { PID_BADINIT = 0x50, PID_PROBE };

static unsigned badinit_inits, badinit_others, probe_runs;
static bool probe_found_it;
static mt_err_t probe_send, probe_init, probe_init_sent;

/* Its INIT fails with an interrupt pending: the first turning on of
 * interrupts after its handler, where its end begins, takes it. */
static mt_err_t badinit(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_INIT) {
        badinit_others++;
        return MT_OK;
    }
    badinit_inits++;
    atomic_fetch_or(&port_native_irq_pending, 1u << 0);
    return MT_ERR_INVALID;
}

static void isr_wakes_probe(void)
{
    assert_int_equal(sched_post_isr(PID_PROBE, PORT_0, NULL, 0, 0), MT_OK);
}

/* Run at the interrupt's exit: it outranks everything on the stack. */
static mt_err_t probe(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    probe_runs++;
    probe_found_it = sched_find_task(PID_BADINIT) != NULL;
    probe_send = sched_send_to(PID_BADINIT, PORT_0, NULL, 0, 0);
    probe_init = sched_task_init(PID_BADINIT, NULL, 0);
    probe_init_sent = sched_send_to(PID_BADINIT, PORT_INIT, NULL, 0, 0);
    return MT_OK;
}

static void test_nothing_starts_a_failed_inits_task_before_it_is_destroyed(void **state)
{
    (void) state;
    make(PID_PROBE, 7, probe);
    task_spec_t spec = {.pid = PID_BADINIT, .prio = 2, .handler = badinit};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    port_native_irq_attach(0, isr_wakes_probe);
    badinit_inits = badinit_others = probe_runs = 0;
    probe_found_it = false;
    probe_send = probe_init = probe_init_sent = MT_ERR_INVALID;
    assert_int_equal(sched_task_init(PID_BADINIT, NULL, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(probe_runs, 1);
    assert_true(probe_found_it);         /* the window this tests: not destroyed yet */
    assert_int_equal(probe_send, MT_OK); /* waits for an INIT that never ends well */
    assert_int_equal(probe_init, MT_ERR_STATE);
    assert_int_equal(probe_init_sent, MT_ERR_STATE);
    assert_int_equal(badinit_inits, 1);
    assert_int_equal(badinit_others, 0);
    assert_null(sched_find_task(PID_BADINIT));
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched.held, 0);
    assert_int_equal(sched_stack_depth(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_kill_on_the_stack_runs_final_once_and_nothing_after,
                               test_boot),
        cmocka_unit_test_setup(test_an_interrupt_as_the_killed_frame_pops_runs_nothing_of_it,
                               test_boot),
        cmocka_unit_test_setup(test_an_interrupt_during_final_runs_nothing_of_it, test_boot),
        cmocka_unit_test_setup(test_final_under_a_more_important_killer_keeps_its_priority,
                               test_boot),
        cmocka_unit_test_setup(
            test_a_called_task_that_kills_itself_is_gone_though_its_pid_lives_again, test_boot),
        cmocka_unit_test_setup(test_a_called_task_leaves_nothing_queued_above_its_caller,
                               test_boot),
        cmocka_unit_test_setup(test_a_called_task_killed_by_another_handler_is_reported_gone,
                               test_boot),
        cmocka_unit_test_setup(test_nothing_starts_a_failed_inits_task_before_it_is_destroyed,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
