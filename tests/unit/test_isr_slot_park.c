/* SPDX-License-Identifier: MIT */
/*
 * An interrupt's bare message that must wait, for a level that holds no
 * message, waits in the interrupt slot, parked as the oldest of its level
 * (post.c, docs/architecture.md "Interrupts, timers and threads"): off the
 * pool and out of the level's FIFO. These tests check that it keeps its
 * place in priority-then-creation order (rule 2) against messages of its
 * own level and of others, queued before and after it, and that a kill, a
 * freeze for migration and a count see it like any queued message.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <stdio.h>
#include <string.h>

#include "migrate_internal.h"
#include "test_support.h"

static char trace[256];

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

typedef void (*action_fn)(mt_port_t port);
static action_fn actions[256];

/* Notes "A0( ... )A" around each message (A is pid 0x20, the digit the
 * application port), "Af" for a FINAL. */
static mt_err_t traced(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    char name[8];
    mt_pid_t self = sched_current_pid();
    if (port == PORT_INIT) return MT_OK;
    if (port == PORT_FINAL) {
        snprintf(name, sizeof name, "%cf ", 'A' + self - 0x20);
        note(name);
        return MT_OK;
    }
    snprintf(name, sizeof name, "%c%d( ", 'A' + self - 0x20, port - PORT_0);
    note(name);
    action_fn act = actions[self];
    actions[self] = NULL; /* once: a later message of the task only notes */
    if (act) act(port);
    snprintf(name, sizeof name, ")%c ", 'A' + self - 0x20);
    note(name);
    return MT_OK;
}

#define PID(letter) ((mt_pid_t) (0x20 + (letter) - 'A'))

static void make_task(char letter, mt_prio_t prio)
{
    task_spec_t spec = {.pid = PID(letter), .prio = prio, .handler = traced};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID(letter), NULL, 0), MT_OK);
}

/* The interrupt posts "A0" for each letter of `isr_posts`, or a digit
 * after a letter for that port ("A1"). */
static const char *isr_posts;
static uint8_t spare_in_body; /* pool blocks left when the body ends */

static void isr_posts_each(void)
{
    note("isr ");
    for (const char *p = isr_posts; *p; p++) {
        mt_port_t port = PORT_0;
        if (p[1] >= '0' && p[1] <= '9') port = (mt_port_t) (PORT_0 + p[1] - '0');
        assert_int_equal(sched_post_isr(PID(*p), port, NULL, 0, 0), MT_OK);
        if (p[1] >= '0' && p[1] <= '9') p++;
    }
    spare_in_body = sched_msg_spare();
}

static void raise_interrupt(mt_port_t port)
{
    (void) port;
    tport_irq_raise(0);
    note("back ");
}

static int setup(void **state)
{
    test_boot(state);
    memset(trace, 0, sizeof trace);
    memset(actions, 0, sizeof actions);
    tport_irq_attach(0, isr_posts_each);
    return 0;
}

/* The packet that comes while its task runs: parked, counted, off the
 * pool; it runs once the running message's handler has returned. */
static uint8_t queued_in_a;

static void raise_and_count(mt_port_t port)
{
    raise_interrupt(port);
    queued_in_a = sched_queued_count();
}

static void test_a_post_to_the_running_task_waits_off_the_pool(void **state)
{
    (void) state;
    make_task('A', 2);
    actions[PID('A')] = raise_and_count;
    isr_posts = "A1";
    uint8_t spare = sched_msg_spare();
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr back )A A1( )A ");
    assert_int_equal(queued_in_a, 1);
    assert_int_equal(spare_in_body, spare);
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
}

/* Same level: a message the same interrupt posts after the parked one, to
 * another task of the level, runs after it; a higher level's, queued
 * after it, runs first (at the exit, above A); a lower level's after both. */
static void test_a_parked_message_keeps_its_place_in_its_level(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    make_task('D', 3);
    make_task('E', 1);
    actions[PID('A')] = raise_interrupt;
    isr_posts = "A1EBD";
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr D0( )D back )A A1( )A B0( )B E0( )E ");
}

/* A message of a higher level that is queued before the parked one and
 * waits behind a handler runs before it; a task-context message of the
 * parked one's level, sent after it, runs after it. */
