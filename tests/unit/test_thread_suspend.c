/* SPDX-License-Identifier: MIT */
/*
 * Thread creation modes and suspend/resume (thread.h): a thread created
 * suspended waits for thread_resume(); one created THREAD_START_AT_RUN by
 * boot code first runs when sched_run() starts, so boot code is never
 * preempted; suspension holds ready and waiting threads alike; resume from
 * an interrupt runs the thread at interrupt exit; Thread-Metric's
 * preemptive pattern (each thread resumes the next higher and suspends
 * itself); and every refusal.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include <stdio.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)

static uint8_t stacks[3][STACK];
static thread_t *th[3];
static sem_t sem;

static int setup(void **state)
{
    test_boot(state);
    sem_init(&sem, 0);
    return 0;
}

static thread_t *spawn(int i, thread_entry_t entry, mt_prio_t prio, uint8_t start)
{
    th[i] = test_thread(stacks[i], STACK, entry, (void *) (intptr_t) i, prio, start);
    return th[i];
}

static void says(void *arg)
{
    char s[8];
    snprintf(s, sizeof s, "T%d ", (int) (intptr_t) arg);
    test_note(s);
}

static void test_created_suspended_runs_only_when_resumed(void **state)
{
    (void) state;
    spawn(0, says, 3, THREAD_START_SUSPENDED);
    test_note("boot ");
    assert_true(thread_suspended(th[0]));
    assert_int_equal(thread_resume(th[0]), MT_OK); /* outranks the boot code: runs now */
    test_note("back ");
    assert_string_equal(test_trace(), "boot T0 back ");
}

static void stops(void *arg)
{
    says(arg);
    sched_stop();
}

static void test_boot_code_is_not_preempted_before_sched_run(void **state)
{
    (void) state;
    spawn(0, says, 1, THREAD_START_AT_RUN);
    spawn(1, says, 3, THREAD_START_AT_RUN);
    spawn(2, stops, 0, THREAD_START_AT_RUN);
    test_note("boot ");
    sem_post(&sem); /* a preemption point: still nothing runs */
    test_note("run ");
    sched_run();
    assert_string_equal(test_trace(), "boot run T1 T0 T2 ");
}

static void creates_at_run(void *arg)
{
    (void) arg;
    test_note("C( ");
    spawn(1, says, 2, THREAD_START_AT_RUN); /* the scheduler runs: starts now */
    test_note(")C ");
}

static void test_at_run_from_a_thread_starts_now(void **state)
{
    (void) state;
    spawn(0, creates_at_run, 1, THREAD_START_NOW);
    assert_string_equal(test_trace(), "C( T1 )C ");
}

static void suspends_itself(void *arg)
{
    says(arg);
    assert_int_equal(thread_suspend(thread_self()), MT_OK);
    test_note("again ");
}

static void test_a_thread_suspends_itself_until_resumed(void **state)
{
    (void) state;
    spawn(0, suspends_itself, 2, THREAD_START_NOW);
    test_note("boot ");
    assert_int_equal(thread_suspend(th[0]), MT_OK); /* idempotent */
    assert_int_equal(thread_resume(th[0]), MT_OK);
    assert_string_equal(test_trace(), "T0 boot again ");
}

static void isr_resumes(void)
{
    test_note("isr ");
    assert_int_equal(thread_resume_isr(th[0]), MT_OK);
}

static void test_resume_from_an_interrupt_runs_at_its_exit(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_resumes);
    spawn(0, suspends_itself, 2, THREAD_START_NOW);
    test_note("raise ");
    tport_irq_raise(0);
    test_note("back ");
    assert_string_equal(test_trace(), "T0 raise isr again back ");
}

/* Holds thread 1 (lower, ready) suspended, then blocks: 1 must not run. */
static void suspends_the_lower(void *arg)
{
    (void) arg;
    spawn(1, says, 1, THREAD_START_NOW); /* lower: ready, does not run */
    assert_int_equal(thread_suspend(th[1]), MT_OK);
    test_note("wait ");
    sem_wait(&sem);
    test_note("resume ");
    assert_int_equal(thread_resume(th[1]), MT_OK);
    test_note("H-end ");
}

