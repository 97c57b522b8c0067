/* SPDX-License-Identifier: MIT */
/*
 * Mutexes (mutex.h): ownership, recursion, priority inheritance (a low
 * thread holding a mutex runs at the level of a higher one waiting for it,
 * so a middle thread cannot hold the higher one off; along a chain of
 * holders too), a timed lock that gives up (its holder drops back), and
 * a holder that exits holding mutexes (each released, logged and handed
 * to the best waiter with MT_ERR_OWNER_DEAD, inheritance undone), and the
 * refusals: unlock by a thread that does not hold the mutex, or from
 * outside a thread, each with a clear error and a logged event.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include <stdio.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)

static uint8_t stacks[3][STACK];
static thread_t *th[3];
static mutex_t mx, my;
static sem_t go;

static int setup(void **state)
{
    test_boot(state);
    mutex_init(&mx);
    mutex_init(&my);
    sem_init(&go, 0);
    return 0;
}

static thread_t *spawn(int i, thread_entry_t entry, mt_prio_t prio, uint8_t start)
{
    th[i] = test_thread(stacks[i], STACK, entry, (void *) (intptr_t) i, prio, start);
    return th[i];
}

static void locks_twice(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    assert_int_equal(mutex_lock(&mx, THREAD_NO_WAIT), MT_OK); /* recursive */
    assert_ptr_equal(mutex_owner(&mx), thread_self());
    assert_int_equal(mutex_unlock(&mx), MT_OK);
    assert_ptr_equal(mutex_owner(&mx), thread_self()); /* one lock left */
    assert_int_equal(mutex_unlock(&mx), MT_OK);
    assert_null(mutex_owner(&mx));
    test_note("done ");
}

static void test_lock_is_owned_and_recursive(void **state)
{
    (void) state;
    spawn(0, locks_twice, 1, THREAD_START_NOW);
    assert_string_equal(test_trace(), "done ");
}

/* ---- priority inheritance ---- */

static void low(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("L-lock ");
    sem_wait(&go);
    test_note("L-work ");
    assert_int_equal(thread_prio(thread_self()), 3); /* raised by the waiter */
    thread_resume(th[2]);                            /* the middle one waits */
    test_note("L-unlock ");
    assert_int_equal(mutex_unlock(&mx), MT_OK); /* the high one takes over at once */
    assert_int_equal(thread_prio(thread_self()), 1);
    test_note("L-end ");
}

static void high(void *arg)
{
    (void) arg;
    test_note("H-wait ");
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("H-got ");
    assert_int_equal(mutex_unlock(&mx), MT_OK);
}

static void middle(void *arg)
{
    (void) arg;
    test_note("M ");
}

static void test_holder_runs_at_the_waiters_level(void **state)
{
    (void) state;
    spawn(0, low, 1, THREAD_START_NOW);
    spawn(2, middle, 2, THREAD_START_SUSPENDED);
    assert_int_equal(thread_prio(th[0]), 1);
    spawn(1, high, 3, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 3);
    sem_post(&go);
    /* Without inheritance, resuming the middle thread would preempt the
     * holder and keep the high thread waiting behind it. */
    assert_string_equal(test_trace(), "L-lock H-wait L-work L-unlock H-got M L-end ");
}

static void holds_and_waits(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("L-lock ");
    sem_wait(&go);
    test_note("L-go ");
    assert_int_equal(mutex_unlock(&mx), MT_OK);
}

static void waits_for_go(void *arg)
{
    (void) arg;
    sem_wait(&go);
    test_note("M-go ");
}

static void locks_high(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("H-got ");
    assert_int_equal(mutex_unlock(&mx), MT_OK);
}

/* A wait list is woken best first: a waiter raised by inheritance while
 * it waits moves ahead of the threads it now outranks. */
static void test_a_waiter_raised_while_waiting_is_woken_at_its_new_level(void **state)
{
    (void) state;
    spawn(0, holds_and_waits, 1, THREAD_START_NOW); /* holds mx, waits for go */
    spawn(1, waits_for_go, 2, THREAD_START_NOW);    /* waits for go, ahead of it */
    spawn(2, locks_high, 3, THREAD_START_NOW);      /* waits for mx: the holder is raised */
    assert_int_equal(thread_prio(th[0]), 3);
    sem_post(&go);
    assert_string_equal(test_trace(), "L-lock L-go H-got ");
    sem_post(&go);
    assert_string_equal(test_trace(), "L-lock L-go H-got M-go ");
}

static mt_err_t timed_result;

static void high_gives_up(void *arg)
{
    (void) arg;
    timed_result = mutex_lock(&mx, 250);
    test_note("H-gave-up ");
    sched_stop();
}

static void holds(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    sem_wait(&go);
    assert_int_equal(mutex_unlock(&mx), MT_OK);
}

