/* SPDX-License-Identifier: MIT */
/*
 * The value-of-preemption policy: a short job (a thread that blocked with
 * part of its quantum left) that starts in a preemption-free period runs to
 * completion, even past the end of its quantum, while the same job in the
 * normal round robin is cut at its quantum end by the long, CPU-bound
 * thread beside it; and the long thread never runs inside a
 * preemption-free period (the period ends when no short job is left). A
 * period opens after every 3 quanta of thread work in round robin
 * (MOTET_VOP_DELTA_QUANTA=3 in kernel thr_vop).
 *
 * The deferring variant (MOTET_VOP_DEFER_QUANTA=2 in kernel thr_vopd):
 * short jobs arriving beside a long, CPU-bound thread of their level do not
 * cut it at its quantum ends; once it has worked two quanta while a short
 * job waited, it gives way once, and every short job waiting or arriving
 * then runs, each to completion; so the short thread gets the CPU by an
 * involuntary switch once per batch, not once per job. It sizes each job:
 * a thread whose jobs each end within a quantum stays short however many
 * it runs (as written, the rest of the quantum carries over from job to
 * job, and the thread turns long after a quantum's worth of them).
 *
 * MOTET_TEST_KERNEL: thr_vop thr_vopd
 */
#include <stdio.h>
#include <string.h>

#include "test_support.h"
#include "thread_internal.h"

#define STACK   THREAD_STACK_BYTES(0)
#define QUANTUM TIMER_US(MOTET_THREAD_SLICE_US)
#define JOBS    24

typedef struct job {
    uint64_t posted, start, end;
    bool free_period; /* a preemption-free period was open at its start */
    bool is_short;    /* the thread had less than a full quantum */
    uint32_t switches;
    uint32_t slice_starts; /* thread_slice_starts() at its start */
} job_t;

static uint8_t stacks[3][STACK];
static job_t jobs[JOBS];
static sem_t sem;
static volatile bool done;
static volatile unsigned long_ran_in_free_period; /* chunks of the long job */
static volatile int posted;
static thread_t *short_thread;
static struct {
    uint64_t job;  /* each short job's work */
    uint64_t gap;  /* between two releases */
    uint64_t warm; /* the short thread's work before its first wait */
    int jobs;
} run;

static int setup(void **state)
{
    test_boot(state);
    memset(jobs, 0, sizeof jobs);
    sem_init(&sem, 0);
    done = false;
    long_ran_in_free_period = 0;
    posted = 0;
    return 0;
}

static void short_jobs(void *arg)
{
    (void) arg;
    if (run.warm) tport_busy(run.warm);
    for (int j = 0; j < run.jobs; j++) {
        sem_wait(&sem);
        jobs[j].start = tport_time();
        jobs[j].free_period = thread_vop_preemption_free();
        jobs[j].is_short = !(short_thread->flags & THREAD_F_LONG);
        jobs[j].switches = thread_switch_count();
        jobs[j].slice_starts = thread_slice_starts();
        tport_busy(run.job);
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
    jobs[posted++].posted = tport_time();
    sem_post_isr(&sem);
}

/* The short thread, the releases, then the long thread, which runs until
 * the short one is done. */
static thread_t *run_jobs(void)
{
    thread_t *long_thread;
    thread_spec_t s = {.entry = short_jobs, .stack = stacks[0], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&s, &short_thread), MT_OK);
    tport_irq_attach(0, isr_job);
    for (int j = 1; j <= run.jobs; j++) tport_irq_schedule(0, (uint64_t) j * run.gap);
    thread_spec_t l = {.entry = long_job, .stack = stacks[1], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&l, &long_thread), MT_OK);
    assert_true(done);
    return long_thread;
}

#if !MOTET_VOP_DEFER_QUANTA

static void test_short_jobs_run_to_completion_in_the_preemption_free_period(void **state)
{
    (void) state;
    const uint64_t job = QUANTUM * 6 / 10; /* longer than what a short job has left */
    run.job = job;
    run.gap = 3 * QUANTUM / 2; /* a job starts every 1.5 quanta */
    run.warm = 0;
    run.jobs = 12;
    run_jobs();

    unsigned protected_jobs = 0, cut_jobs = 0;
    for (int j = 0; j < run.jobs; j++) {
        uint64_t took = jobs[j].end - jobs[j].start;
        if (jobs[j].free_period && jobs[j].is_short) {
            /* Past its quantum, and still no involuntary switch. */
            assert_int_equal(took, job);
            assert_int_equal(jobs[j].switches, 0);
            protected_jobs++;
        } else if (jobs[j].is_short && took > job) {
            /* The same job in round robin: cut at its quantum end, it
             * waits out the long job's full quantum. */
            assert_int_equal(took, job + QUANTUM);
            cut_jobs++;
        }
    }
    assert_true(protected_jobs >= 2);
    assert_true(cut_jobs >= 2);
    /* Only short jobs run in a preemption-free period: it ends as soon as
     * none is left, so the long job never runs inside one. */
    assert_int_equal(long_ran_in_free_period, 0);
}

#else

#define DEFER ((uint64_t) MOTET_VOP_DEFER_QUANTA * QUANTUM)