static void test_a_suspended_ready_thread_does_not_run(void **state)
{
    (void) state;
    spawn(0, suspends_the_lower, 3, THREAD_START_NOW);
    test_note("boot ");
    sem_post(&sem);
    assert_string_equal(test_trace(), "wait boot resume H-end T1 ");
}

static void waits_on_sem(void *arg)
{
    (void) arg;
    assert_int_equal(sem_wait(&sem), MT_OK);
    test_note("got ");
}

static void test_a_suspended_waiter_keeps_its_unit_until_resumed(void **state)
{
    (void) state;
    spawn(0, waits_on_sem, 2, THREAD_START_NOW);
    assert_int_equal(thread_suspend(th[0]), MT_OK);
    sem_post(&sem); /* the unit goes to the waiter, which stays held */
    test_note("posted ");
    assert_int_equal(sem_count(&sem), 0);
    assert_int_equal(thread_resume(th[0]), MT_OK);
    assert_string_equal(test_trace(), "posted got ");
}

/* Thread-Metric's preemptive test in small: each thread resumes the next
 * higher one and suspends itself; the highest suspends at once. */
static int rounds;

static void chain_link(void *arg)
{
    int i = (int) (intptr_t) arg;
    char s[8];
    for (;;) {
        snprintf(s, sizeof s, "%d", i);
        test_note(s);
        if (i < 2) thread_resume(th[i + 1]);
        if (i == 0) rounds++;
        thread_suspend(thread_self());
    }
}

static void test_each_thread_resumes_the_next_higher(void **state)
{
    (void) state;
    rounds = 0;
    for (int i = 0; i < 3; i++) spawn(i, chain_link, (mt_prio_t) (i + 1), THREAD_START_SUSPENDED);
    assert_int_equal(thread_resume(th[0]), MT_OK);
    /* 0 resumes 1, which preempts it, resumes 2, which suspends; then 1
     * suspends and 0 suspends: resume it again for the next round. */
    assert_int_equal(thread_resume(th[0]), MT_OK);
    assert_int_equal(thread_resume(th[0]), MT_OK);
    assert_string_equal(test_trace(), "012012012");
    assert_int_equal(rounds, 3);
}

static void isr_suspends(void)
{
    assert_int_equal(thread_suspend(th[0]), MT_ERR_STATE);
}

static void test_refusals(void **state)
{
    (void) state;
    spawn(0, waits_on_sem, 2, THREAD_START_NOW);
    assert_int_equal(thread_resume(th[0]), MT_ERR_STATE); /* not suspended */
    assert_int_equal(thread_suspend(NULL), MT_ERR_INVALID);
    tport_irq_attach(0, isr_suspends);
    tport_irq_raise(0);
    thread_spec_t spec = {
        .entry = says, .stack = stacks[1], .stack_size = STACK, .prio = 1, .start = 7};
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 2);
    sem_post(&sem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_created_suspended_runs_only_when_resumed, setup),
        cmocka_unit_test_setup(test_boot_code_is_not_preempted_before_sched_run, setup),
        cmocka_unit_test_setup(test_at_run_from_a_thread_starts_now, setup),
        cmocka_unit_test_setup(test_a_thread_suspends_itself_until_resumed, setup),
        cmocka_unit_test_setup(test_resume_from_an_interrupt_runs_at_its_exit, setup),
        cmocka_unit_test_setup(test_a_suspended_ready_thread_does_not_run, setup),
        cmocka_unit_test_setup(test_a_suspended_waiter_keeps_its_unit_until_resumed, setup),
        cmocka_unit_test_setup(test_each_thread_resumes_the_next_higher, setup),
        cmocka_unit_test_setup(test_refusals, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