static void g_raises_and_queues(mt_port_t port)
{
    raise_interrupt(port);
    /* B is of A's level, below G: it waits, after the parked A1. */
    assert_int_equal(sched_send_to(PID('B'), PORT_0, NULL, 0, 0), MT_OK);
}

static void a_sends_to_g(mt_port_t port)
{
    (void) port;
    assert_int_equal(sched_send_to(PID('G'), PORT_0, NULL, 0, 0), MT_OK);
}

static void test_a_parked_message_below_a_higher_queued_one(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    make_task('G', 3);
    actions[PID('A')] = a_sends_to_g;
    actions[PID('G')] = g_raises_and_queues;
    isr_posts = "A1G1";
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( G0( isr back )G G1( )G )A A1( )A B0( )B ");
}

/* An interrupt during the parked message's own handler: the slot is free
 * again once that handler has its arguments and the level is empty, so
 * its first post parks again; its second goes to the pool behind it. */
static void raise_then_arm(mt_port_t port)
{
    raise_interrupt(port);
    isr_posts = "A2A3";
    actions[PID('A')] = raise_interrupt; /* for A1 */
}

static void test_a_post_during_a_parked_handler_parks_again(void **state)
{
    (void) state;
    make_task('A', 2);
    actions[PID('A')] = raise_then_arm;
    isr_posts = "A1";
    uint8_t spare = sched_msg_spare();
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr back )A A1( isr back )A A2( )A A3( )A ");
    assert_int_equal(spare_in_body, spare - 1); /* A3's block */
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
}

/* A task killed while its message is parked: the message goes with it and
 * the slot is free again for the next interrupt. */
static void raise_and_kill_b(mt_port_t port)
{
    raise_interrupt(port);
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
}

static void raise_and_kill_self(mt_port_t port)
{
    raise_interrupt(port);
    assert_int_equal(sched_task_kill(PID('A')), MT_OK);
}

static void test_a_kill_takes_the_parked_message_with_its_task(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 1);
    make_task('C', 5);
    uint8_t spare = sched_msg_spare();
    /* B idle, below A: its message parks at level 1; A kills B. */
    actions[PID('A')] = raise_and_kill_b;
    isr_posts = "B";
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr back Bf )A ");
    assert_int_equal(sched_queued_count(), 0);
    /* A's own message parked, A kills itself: FINAL at its pop, no A1. */
    actions[PID('A')] = raise_and_kill_self;
    isr_posts = "A1";
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr back )A Af ");
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
    /* The slot is free: an interrupt from idle runs C at its exit. */
    isr_posts = "C";
    trace[0] = 0;
    tport_irq_raise(0);
    assert_string_equal(trace, "isr C0( )C ");
}

/* A freeze for migration takes the parked message into the task's held
 * list ahead of its later ones; the thaw runs them in creation order. */
static void raise_and_freeze_t(mt_port_t port)
{
    raise_interrupt(port);
    sched_mig_freeze(sched_find_task(PID('T')));
    isr_posts = "T3";
    raise_interrupt(port);
}

static void test_a_freeze_holds_the_parked_message_in_order(void **state)
{
    (void) state;
    make_task('A', 3);
    make_task('T', 2);
    actions[PID('A')] = raise_and_freeze_t;
    isr_posts = "T1T2";
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID('A'), PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "A0( isr back isr back )A ");
    assert_int_equal(sched_queued_count(), 3);
    trace[0] = 0;
    sched_mig_thaw(sched_find_task(PID('T')));
    sched_run_pending();
    assert_string_equal(trace, "T1( )T T2( )T T3( )T ");
    assert_int_equal(sched_queued_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_post_to_the_running_task_waits_off_the_pool, setup),
        cmocka_unit_test_setup(test_a_parked_message_keeps_its_place_in_its_level, setup),
        cmocka_unit_test_setup(test_a_parked_message_below_a_higher_queued_one, setup),
        cmocka_unit_test_setup(test_a_post_during_a_parked_handler_parks_again, setup),
        cmocka_unit_test_setup(test_a_kill_takes_the_parked_message_with_its_task, setup),
        cmocka_unit_test_setup(test_a_freeze_holds_the_parked_message_in_order, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
