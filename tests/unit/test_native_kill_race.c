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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