static void test_a_timed_lock_gives_up_and_the_holder_drops_back(void **state)
{
    (void) state;
    spawn(0, holds, 1, THREAD_START_NOW);
    spawn(1, high_gives_up, 3, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 3);
    uint64_t from = tport_time();
    sched_run();
    assert_int_equal(tport_time() - from, 250);
    assert_int_equal(timed_result, MT_ERR_TIMEOUT);
    assert_int_equal(thread_prio(th[0]), 1);
    assert_null(mx.waiters);
    sem_post(&go);
    assert_null(mutex_owner(&mx));
}

static void tries(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_NO_WAIT), MT_ERR_TIMEOUT);
    test_note("busy ");
}

static void test_try_lock_of_a_held_mutex_fails_at_once(void **state)
{
    (void) state;
    spawn(0, holds, 1, THREAD_START_NOW);
    spawn(1, tries, 3, THREAD_START_NOW);
    assert_string_equal(test_trace(), "busy ");
    assert_int_equal(thread_prio(th[0]), 1); /* a try raises nobody */
    sem_post(&go);
}

/* Chain: thread 0 (level 1) holds mx; thread 1 (level 2) holds my and
 * waits for mx; thread 2 (level 3) waits for my: both holders run at 3. */
static void holds_y_waits_x(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&my, THREAD_FOREVER), MT_OK);
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("1-got-x ");
    mutex_unlock(&mx);
    mutex_unlock(&my);
}

static void waits_y(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&my, THREAD_FOREVER), MT_OK);
    test_note("2-got-y ");
    mutex_unlock(&my);
}

static void test_inheritance_follows_a_chain_of_holders(void **state)
{
    (void) state;
    spawn(0, holds, 1, THREAD_START_NOW);
    spawn(1, holds_y_waits_x, 2, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 2);
    spawn(2, waits_y, 3, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[1]), 3);
    assert_int_equal(thread_prio(th[0]), 3);
    sem_post(&go);
    assert_string_equal(test_trace(), "1-got-x 2-got-y ");
}

/* ---- a holder that exits ---- */

static mt_err_t dead_result;

static void exits_holding(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK); /* twice: recursion goes too */
    assert_int_equal(mutex_lock(&my, THREAD_FOREVER), MT_OK);
    test_note("L-locked ");
    sem_wait(&go);
    test_note("L-exit ");
    thread_exit(); /* holding both */
}

static void waits_x_after_death(void *arg)
{
    (void) arg;
    test_note("H-wait ");
    dead_result = mutex_lock(&mx, THREAD_FOREVER);
    test_note("H-got ");
    assert_ptr_equal(mutex_owner(&mx), thread_self());
    assert_int_equal(thread_prio(thread_self()), 3); /* its own: nobody waits for mx */
    assert_int_equal(mutex_unlock(&mx), MT_OK);      /* one unlock frees it: depth 1 */
    assert_null(mutex_owner(&mx));
}

static void test_an_exiting_holder_hands_its_mutex_to_the_waiter(void **state)
{
    (void) state;
    spawn(0, exits_holding, 1, THREAD_START_NOW);
    spawn(1, waits_x_after_death, 3, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 3);     /* inherited from the waiter */
    test_count_logged_errors(MT_ERR_OWNER_DEAD); /* drain */
    sem_post(&go);
    assert_string_equal(test_trace(), "L-locked H-wait L-exit H-got ");
    assert_int_equal(dead_result, MT_ERR_OWNER_DEAD);
    assert_null(mutex_owner(&my)); /* no waiter: released */
    assert_null(mx.waiters);
    assert_int_equal(test_count_logged_errors(MT_ERR_OWNER_DEAD), 2); /* one per mutex */
}

static void locks_x_once(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_NO_WAIT), MT_OK); /* free again, no error */
    test_note("locked ");
    assert_int_equal(mutex_unlock(&mx), MT_OK);
}

static void returns_holding(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    test_note("return ");
} /* returning from the entry exits */

static void test_a_holder_returning_from_its_entry_frees_the_mutex(void **state)
{
    (void) state;
    mt_pid_t pid = 0;
    uint16_t arg = 0;
    th[0] = test_thread(stacks[0], STACK, returns_holding, NULL, 2, THREAD_START_NOW);
    assert_null(mutex_owner(&mx));
    assert_int_equal(test_logged(EV_ERROR, &pid, &arg), 1);
    assert_int_equal(arg, MT_ERR_OWNER_DEAD);
    spawn(1, locks_x_once, 1, THREAD_START_NOW);
    assert_string_equal(test_trace(), "return locked ");
}

/* Thread 0 (level 1) holds mx; thread 1 (level 2) holds my and waits for
 * mx; thread 2 (level 3) waits for my, so thread 0 runs at 3. Thread 0
 * exits: thread 1 gets mx, with the error, and still runs at 3 for thread
 * 2 until it unlocks my. */
static mt_err_t chain_result;

static void holds_y_waits_x_dead(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&my, THREAD_FOREVER), MT_OK);
    chain_result = mutex_lock(&mx, THREAD_FOREVER);
    assert_int_equal(thread_prio(thread_self()), 3);
    test_note("1-got-x ");
    mutex_unlock(&mx);
    mutex_unlock(&my);
    assert_int_equal(thread_prio(thread_self()), 2);
}

