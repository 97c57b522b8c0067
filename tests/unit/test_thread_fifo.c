/* SPDX-License-Identifier: MIT */
/*
 * The FIFO run-to-completion policy (the event-driven baseline): threads
 * run in the order they became ready, whatever their priorities, and none
 * takes the CPU from another; message handlers still preempt them by
 * priority.
 *
 * MOTET_TEST_KERNEL: thr_fifo
 */
#include <stdio.h>
#include <string.h>

#include "test_support.h"

#define STACK  THREAD_STACK_BYTES(0)
#define PID_GO 0x30
#define PID_H  0x31

static uint8_t stacks[4][STACK];
static char trace[256];
static sem_t gate;

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

static int setup(void **state)
{
    test_boot(state);
    memset(trace, 0, sizeof trace);
    sem_init(&gate, 0);
    return 0;
}

/* A job of three 1 ms steps. */
static void job(void *arg)
{
    char s[8];
    for (int i = 0; i < 3; i++) {
        snprintf(s, sizeof s, "%c ", (char) (intptr_t) arg);
        note(s);
        tport_busy(1000);
    }
}

static void gated_job(void *arg)
{
    sem_wait(&gate);
    job(arg);
}

static void spawn(int i, thread_entry_t entry, char who, mt_prio_t prio)
{
    thread_spec_t spec = {.entry = entry,
                          .arg = (void *) (intptr_t) who,
                          .stack = stacks[i],
                          .stack_size = STACK,
                          .prio = prio};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
}

static mt_err_t creator(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    spawn(0, job, 'L', 1);
    spawn(1, job, 'H', 5);
    spawn(2, job, 'M', 3);
    return MT_OK;
}

static void test_threads_run_to_completion_in_arrival_order(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_GO, .prio = 6, .handler = creator};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_GO, NULL, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_GO, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "L L L H H H M M M ");
}

static void isr_opens_gate(void)
{
    note("isr ");
    sem_post_isr(&gate);
}

static void test_a_woken_higher_thread_does_not_preempt(void **state)
{
    (void) state;
    spawn(0, gated_job, 'H', 6);
    tport_irq_attach(0, isr_opens_gate);
    tport_irq_schedule(0, 1500);
    spawn(1, job, 'L', 1);
    assert_string_equal(trace, "L L isr L H H H ");
}

static mt_err_t handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) note("h ");
    return MT_OK;
}

static void isr_posts_h(void)
{
    sched_post_isr(PID_H, PORT_0, NULL, 0, 0);
}

static void test_handlers_still_preempt_by_priority(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_H, .prio = 4, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_H, NULL, 0), MT_OK);
    tport_irq_attach(0, isr_posts_h);
    tport_irq_schedule(0, 1500);
    spawn(0, job, 'L', 1);
    assert_string_equal(trace, "L L h L ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_threads_run_to_completion_in_arrival_order, setup),
        cmocka_unit_test_setup(test_a_woken_higher_thread_does_not_preempt, setup),
        cmocka_unit_test_setup(test_handlers_still_preempt_by_priority, setup),
    };
    return cmocka_run_group_tests_name("fifo policy", tests, NULL, NULL);
}