static void test_short_jobs_wait_for_the_long_ones_delta_then_run_as_a_batch(void **state)
{
    (void) state;
    run.job = QUANTUM / 10;
    run.gap = QUANTUM / 2; /* a short job arrives every half quantum */
    run.warm = run.job;    /* some of its quantum used: short from its first wait */
    run.jobs = 8;          /* 8 jobs and the warm-up fit the short thread's quantum */
    thread_t *long_thread = run_jobs();

    for (int j = 0; j < run.jobs; j++) {
        /* Run to completion: no switch inside a job. */
        assert_int_equal(jobs[j].end - jobs[j].start, run.job);
        assert_int_equal(jobs[j].switches, 0);
        /* Deferred at most the delta and the jobs of its batch ahead of it. */
        assert_true(jobs[j].start - jobs[j].posted <= DEFER + run.jobs * run.job);
    }
    /* The first waits out the long thread's delta of work. */
    assert_true(jobs[0].start - jobs[0].posted >= DEFER);
    /* Batches: the short thread got the CPU from the long one once per
     * delta, not once per job (round robin: at every quantum end a job
     * waits at). */
    uint32_t cuts = thread_cuts_to(short_thread);
    assert_true(cuts >= 2);
    assert_true(cuts <= (run.jobs * run.gap) / DEFER + 1);
    assert_true(cuts < (uint32_t) run.jobs / 2);
    /* The long thread got it back each time without cutting a short job. */
    assert_int_equal(thread_cuts_to(long_thread), 0);
}

/* Chunks of the long threads' work: who ran one, and when it began. */
static struct {
    uint64_t at[256];
    char who[256];
    unsigned n;
    uint32_t starts_at_post; /* thread_slice_starts() when the short job came */
} ran;

static void long_logged(void *arg)
{
    char who = (char) (intptr_t) arg;
    if (who == 'A') {
        thread_spec_t b = {.entry = long_logged,
                           .arg = (void *) (intptr_t) 'B',
                           .stack = stacks[2],
                           .stack_size = STACK,
                           .prio = 2};
        assert_int_equal(thread_create(&b, NULL), MT_OK); /* behind A */
    }
    while (!done) {
        if (ran.n < 256) {
            ran.at[ran.n] = tport_time();
            ran.who[ran.n++] = who;
        }
        tport_busy(QUANTUM / 10);
    }
}

static void isr_job_noting_starts(void)
{
    ran.starts_at_post = thread_slice_starts();
    isr_job();
}

/* Two long threads share the CPU by quantum while no short job waits.
 * Once one waits, the running long thread keeps the CPU past its quantum
 * end until their delta is done, though a long equal waits: handing it to
 * the other long one would cost a switch and make the short job wait
 * longer. Meanwhile the slice timer runs towards the delta's end, started
 * once, not again at each quantum end or tick. */
static void test_a_waiting_short_job_keeps_the_long_thread_on_the_cpu(void **state)
{
    (void) state;
    memset(&ran, 0, sizeof ran);
    run.job = QUANTUM / 10;
    run.warm = run.job;
    run.jobs = 1;
    thread_spec_t s = {.entry = short_jobs, .stack = stacks[0], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&s, &short_thread), MT_OK);
    tport_irq_attach(0, isr_job_noting_starts);
    uint64_t t0 = tport_time();
    tport_irq_schedule(0, t0 + 3 * QUANTUM + QUANTUM / 4); /* in a long thread's quantum */
    thread_spec_t a = {.entry = long_logged,
                       .arg = (void *) (intptr_t) 'A',
                       .stack = stacks[1],
                       .stack_size = STACK,
                       .prio = 2};
    assert_int_equal(thread_create(&a, NULL), MT_OK);
    assert_true(done);

    uint64_t came = jobs[0].posted, started = jobs[0].start;
    assert_true(started - came >= DEFER); /* deferred for the delta */
    char before = 0, during = 0;
    bool rotated = false;
    unsigned chunks = 0;
    for (unsigned i = 0; i < ran.n; i++) {
        if (ran.at[i] < came) {
            rotated = rotated || (before && ran.who[i] != before);
            before = ran.who[i];
        } else if (ran.at[i] < started) {
            if (!during) during = ran.who[i];
            assert_int_equal(ran.who[i], during); /* no rotation while it waits */
            chunks++;
        }
    }
    assert_true(rotated);             /* by quantum before the short job came */
    assert_int_equal(during, before); /* the one running when it came */
    assert_true(chunks >= (unsigned) (DEFER / (QUANTUM / 10)) - 1); /* past its quantum */
    assert_true(jobs[0].slice_starts - ran.starts_at_post <= 2);
}

static void test_a_thread_of_many_short_jobs_stays_short(void **state)
{
    (void) state;
    run.job = QUANTUM / 10;
    run.gap = QUANTUM / 2;
    run.warm = run.job;
    run.jobs = JOBS; /* 2.5 quanta of work in all: more than one quantum */
    run_jobs();

    for (int j = 0; j < run.jobs; j++) {
        assert_true(jobs[j].is_short);
        assert_int_equal(jobs[j].end - jobs[j].start, run.job); /* never sliced */
        assert_int_equal(jobs[j].switches, 0);
    }
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if !MOTET_VOP_DEFER_QUANTA
        cmocka_unit_test_setup(test_short_jobs_run_to_completion_in_the_preemption_free_period,
                               setup),
#else
        cmocka_unit_test_setup(test_short_jobs_wait_for_the_long_ones_delta_then_run_as_a_batch,
                               setup),
        cmocka_unit_test_setup(test_a_thread_of_many_short_jobs_stays_short, setup),
        cmocka_unit_test_setup(test_a_waiting_short_job_keeps_the_long_thread_on_the_cpu, setup),
#endif
    };
    return cmocka_run_group_tests_name("value of preemption", tests, NULL, NULL);
}
