/* SPDX-License-Identifier: MIT */
/*
 * No idle thread: a thread that blocks when nothing else can run puts the
 * module to sleep from its own blocking call, and when the interrupt that
 * wakes the module wakes that same thread it resumes without a context
 * switch (the BLOCKED_RUNNING fast path). Built also on the MANTIS baseline
 * kernel, whose idle thread costs two switches per wake-up: the same test
 * measures both, so each kernel must show its own figure.
 *
 * MOTET_TEST_KERNEL: threads thr_mantis
 */
#include <string.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)
#define WAKES 4

static uint8_t stack[STACK];
static sem_t sem;
static unsigned wakes;
static uint32_t switches_at[WAKES];
static uint32_t sleeps_at[WAKES];
static bool isr_on_thread_stack[WAKES];
static unsigned isr_runs;

static int setup(void **state)
{
    test_boot(state);
    sem_init(&sem, 0);
    wakes = isr_runs = 0;
    memset(isr_on_thread_stack, 0, sizeof isr_on_thread_stack);
    return 0;
}

/* The interrupt interrupts whatever stack port_sleep() was called from (its
 * body may run there too, or on an interrupt stack: port's choice). */
static void isr_posts(void)
{
    uintptr_t sp = tport_interrupted_stack();
    if (isr_runs < WAKES)
        isr_on_thread_stack[isr_runs] = sp >= (uintptr_t) stack && sp < (uintptr_t) stack + STACK;
    isr_runs++;
    sem_post_isr(&sem);
}

static void worker(void *arg)
{
    (void) arg;
    for (wakes = 0; wakes < WAKES; wakes++) {
        sem_wait(&sem);
        switches_at[wakes] = thread_switch_count();
        sleeps_at[wakes] = tport_sleep_count();
    }
    sched_stop();
}

static void run_worker(void)
{
    thread_spec_t spec = {.entry = worker, .stack = stack, .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    tport_irq_attach(0, isr_posts);
    for (unsigned i = 1; i <= WAKES; i++) tport_irq_schedule(0, TIMER_MS(1) * i);
    sched_run();
    assert_int_equal(wakes, WAKES);
}

static void test_blocking_thread_sleeps_in_place_and_wakes_without_a_switch(void **state)
{
    (void) state;
    run_worker();
    for (unsigned i = 1; i < WAKES; i++) {
        /* One sleep of the module between two wake-ups... */
        assert_int_equal(sleeps_at[i] - sleeps_at[i - 1], 1);
        uint32_t switches = switches_at[i] - switches_at[i - 1];
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS
        assert_int_equal(switches, 2); /* to the idle thread and back */
#else
        assert_int_equal(switches, 0); /* ...and not one context switch */
#endif
    }
}

static void test_no_idle_thread_the_sleep_happens_on_the_blocked_thread(void **state)
{
    (void) state;
    run_worker();
    /* The first wake-up finds the kernel asleep in sched_run(); from then
     * on the module sleeps inside the thread's sem_wait(), on its stack. */
    assert_false(isr_on_thread_stack[0]);
    for (unsigned i = 1; i < WAKES; i++) {
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS
        assert_false(isr_on_thread_stack[i]); /* the idle thread's stack */
#else
        assert_true(isr_on_thread_stack[i]);
#endif
    }
}

/* The interrupt that ends a sleep in place may wake a higher thread as
 * well as the sleeper: the higher one runs first, as at any other
 * interrupt exit, though the exits during the sleep decide nothing. */
static uint8_t high_stack[STACK];
static sem_t high_sem;
static unsigned both_posts;

static void isr_wakes_both(void)
{
    sem_post_isr(&sem);
    if (++both_posts == 2) sem_post_isr(&high_sem); /* the second: the sleep is in place */
}

static void high(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&high_sem);
        test_note("high ");
    }
}

static void low(void *arg)
{
    (void) arg;
    for (int i = 1; i <= 2; i++) {
        sem_wait(&sem);
        test_note(i == 1 ? "low1 " : "low2 ");
    }
    sched_stop();
}

static void test_a_higher_thread_woken_with_the_sleeper_runs_first(void **state)
{
    (void) state;
    sem_init(&high_sem, 0);
    both_posts = 0;
    test_thread(high_stack, STACK, high, NULL, 4, THREAD_START_NOW);
    test_thread(stack, STACK, low, NULL, 2, THREAD_START_NOW);
    tport_irq_attach(0, isr_wakes_both);
    tport_irq_schedule(0, TIMER_MS(1));
    tport_irq_schedule(0, TIMER_MS(2));
    sched_run();
    assert_string_equal(test_trace(), "low1 high low2 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_blocking_thread_sleeps_in_place_and_wakes_without_a_switch,
                               setup),
        cmocka_unit_test_setup(test_no_idle_thread_the_sleep_happens_on_the_blocked_thread, setup),
        cmocka_unit_test_setup(test_a_higher_thread_woken_with_the_sleeper_runs_first, setup),
    };
    return cmocka_run_group_tests_name("thread idle", tests, NULL, NULL);
}