static void exits_holding_x(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    sem_wait(&go);
    assert_int_equal(thread_prio(thread_self()), 3);
}

static void test_an_exit_along_a_chain_keeps_the_inheritance_owed(void **state)
{
    (void) state;
    spawn(0, exits_holding_x, 1, THREAD_START_NOW);
    spawn(1, holds_y_waits_x_dead, 2, THREAD_START_NOW);
    spawn(2, waits_y, 3, THREAD_START_NOW);
    assert_int_equal(thread_prio(th[0]), 3);
    sem_post(&go);
    assert_string_equal(test_trace(), "1-got-x 2-got-y ");
    assert_int_equal(chain_result, MT_ERR_OWNER_DEAD);
    assert_null(mutex_owner(&mx));
    assert_null(mutex_owner(&my));
}

/* ---- refusals ---- */

static void unlocks_what_it_does_not_hold(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_unlock(&mx), MT_ERR_NOT_OWNER);
    test_note("refused ");
}

static void test_unlock_by_a_non_owner_is_refused_and_logged(void **state)
{
    (void) state;
    spawn(2, unlocks_what_it_does_not_hold, 2, THREAD_START_NOW); /* free mutex */
    spawn(0, holds, 1, THREAD_START_NOW);
    spawn(1, unlocks_what_it_does_not_hold, 2, THREAD_START_NOW); /* another's */
    assert_ptr_equal(mutex_owner(&mx), th[0]);
    assert_string_equal(test_trace(), "refused refused ");
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 2);
    sem_post(&go);
}

static void isr_unlocks(void)
{
    assert_int_equal(mutex_unlock(&mx), MT_ERR_STATE);
}

static void test_lock_and_unlock_outside_a_thread_are_refused(void **state)
{
    (void) state;
    spawn(0, holds, 1, THREAD_START_NOW);
    assert_int_equal(mutex_lock(&my, THREAD_NO_WAIT), MT_ERR_STATE); /* boot code */
    assert_int_equal(mutex_unlock(&mx), MT_ERR_STATE);
    tport_irq_attach(0, isr_unlocks);
    tport_irq_raise(0);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 3);
    assert_ptr_equal(mutex_owner(&mx), th[0]);
    sem_post(&go);
}

/* A holder whose inherited level is undone (its waiter gave up, and says
 * so when it runs: at the holder's yield, an equal of the inherited level)
 * is back among its equals at its own level, behind the one that waited. */
static void high_waits_briefly(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, 50), MT_ERR_TIMEOUT);
    test_note("H-gave-up ");
}

static void holder_dropped_back(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&mx, THREAD_FOREVER), MT_OK);
    assert_int_equal(thread_resume(th[2]), MT_OK); /* H waits for mx at once */
    assert_int_equal(thread_prio(thread_self()), 3);
    test_note("L-high ");
    tport_busy(100); /* H's wait times out meanwhile: H is ready, an equal */
    for (int n = 0; n < 2; n++) {
        test_note("L ");
        assert_int_equal(thread_yield(), MT_OK);
        assert_int_equal(thread_prio(thread_self()), 1);
    }
    assert_int_equal(mutex_unlock(&mx), MT_OK);
    sched_stop();
}

static void equal_yields(void *arg)
{
    (void) arg;
    for (int n = 0; n < 2; n++) {
        test_note("E ");
        assert_int_equal(thread_yield(), MT_OK);
    }
}

static void test_a_holder_dropped_back_yields_in_turn_with_its_equals(void **state)
{
    (void) state;
    spawn(0, holder_dropped_back, 1, THREAD_START_AT_RUN);
    spawn(1, equal_yields, 1, THREAD_START_AT_RUN);
    spawn(2, high_waits_briefly, 3, THREAD_START_SUSPENDED);
    sched_run();
    assert_string_equal(test_trace(), "L-high L H-gave-up E L E ");
    assert_null(mutex_owner(&mx));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lock_is_owned_and_recursive, setup),
        cmocka_unit_test_setup(test_holder_runs_at_the_waiters_level, setup),
        cmocka_unit_test_setup(test_a_waiter_raised_while_waiting_is_woken_at_its_new_level, setup),
        cmocka_unit_test_setup(test_a_timed_lock_gives_up_and_the_holder_drops_back, setup),
        cmocka_unit_test_setup(test_try_lock_of_a_held_mutex_fails_at_once, setup),
        cmocka_unit_test_setup(test_inheritance_follows_a_chain_of_holders, setup),
        cmocka_unit_test_setup(test_an_exiting_holder_hands_its_mutex_to_the_waiter, setup),
        cmocka_unit_test_setup(test_a_holder_returning_from_its_entry_frees_the_mutex, setup),
        cmocka_unit_test_setup(test_an_exit_along_a_chain_keeps_the_inheritance_owed, setup),
        cmocka_unit_test_setup(test_unlock_by_a_non_owner_is_refused_and_logged, setup),
        cmocka_unit_test_setup(test_lock_and_unlock_outside_a_thread_are_refused, setup),
        cmocka_unit_test_setup(test_a_holder_dropped_back_yields_in_turn_with_its_equals, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
