/* SPDX-License-Identifier: MIT */
/*
 * The value-of-preemption policy: a short job (a thread that blocked with
 * part of its quantum left) that starts in a preemption-free period runs to
 * completion, even past the end of its quantum, while the same job in the
 * normal round robin is cut at its quantum end by the long, CPU-bound
 * thread beside it; and the long thread never runs inside a
 * preemption-free period (the period ends when no short job is left). A
 * period opens after every 3 quanta of thread work in round robin
 * (MOTET_VOP_DELTA_QUANTA=3 in this kernel).
 *
 * MOTET_TEST_KERNEL: thr_vop
 */
#include <stdio.h>
#include <string.h>

#include "test_support.h"
#include "thread_internal.h"

#define STACK   THREAD_STACK_BYTES(0)
#define QUANTUM TIMER_US(MOTET_THREAD_SLICE_US)
#define JOB     (QUANTUM * 6 / 10) /* longer than what a short job has left */
#define PERIOD  (3 * QUANTUM / 2)  /* a job starts every 1.5 quanta */
#define JOBS    12

typedef struct job {
    uint64_t start, end;
    bool free_period; /* a preemption-free period was open at its start */
    bool is_short;    /* the thread had less than a full quantum */
    uint32_t switches;
} job_t;

static uint8_t stacks[2][STACK];
static job_t jobs[JOBS];
static sem_t sem;
static volatile bool done;
static volatile unsigned long_ran_in_free_period; /* chunks of the long job */
static thread_t *short_thread;

static int setup(void **state)
{
    test_boot(state);
    memset(jobs, 0, sizeof jobs);
    sem_init(&sem, 0);
    done = false;
    long_ran_in_free_period = 0;
    return 0;
}

static void short_jobs(void *arg)
{
    (void) arg;
    for (int j = 0; j < JOBS; j++) {
        sem_wait(&sem);
        jobs[j].start = tport_time();
        jobs[j].free_period = thread_vop_preemption_free();
        jobs[j].is_short = !(short_thread->flags & THREAD_F_LONG);
        jobs[j].switches = thread_switch_count();
        tport_busy(JOB);
        jobs[j].end = tport_time();
        jobs[j].switches = thread_switch_count() - jobs[j].switches;
    }
    done = true;
}

static void long_job(void *arg)
{
    (void) arg;
    while (!done) {
        if (thread_vop_preemption_free()) long_ran_in_free_period++;
        tport_busy(QUANTUM / 10);
    }
}

static void isr_job(void)
{
    sem_post_isr(&sem);
}

static void test_short_jobs_run_to_completion_in_the_preemption_free_period(void **state)
{
    (void) state;
    thread_spec_t s = {.entry = short_jobs, .stack = stacks[0], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&s, &short_thread), MT_OK);
    tport_irq_attach(0, isr_job);
    for (uint64_t j = 1; j <= JOBS; j++) tport_irq_schedule(0, j * PERIOD);
    thread_spec_t l = {.entry = long_job, .stack = stacks[1], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&l, NULL), MT_OK);
    assert_true(done);

    unsigned protected_jobs = 0, cut_jobs = 0;
    for (int j = 0; j < JOBS; j++) {
        uint64_t took = jobs[j].end - jobs[j].start;
        if (jobs[j].free_period && jobs[j].is_short) {
            /* Past its quantum, and still no involuntary switch. */
            assert_int_equal(took, JOB);
            assert_int_equal(jobs[j].switches, 0);
            protected_jobs++;
        } else if (jobs[j].is_short && took > JOB) {
            /* The same job in round robin: cut at its quantum end, it
             * waits out the long job's full quantum. */
            assert_int_equal(took, JOB + QUANTUM);
            cut_jobs++;
        }
    }
    assert_true(protected_jobs >= 2);
    assert_true(cut_jobs >= 2);
    /* Only short jobs run in a preemption-free period: it ends as soon as
     * none is left, so the long job never runs inside one. */
    assert_int_equal(long_ran_in_free_period, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_short_jobs_run_to_completion_in_the_preemption_free_period,
                               setup),
    };
    return cmocka_run_group_tests_name("value of preemption", tests, NULL, NULL);
}
