/* SPDX-License-Identifier: MIT */
/*
 * Semaphores beyond sem_wait() (thread.h): the non-blocking take from any
 * context, the timed take (it times out at its exact tick, leaves no one
 * on the wait list and no timer behind, or gets the unit posted before
 * the timeout), binary semaphores (a post to a given one is absorbed with
 * MT_ERR_FULL), the mailbox's timed receive, and the refusal of a wait
 * from code that cannot block.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include "slab.h"
#include "test_support.h"

extern slab_cache_t timer_cache;

#define STACK  THREAD_STACK_BYTES(0)
#define PID_RX 0x40

static uint8_t stack[STACK];
static sem_t sem;
static mt_err_t result;
static uint64_t waited;

static int setup(void **state)
{
    test_boot(state);
    sem_init(&sem, 0);
    result = MT_ERR_COUNT;
    return 0;
}

static void test_try_wait_never_blocks(void **state)
{
    (void) state;
    assert_int_equal(sem_try_wait(&sem), MT_ERR_TIMEOUT);
    assert_int_equal(sem_wait_for(&sem, THREAD_NO_WAIT), MT_ERR_TIMEOUT); /* from boot code */
    assert_int_equal(sem_post(&sem), MT_OK);
    assert_int_equal(sem_count(&sem), 1);
    assert_int_equal(sem_try_wait(&sem), MT_OK);
    assert_int_equal(sem_count(&sem), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_TIMEOUT), 0); /* not a fault */
}

static void isr_tries(void)
{
    result = sem_try_wait(&sem);
}

static void test_try_wait_from_an_interrupt(void **state)
{
    (void) state;
    sem_post(&sem);
    tport_irq_attach(0, isr_tries);
    tport_irq_raise(0);
    assert_int_equal(result, MT_OK);
    tport_irq_raise(0);
    assert_int_equal(result, MT_ERR_TIMEOUT);
}

static void waits_300(void *arg)
{
    (void) arg;
    uint64_t from = tport_time();
    result = sem_wait_for(&sem, 300);
    waited = tport_time() - from;
    sched_stop();
}

static void test_timed_wait_times_out_at_its_tick(void **state)
{
    (void) state;
    test_thread(stack, STACK, waits_300, NULL, 2, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_ERR_TIMEOUT);
    assert_int_equal(waited, 300);
    assert_null(sem.waiters);
    assert_int_equal(timer_cache.in_use, 0);
    sem_post(&sem); /* nobody waits: counted */
    assert_int_equal(sem_count(&sem), 1);
}

static void isr_posts(void)
{
    sem_post_isr(&sem);
}

static void test_timed_wait_gets_a_post_before_its_timeout(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_posts);
    tport_irq_schedule(0, 120);
    test_thread(stack, STACK, waits_300, NULL, 2, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_OK);
    assert_int_equal(waited, 120);
    assert_int_equal(timer_cache.in_use, 0); /* its timeout was stopped */
    assert_int_equal(sem_count(&sem), 0);
}

static void test_binary_semaphore_absorbs_a_second_post(void **state)
{
    (void) state;
    sem_t b;
    sem_init_binary(&b, false);
    assert_int_equal(sem_try_wait(&b), MT_ERR_TIMEOUT);
    assert_int_equal(sem_post(&b), MT_OK);
    assert_int_equal(sem_post(&b), MT_ERR_FULL);
    assert_int_equal(sem_post_isr(&b), MT_ERR_FULL);
    assert_int_equal(sem_count(&b), 1);
    assert_int_equal(sem_try_wait(&b), MT_OK);
    assert_int_equal(sem_try_wait(&b), MT_ERR_TIMEOUT);
    sem_init_max(&b, 9, 3); /* clamped to its limit */
    assert_int_equal(sem_count(&b), 3);
}

static void test_a_timed_wait_outside_a_thread_is_refused(void **state)
{
    (void) state;
    assert_int_equal(sem_wait_for(&sem, 10), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    sem_post(&sem); /* a unit that is there is taken whatever the timeout */
    assert_int_equal(sem_wait_for(&sem, 10), MT_OK);
    assert_int_equal(sem_count(&sem), 0);
}

static msg_t *got;

static void receives_for_200(void *arg)
{
    (void) arg;
    uint64_t from = tport_time();
    got = thread_receive_for(200);
    waited = tport_time() - from;
    sched_stop();
}

static void test_timed_receive_times_out_then_receives(void **state)
{
    (void) state;
    thread_spec_t spec = {.entry = receives_for_200,
                          .stack = stack,
                          .stack_size = STACK,
                          .prio = 1,
                          .pid = PID_RX,
                          .start = THREAD_START_NOW};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    sched_run();
    assert_null(got);
    assert_int_equal(waited, 200);
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    assert_int_equal(sched_send_to(PID_RX, PORT_0, "x", 2, 0), MT_OK); /* it runs at once */
    assert_int_equal(waited, 0);
    assert_non_null(got);
    assert_int_equal(timer_cache.in_use, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_try_wait_never_blocks, setup),
        cmocka_unit_test_setup(test_try_wait_from_an_interrupt, setup),
        cmocka_unit_test_setup(test_timed_wait_times_out_at_its_tick, setup),
        cmocka_unit_test_setup(test_timed_wait_gets_a_post_before_its_timeout, setup),
        cmocka_unit_test_setup(test_binary_semaphore_absorbs_a_second_post, setup),
        cmocka_unit_test_setup(test_a_timed_wait_outside_a_thread_is_refused, setup),
        cmocka_unit_test_setup(test_timed_receive_times_out_then_receives, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
