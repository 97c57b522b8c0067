/* SPDX-License-Identifier: MIT */
/*
 * Room set by configuration (config.h): a kernel with 12 threads and 32
 * priority levels, past the 16-bit level bitmaps. Threads at levels across
 * the whole range run highest first, one more is refused, messages queued
 * at levels above 16 are handled in order and interleave with threads by
 * level, and priority inheritance reaches the top levels.
 *
 * MOTET_TEST_KERNEL: thr_big
 */
#include <stdio.h>

#include "test_support.h"

_Static_assert(MOTET_MAX_THREADS == 12 && MOTET_PRIO_LEVELS == 32, "the thr_big kernel");

#define STACK THREAD_STACK_BYTES(0)
#define N     MOTET_MAX_THREADS

static uint8_t stacks[N][STACK];
static thread_t *th[N];

static int setup(void **state)
{
    test_boot(state);
    return 0;
}

static void says_level(void *arg)
{
    (void) arg;
    char s[8];
    snprintf(s, sizeof s, "%d ", (int) thread_prio(thread_self()));
    test_note(s);
    if (thread_prio(thread_self()) == 0) sched_stop(); /* the last */
}

static void test_every_thread_and_level_is_usable(void **state)
{
    (void) state;
    /* Levels 0, 3, 6 ... 30, and 31: created by boot code, run at start. */
    for (int i = 0; i < N; i++) {
        mt_prio_t p = (mt_prio_t) (i == N - 1 ? MOTET_PRIO_LEVELS - 1 : i * 3 - (i > 5 ? 1 : 0));
        th[i] = test_thread(stacks[i], STACK, says_level, NULL, p, THREAD_START_AT_RUN);
    }
    thread_spec_t extra = {.entry = says_level, .stack = stacks[0], .stack_size = STACK};
    assert_int_equal(thread_create(&extra, NULL), MT_ERR_NO_SLAB);
    extra.prio = MOTET_PRIO_LEVELS;
    assert_int_equal(thread_create(&extra, NULL), MT_ERR_INVALID);
    test_note("| ");
    sched_run();
    assert_string_equal(test_trace(), "| 31 29 26 23 20 17 15 12 9 6 3 0 ");
}

#define PID_A 0x40
#define PID_B 0x41

static mt_err_t handler(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st;
    (void) data;
    (void) len;
    if (port < PORT_0) return MT_OK;
    test_note(sched_current_pid() == PID_A ? "h17 " : "h25 ");
    return MT_OK;
}

static void sends_to_both(void *arg)
{
    (void) arg;
    /* From level 18: to 25 runs at once, to 17 is queued below us. */
    assert_int_equal(sched_send_to(PID_B, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_A, PORT_0, NULL, 0, 0), MT_OK);
    test_note("t18 ");
}

static void test_messages_and_threads_interleave_by_level_above_16(void **state)
{
    (void) state;
    task_spec_t a = {.pid = PID_A, .prio = 17, .handler = handler};
    task_spec_t b = {.pid = PID_B, .prio = 25, .handler = handler};
    assert_int_equal(sched_task_create(&a), MT_OK);
    assert_int_equal(sched_task_create(&b), MT_OK);
    assert_int_equal(sched_task_init(PID_A, NULL, 0), MT_OK);
    assert_int_equal(sched_task_init(PID_B, NULL, 0), MT_OK);
    test_thread(stacks[0], STACK, sends_to_both, NULL, 18, THREAD_START_NOW);
    assert_string_equal(test_trace(), "h25 t18 h17 ");
}

static mutex_t mx;
static sem_t go;

static void holds(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    sem_wait(&go);
    mutex_unlock(&mx);
}

static void waits(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    mutex_unlock(&mx);
}

static void test_inheritance_reaches_the_top_level(void **state)
{
    (void) state;
    mutex_init(&mx);
    sem_init(&go, 0);
    th[0] = test_thread(stacks[0], STACK, holds, NULL, 2, THREAD_START_NOW);
    th[1] = test_thread(stacks[1], STACK, waits, NULL, 30, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 30);
    sem_post(&go);
    assert_int_equal(thread_prio(th[0]), 2);
    assert_null(mutex_owner(&mx));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_thread_and_level_is_usable, setup),
        cmocka_unit_test_setup(test_messages_and_threads_interleave_by_level_above_16, setup),
        cmocka_unit_test_setup(test_inheritance_reaches_the_top_level, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
