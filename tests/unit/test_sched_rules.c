/* SPDX-License-Identifier: MIT */
/*
 * The dispatch rules (docs/architecture.md), one group of tests per rule. Each test
 * records the order in which handlers start and end and compares it with
 * the order the rule demands, so breaking a rule changes the trace.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <stdio.h>
#include <string.h>

#include "migrate_internal.h"
#include "test_support.h"
#include "timer_internal.h"

/* ---- a trace of handler activity: "A( B( )B )A" ---- */

static char trace[512];

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

/* Per-test behaviour of the generic handler below, keyed by pid. */
typedef void (*action_fn)(mt_port_t port);
static action_fn actions[256];

static mt_err_t traced(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    char name[8];
    mt_pid_t self = sched_current_pid();
    if (port == PORT_INIT || port == PORT_FINAL) {
        snprintf(name, sizeof name, "%c%s ", 'A' + self - 0x20, port == PORT_INIT ? "i" : "f");
        note(name);
        return MT_OK;
    }
    snprintf(name, sizeof name, "%c%d( ", 'A' + self - 0x20, port - PORT_0);
    note(name);
    if (actions[self]) actions[self](port);
    snprintf(name, sizeof name, ")%c ", 'A' + self - 0x20);
    note(name);
    return MT_OK;
}

/* Task A is pid 0x20, B 0x21, ... */
#define PID(letter) ((mt_pid_t) (0x20 + (letter) - 'A'))

static void make_task(char letter, mt_prio_t prio)
{
    task_spec_t spec = {.pid = PID(letter), .prio = prio, .handler = traced};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID(letter), NULL, 0), MT_OK);
}

static void send(char letter, int app_port)
{
    assert_int_equal(sched_send_to(PID(letter), (mt_port_t) (PORT_0 + app_port), NULL, 0, 0),
                     MT_OK);
}

static int setup(void **state)
{
    test_boot(state);
    memset(trace, 0, sizeof trace);
    memset(actions, 0, sizeof actions);
    return 0;
}

/* ---- rule 1: immediate nested dispatch for equal or higher priority ---- */

static void a_sends_to_b(mt_port_t port)
{
    if (port != PORT_0) return;
    note("send ");
    send('B', 0);
    note("sent ");
}

static void test_rule1_equal_priority_runs_nested(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    actions[PID('A')] = a_sends_to_b;
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( send B0( )B sent )A ");
}

static uint8_t depth_seen;
static void record_depth(mt_port_t port)
{
    (void) port;
    depth_seen = sched_stack_depth();
}

static void test_rule1_higher_priority_runs_nested_on_same_stack(void **state)
{
    (void) state;
    make_task('A', 1);
    make_task('B', 5);
    actions[PID('A')] = a_sends_to_b;
    actions[PID('B')] = record_depth;
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( send B0( )B sent )A ");
    assert_int_equal(depth_seen, 2); /* B's frame sat on top of A's */
}

/* ---- rule 2: lower priority waits, ordered by priority then creation ---- */

static void test_rule2_lower_priority_is_queued(void **state)
{
    (void) state;
    make_task('A', 3);
    make_task('B', 2);
    actions[PID('A')] = a_sends_to_b;
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( send sent )A B0( )B ");
}

static void a_sends_mixed(mt_port_t port)
{
    (void) port;
    send('B', 1); /* prio 1 */
    send('D', 3); /* prio 3 */
    send('B', 2); /* prio 1, created after the first */
    send('C', 2); /* prio 2 */
    send('D', 4); /* prio 3, created after the first */
    assert_int_equal(sched_queued_count(), 5);
}

static void test_rule2_queue_orders_by_priority_then_creation(void **state)
{
    (void) state;
    make_task('A', 6);
    make_task('B', 1);
    make_task('C', 2);
    make_task('D', 3);
    actions[PID('A')] = a_sends_mixed;
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( )A D3( )D D4( )D C2( )C B1( )B B2( )B ");
}

/* ---- rule 3: interrupt posts preempt only when strictly higher ---- */

static char isr_target;
static bool isr_body_done;
static bool handler_saw_isr_context;
static bool handler_saw_irq_disabled;

static void isr_posts(void)
{
    assert_true(port_in_isr());
    note("isr ");
    assert_int_equal(sched_post_isr(PID(isr_target), PORT_0, NULL, 0, 0), MT_OK);
    isr_body_done = true;
}

static void raise_interrupt(mt_port_t port)
{
    (void) port;
    note("raise ");
    tport_irq_raise(0);
    note("back ");
}

static void check_context(mt_port_t port)
{
    (void) port;
    handler_saw_isr_context = port_in_isr() || !isr_body_done;
    /* Interrupts must be enabled: a save must report them on. */
    port_irq_state_t s = port_irq_save();
    port_irq_state_t again = port_irq_save();
    handler_saw_irq_disabled = (s == again);
    port_irq_restore(again);
    port_irq_restore(s);
}

static void test_rule3_isr_post_strictly_higher_runs_at_interrupt_exit(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 3);
    actions[PID('A')] = raise_interrupt;
    actions[PID('B')] = check_context;
    tport_irq_attach(0, isr_posts);
    isr_target = 'B';
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr B0( )B back )A ");
    assert_false(handler_saw_isr_context);
    assert_false(handler_saw_irq_disabled);
}

static void test_rule3_isr_post_equal_priority_waits(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    actions[PID('A')] = raise_interrupt;
    tport_irq_attach(0, isr_posts);
    isr_target = 'B';
    trace[0] = 0;
    send('A', 0);
    /* A task-context send to B would nest (rule 1); from an ISR it waits. */
    assert_string_equal(trace, "A0( raise isr back )A B0( )B ");
}

static void test_rule3_isr_post_while_masked_runs_on_unmask(void **state)
{
    (void) state;
    make_task('B', 3);
    tport_irq_attach(0, isr_posts);
    isr_target = 'B';
    trace[0] = 0;
    port_irq_state_t s = port_irq_save();
    tport_irq_raise(0);
    note("masked ");
    port_irq_restore(s);
    assert_string_equal(trace, "masked isr B0( )B ");
}

/* One interrupt posting to several tasks: the first message outranks the
 * interrupted frame and the (empty) queue, so it waits for the exit in the
 * interrupt slot (post.c) rather than in the queue; the later ones are
 * queued. The exit must still run them by priority, then creation order
 * (rules 2 and 3): the higher C first, then B (posted before D, its equal). */
static const char *isr_targets; /* a digit after a letter: that port ("A1") */
static uint8_t spare_in_body;   /* pool blocks left when the body ends */

static void isr_posts_each(void)
{
    note("isr ");
    for (const char *p = isr_targets; *p; p++) {
        char letter = *p;
        mt_port_t port = PORT_0;
        if (p[1] >= '0' && p[1] <= '9') port = (mt_port_t) (PORT_0 + *++p - '0');
        assert_int_equal(sched_post_isr(PID(letter), port, NULL, 0, 0), MT_OK);
    }
    spare_in_body = sched_msg_spare();
}

static void test_rule3_isr_posts_run_by_priority_then_creation(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 3);
    make_task('C', 4);
    make_task('D', 3);
    actions[PID('A')] = raise_interrupt;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "BCD";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr C0( )C B0( )B D0( )D back )A ");
    /* The same order from idle, the slot's message to a task equal to a
     * later one. */
    isr_targets = "DBC";
    trace[0] = 0;
    tport_irq_raise(0);
    assert_string_equal(trace, "isr C0( )C D0( )D B0( )B ");
}

/* An interrupt during the handler the slot's message runs posts to a task
 * above that handler: it runs at its own exit, nested, through the slot
 * again (the first handler got its arguments before interrupts were on). */
static void raise_second(mt_port_t port)
{
    (void) port;
    isr_targets = "C";
    raise_interrupt(port);
}

static void test_rule3_isr_post_during_an_isr_posted_handler_nests(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 3);
    make_task('C', 4);
    actions[PID('A')] = raise_interrupt;
    actions[PID('B')] = raise_second;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "B";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr B0( raise isr C0( )C back )B back )A ");
}

/* A task the interrupt slot ran kills itself: its FINAL runs when its frame
 * is popped, with interrupts enabled again. An interrupt taken in that
 * window (here: raised while B returns with interrupts masked, so it is
 * taken the moment the pop's kill enables them) must find B's level still
 * running, as during B's handler, and run nothing at or below it: C, which
 * B queued, runs once B is gone, in the first interrupt's exit. Finding the
 * interrupted level instead, its exit would drain C nested inside the first
 * exit, two interrupts deep on one level. */
static void isr_notes(void)
{
    note("isr2 ");
}

static void b_queues_c_and_dies(mt_port_t port)
{
    (void) port;
    send('C', 0);
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
    (void) port_irq_save(); /* restored by the kernel as it pops B */
    tport_irq_raise(1);
}

static void test_rule3_a_slot_task_killing_itself_keeps_its_level_for_final(void **state)
{
    (void) state;
    make_task('A', 1);
    make_task('B', 5);
    make_task('C', 3);
    actions[PID('A')] = raise_interrupt;
    actions[PID('B')] = b_queues_c_and_dies;
    tport_irq_attach(0, isr_posts_each);
    tport_irq_attach(1, isr_notes);
    isr_targets = "B";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr B0( )B isr2 Bf C0( )C back )A ");
}

/* An interrupt body may not kill a task: the kill would run FINAL inside
 * the body, and the slot still names B, which the exit runs. The kill is
 * refused (MT_ERR_STATE, logged), B runs at the exit as posted, and a kill
 * from task context afterwards works as usual. */
static mt_err_t kill_in_body;

static void isr_posts_then_kills(void)
{
    assert_int_equal(sched_post_isr(PID('B'), PORT_0, NULL, 0, 0), MT_OK);
    kill_in_body = sched_task_kill(PID('B'));
    note("isr ");
}

static void test_rule3_an_interrupt_body_cannot_kill_a_task(void **state)
{
    (void) state;
    make_task('A', 1);
    make_task('B', 5);
    actions[PID('A')] = raise_interrupt;
    tport_irq_attach(0, isr_posts_then_kills);
    trace[0] = 0;
    kill_in_body = MT_OK;
    send('A', 0);
    assert_int_equal(kill_in_body, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_string_equal(trace, "A0( raise isr B0( )B back )A ");
    assert_true(sched_task_exists(PID('B')));
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
    assert_string_equal(trace, "A0( raise isr B0( )B back )A Bf ");
    assert_false(sched_task_exists(PID('B')));
}

/* An interrupt storm whose exits find nothing to run: each interrupt comes
 * again from its own body, and posts to a task equal to the running one,
 * which waits (rule 3). Every exit must return without letting the next
 * interrupt in, so none of them runs deeper than the first by a whole
 * interrupt frame; an exit that turned interrupts on regardless would take
 * each next one on top of itself. (The next one may come an instruction or
 * a return later in the interrupted code than the first: on AVR one
 * instruction runs after RETI.) */
#define STORM 6
/* Less than any port's interrupt frame: AVR saves 15 or more registers and
 * a return address, Cortex-M stacks 32 B, native a signal frame. */
#define NEST_MIN_BYTES 16u
static uint8_t storm_left, storm_seen;
static uintptr_t storm_depth[STORM];

static void isr_storms(void)
{
    volatile uint8_t here = 0;
    if (storm_seen < STORM) storm_depth[storm_seen++] = (uintptr_t) &here;
    assert_int_equal(sched_post_isr(PID(isr_target), PORT_0, NULL, 0, 0), MT_OK);
    if (--storm_left) tport_irq_raise(0); /* pending until this one has returned */
}

static void test_rule3_an_exit_with_nothing_to_run_lets_no_interrupt_nest(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    actions[PID('A')] = raise_interrupt;
    tport_irq_attach(0, isr_storms);
    isr_target = 'B';
    storm_left = STORM;
    storm_seen = 0;
    trace[0] = 0;
    send('A', 0);
    assert_int_equal(storm_seen, STORM);
    for (uint8_t i = 1; i < STORM; i++)
        assert_true(storm_depth[i] + NEST_MIN_BYTES > storm_depth[0]);
    assert_string_equal(trace, "A0( raise back )A B0( )B B0( )B B0( )B B0( )B B0( )B B0( )B ");
}

/* ---- rules 2 and 3: a waiting message in the interrupt slot's block ----
 *
 * An interrupt's bare message that must wait is queued in the interrupt
 * slot's block while it is free (post.c): off the pool, in its level's
 * FIFO like any message, run as the slot's message. It keeps its place
 * in priority-then-creation order against messages of its own level and of
 * others, queued before and after it; a kill, a freeze for migration and a
 * count see it like any queued message. Each action below acts once: the
 * task's later messages only note themselves. */
static void raise_once(mt_port_t port)
{
    actions[sched_current_pid()] = NULL;
    raise_interrupt(port);
}

static uint8_t queued_in_a;

static void raise_once_and_count(mt_port_t port)
{
    raise_once(port);
    queued_in_a = sched_queued_count();
}

/* The packet that comes while its task runs: queued in the slot's block,
 * counted, off the pool; it runs once the running message's handler has
 * returned. */
static void test_slot_block_a_post_to_the_running_task_waits_off_the_pool(void **state)
{
    (void) state;
    make_task('A', 2);
    actions[PID('A')] = raise_once_and_count;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "A1";
    uint8_t spare = sched_msg_spare();
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr back )A A1( )A ");
    assert_int_equal(queued_in_a, 1);
    assert_int_equal(spare_in_body, spare);
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
}

/* Whether more than n blocks are left: true up to the count less one,
 * false from the count on, whatever the pool holds. */
static void test_spare_more_than_tells_the_count_from_below_and_above(void **state)
{
    (void) state;
    msg_t *taken[MOTET_MAX_QUEUED_MSGS];
    uint8_t n_taken = 0;
    for (;;) {
        uint8_t spare = sched_msg_spare();
        if (spare) assert_true(sched_msg_spare_more_than((uint8_t) (spare - 1)));
        assert_false(sched_msg_spare_more_than(spare));
        assert_false(sched_msg_spare_more_than((uint8_t) (spare + 1)));
        if (!spare) break;
        taken[n_taken++] = sched_msg_alloc();
        assert_non_null(taken[n_taken - 1]);
    }
    assert_int_equal(n_taken, MOTET_MAX_QUEUED_MSGS);
    while (n_taken) sched_msg_free(taken[--n_taken]);
    assert_int_equal(sched_msg_spare(), MOTET_MAX_QUEUED_MSGS);
}

/* Posted after the slot's one by the same interrupt: another task of its
 * level runs after it; a higher level's runs first (at the exit, above A);
 * a lower level's after both. */
static void test_slot_block_a_message_keeps_its_place_in_its_level(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    make_task('D', 3);
    make_task('E', 1);
    actions[PID('A')] = raise_once;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "A1EBD";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr D0( )D back )A A1( )A B0( )B E0( )E ");
}

/* A higher level's message queued with it behind a handler runs before
 * it; a task-context message of its level, sent after it, runs after it. */
static void g_raises_and_queues(mt_port_t port)
{
    raise_once(port);
    send('B', 0); /* A's level, below G: it waits, after the slot's A1 */
}

static void a_sends_to_g_once(mt_port_t port)
{
    (void) port;
    actions[PID('A')] = NULL;
    send('G', 0);
}

static void test_slot_block_a_message_below_a_higher_queued_one(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 2);
    make_task('G', 3);
    actions[PID('A')] = a_sends_to_g_once;
    actions[PID('G')] = g_raises_and_queues;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "A1G1";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( G0( raise isr back )G G1( )G )A A1( )A B0( )B ");
}

/* An interrupt during the slot's message's own handler: the slot's block
 * is free again once that handler has its arguments, so its first post
 * takes it again; its second goes to the pool behind it. */
static void raise_once_then_arm(mt_port_t port)
{
    raise_once(port);
    isr_targets = "A2A3";
    actions[PID('A')] = raise_once; /* for A1 */
}

static void test_slot_block_a_post_during_its_handler_takes_it_again(void **state)
{
    (void) state;
    make_task('A', 2);
    actions[PID('A')] = raise_once_then_arm;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "A1";
    uint8_t spare = sched_msg_spare();
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr back )A A1( raise isr back )A A2( )A A3( )A ");
    assert_int_equal(spare_in_body, spare - 1); /* A3's block */
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
}

/* A task killed while its message waits in the slot's block: the message
 * goes with it and the slot is free again for the next interrupt. */
static void raise_once_and_kill(mt_port_t port)
{
    raise_once(port);
    assert_int_equal(sched_task_kill(PID(isr_targets[0])), MT_OK);
}

static void test_slot_block_a_kill_takes_the_message_with_its_task(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 1);
    make_task('C', 5);
    tport_irq_attach(0, isr_posts_each);
    uint8_t spare = sched_msg_spare();
    /* B idle, below A: its message waits at level 1; A kills B. */
    actions[PID('A')] = raise_once_and_kill;
    isr_targets = "B";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr back Bf )A ");
    assert_int_equal(sched_queued_count(), 0);
    /* A's own message waiting, A kills itself: FINAL at its pop, no A1. */
    actions[PID('A')] = raise_once_and_kill;
    isr_targets = "A1";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr back )A Af ");
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
    /* The slot is free: an interrupt from idle runs C at its exit. */
    isr_targets = "C";
    trace[0] = 0;
    tport_irq_raise(0);
    assert_string_equal(trace, "isr C0( )C ");
}

/* Tasks for the tests of the slot's block in a level of two tasks: A at 3
 * runs the action, B and C idle at 2 below it, D (with_d) at 5 above it;
 * the interrupt posts as isr_targets says. The pool's spare blocks. */
static uint8_t make_abc(bool with_d)
{
    make_task('A', 3);
    make_task('B', 2);
    make_task('C', 2);
    if (with_d) make_task('D', 5);
    tport_irq_attach(0, isr_posts_each);
    return sched_msg_spare();
}

/* A's message, whose handler does `action` once, with B1 for the
 * interrupt to post (below A: it waits), on an empty trace. */
static void run_a_posting_b1(action_fn action)
{
    actions[PID('A')] = action;
    isr_targets = "B1";
    trace[0] = 0;
    send('A', 0);
}

/* Nothing left queued, every pool block back, the slot free. */
static void assert_all_given_back(uint8_t spare)
{
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), spare);
    assert_int_equal(sched.isr_msg.flags, 0);
}

/* The slot's message at the head of its level, a task's message of the
 * same level queued behind it, then a kill of the first's task: the purge
 * takes the head, the level keeps the later message, which runs once. */
static void raise_queue_c_kill_b(mt_port_t port)
{
    raise_once(port);
    send('C', 0);
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
    queued_in_a = sched_queued_count();
}

static void test_slot_block_a_kill_of_the_head_leaves_a_later_message_of_its_level(void **state)
{
    (void) state;
    uint8_t spare = make_abc(false);
    run_a_posting_b1(raise_queue_c_kill_b);
    assert_string_equal(trace, "A0( raise isr back Bf )A C0( )C ");
    assert_int_equal(spare_in_body, spare);
    assert_int_equal(queued_in_a, 1);
    assert_all_given_back(spare);
}

/* A level that holds a task's message already: the interrupt's message
 * takes the free slot's block behind it (no pool block), runs after it,
 * and a kill of its task takes it from the level's tail. */
static void queue_c_then_raise(mt_port_t port)
{
    send('C', 0);
    raise_once(port);
    assert_true(test_slot_queued_last_at(2)); /* B1, behind C0 */
}

static void queue_c_raise_kill_b(mt_port_t port)
{
    queue_c_then_raise(port);
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
    send('C', 1); /* behind C0 at the level's new tail */
}

static void test_slot_block_taken_by_a_message_behind_its_level(void **state)
{
    (void) state;
    uint8_t spare = make_abc(false);
    run_a_posting_b1(queue_c_then_raise);
    assert_string_equal(trace, "A0( raise isr back )A C0( )C B1( )B ");
    assert_int_equal(spare_in_body, spare - 1); /* C0's block */
    assert_int_equal(sched_msg_spare(), spare);
    run_a_posting_b1(queue_c_raise_kill_b);
    assert_string_equal(trace, "A0( raise isr back Bf )A C0( )C C1( )C ");
    assert_all_given_back(spare);
}

/* The mid-level tests' action on B, the slot's block's task: a kill or a
 * freeze. */
static void (*on_b)(void);

/* The slot's block in the middle of its level, between C0 and C1, then
 * on_b(); what is queued then counted. */
static void queue_c_raise_c_then_on_b(mt_port_t port)
{
    queue_c_then_raise(port);
    send('C', 1);
    on_b();
    queued_in_a = sched_queued_count();
}

/* Tasks A, B and C, and A's message whose handler leaves the slot's block
 * (B1) between C0 and C1 and does `action` on B: the trace is `expected`
 * and three messages are counted in A. Returns the pool's spare blocks. */
static uint8_t run_b1_mid_level(void (*action)(void), const char *expected)
{
    uint8_t spare = make_abc(false);
    on_b = action;
    run_a_posting_b1(queue_c_raise_c_then_on_b);
    assert_string_equal(trace, expected);
    assert_int_equal(queued_in_a, 3);
    return spare;
}

/* A kill of B with its message mid-level: the purge takes the slot's
 * block alone, and the level keeps the others, and one sent after the
 * kill, in order. */
static void kill_b_then_send_c2(void)
{
    assert_int_equal(sched_task_kill(PID('B')), MT_OK);
    send('C', 2);
}

static void test_slot_block_mid_level_a_kill_takes_it_alone(void **state)
{
    (void) state;
    uint8_t spare =
        run_b1_mid_level(kill_b_then_send_c2, "A0( raise isr back Bf )A C0( )C C1( )C C2( )C ");
    assert_all_given_back(spare);
}

/* The slot's block queued low, behind an older message of its level: a
 * second interrupt's post above the running frame runs at that exit from
 * a pool block (rule 3); the low one runs after its level's older one. */
static void queue_c_raise_twice(mt_port_t port)
{
    queue_c_then_raise(port);
    isr_targets = "D1B2";
    raise_interrupt(port);
}

static void test_slot_block_waiting_low_a_higher_post_runs_at_its_exit(void **state)
{
    (void) state;
    uint8_t spare = make_abc(true);
    run_a_posting_b1(queue_c_raise_twice);
    assert_string_equal(trace, "A0( raise isr back raise isr D1( )D back )A C0( )C B1( )B B2( )B ");
    assert_all_given_back(spare);
}

/* The slot's block waiting at a low level's tail while the pool is empty:
 * a later interrupt's post above the running frame finds neither free and
 * is refused, logged (MT_ERR_QUEUE_FULL); the lower message, older, waits
 * on and runs, and nothing else is lost. */
static msg_t *pool_taken[MOTET_MAX_QUEUED_MSGS];
static mt_err_t d_post_result;

static void isr_posts_to_d(void)
{
    note("isr ");
    d_post_result = sched_post_isr(PID('D'), PORT_0, NULL, 0, 0);
}

static void queue_c_raise_then_raise_d_with_the_pool_empty(mt_port_t port)
{
    queue_c_then_raise(port);
    uint8_t n = 0;
    while (sched_msg_spare()) pool_taken[n++] = sched_msg_alloc();
    tport_irq_attach(0, isr_posts_to_d);
    raise_interrupt(port);
    while (n) sched_msg_free(pool_taken[--n]);
}

static void test_slot_block_waiting_low_with_the_pool_empty_a_higher_post_is_refused(void **state)
{
    (void) state;
    uint8_t spare = make_abc(true);
    test_count_logged_errors(MT_OK); /* drain */
    run_a_posting_b1(queue_c_raise_then_raise_d_with_the_pool_empty);
    assert_string_equal(trace, "A0( raise isr back raise isr back )A C0( )C B1( )B ");
    assert_int_equal(d_post_result, MT_ERR_QUEUE_FULL);
    assert_int_equal(test_count_logged_errors(MT_ERR_QUEUE_FULL), 1);
    assert_all_given_back(spare);
}

/* A freeze of B with the slot's block mid-level, between C0 and C1: the
 * purge holds it, the level keeps C's; the thaw runs it. */
static void freeze_b(void)
{
    sched_mig_freeze(sched_find_task(PID('B')));
}

static void test_slot_block_mid_level_a_freeze_holds_it(void **state)
{
    (void) state;
    uint8_t spare = run_b1_mid_level(freeze_b, "A0( raise isr back )A C0( )C C1( )C ");
    assert_int_equal(sched_queued_count(), 1);
    trace[0] = 0;
    sched_mig_thaw(sched_find_task(PID('B')));
    sched_run_pending();
    assert_string_equal(trace, "B1( )B ");
    assert_all_given_back(spare);
}

/* A freeze for migration takes the slot's message into the task's held
 * list ahead of its later ones; the thaw runs them in creation order. */
static void raise_once_and_freeze_t(mt_port_t port)
{
    raise_once(port);
    sched_mig_freeze(sched_find_task(PID('T')));
    isr_targets = "T3";
    raise_interrupt(port);
}

static void test_slot_block_a_freeze_holds_the_message_in_order(void **state)
{
    (void) state;
    make_task('A', 3);
    make_task('T', 2);
    actions[PID('A')] = raise_once_and_freeze_t;
    tport_irq_attach(0, isr_posts_each);
    isr_targets = "T1T2";
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( raise isr back raise isr back )A ");
    assert_int_equal(sched_queued_count(), 3);
    trace[0] = 0;
    sched_mig_thaw(sched_find_task(PID('T')));
    sched_run_pending();
    assert_string_equal(trace, "T1( )T T2( )T T3( )T ");
    assert_int_equal(sched_queued_count(), 0);
}

/* ---- rule 4: a task on the stack is guarded ---- */

static void b_sends_back_to_a(mt_port_t port)
{
    (void) port;
    note("back ");
    send('A', 1);
    note("queued ");
}

static void test_rule4_message_to_task_on_stack_waits(void **state)
{
    (void) state;
    make_task('A', 2);
    make_task('B', 3);
    actions[PID('A')] = a_sends_to_b;
    actions[PID('B')] = b_sends_back_to_a;
    trace[0] = 0;
    send('A', 0);
    /* A1 runs only after A0 has returned: A never runs twice on the stack;
     * without the guard A1 would start inside B0. */
    assert_string_equal(trace, "A0( send B0( back queued )B sent )A A1( )A ");
}

static int self_sends_left;
static void b_sends_to_self(mt_port_t port)
{
    (void) port;
    if (self_sends_left-- > 0) send('B', 1);
    note("tail ");
}

static void test_rule4_self_send_runs_after_return(void **state)
{
    (void) state;
    make_task('B', 3);
    actions[PID('B')] = b_sends_to_self;
    self_sends_left = 2;
    trace[0] = 0;
    send('B', 0);
    assert_string_equal(trace, "B0( tail )B B1( tail )B B1( tail )B ");
    assert_int_equal(sched_stack_depth(), 0);
}

/* Thread-Metric's cooperative scenario (bench/cortex-m/bench_tm.c), which
 * checks its turns in the first rounds only, checked at every turn: equals
 * that each send themselves their next turn take turns in order, each alone
 * on the stack, its next turn waiting behind the others' (rules 2 and 4). */
static int turns_left[256];

static void a_queues_five_turns(mt_port_t port)
{
    (void) port;
    for (char letter = 'B'; letter <= 'F'; letter++) send(letter, 0);
    assert_int_equal(sched_queued_count(), 5);
}

static void take_turn(mt_port_t port)
{
    (void) port;
    mt_pid_t self = sched_current_pid();
    assert_int_equal(sched_stack_depth(), 1);
    if (--turns_left[self] > 0) send((char) ('A' + self - 0x20), 0);
}

static void test_rule2_equals_that_send_themselves_their_turn_take_turns_in_order(void **state)
{
    (void) state;
    make_task('A', 3);
    actions[PID('A')] = a_queues_five_turns;
    for (char letter = 'B'; letter <= 'F'; letter++) {
        make_task(letter, 2);
        actions[PID(letter)] = take_turn;
        turns_left[PID(letter)] = 3;
    }
    trace[0] = 0;
    send('A', 0);
    assert_string_equal(trace, "A0( )A "
                               "B0( )B C0( )C D0( )D E0( )E F0( )F "
                               "B0( )B C0( )C D0( )D E0( )E F0( )F "
                               "B0( )B C0( )C D0( )D E0( )E F0( )F ");
    assert_int_equal(sched_queued_count(), 0);
}

/* ---- rule 5: on return, the queue head runs only if it outranks the frame below ---- */

static void b_queues_for_c_and_d(mt_port_t port)
{
    (void) port;
    note("q ");
    send('C', 0); /* prio 2: above A (1), below B (3) */
    send('D', 0); /* prio 1: equal to A */
}

static void test_rule5_head_runs_only_if_it_outranks_frame_below(void **state)
{
    (void) state;
    make_task('A', 1);
    make_task('B', 3);
    make_task('C', 2);
    make_task('D', 1);
    actions[PID('A')] = a_sends_to_b;
    actions[PID('B')] = b_queues_for_c_and_d;
    trace[0] = 0;
    send('A', 0);
    /* C outranks A and runs before A resumes; D does not, so A resumes. */
    assert_string_equal(trace, "A0( send B0( q )B C0( )C sent )A D0( )D ");
}

/* ---- rule 6: nothing to do, the module sleeps until the next deadline ---- */

static mt_err_t stopper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) return timer_start(0, TIMER_MS(100), false);
    if (port == PORT_TIMEOUT0) sched_stop();
    return MT_OK;
}

static void test_rule6_idle_sleeps_until_the_next_deadline(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = 0x30, .prio = 1, .handler = stopper};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x30, NULL, 0), MT_OK);
    uint64_t t0 = tport_time();
    uint32_t sleeps = tport_sleep_count();
    sched_run();
    assert_int_equal(tport_time() - t0, TIMER_MS(100));
    assert_int_equal(tport_sleep_count() - sleeps, 1); /* one sleep, no polling */
    assert_int_equal(tport_sleep_ticks(), TIMER_MS(100));
    assert_int_equal(timer_interrupt_count(), 1); /* no periodic tick */
}

/* ---- rule 7: messages wait until PORT_INIT has been handled ---- */

static void test_rule7_messages_held_until_init_handled(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID('B'), .prio = 2, .handler = traced};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    send('B', 1);
    send('B', 2);
    assert_string_equal(trace, "");
    assert_int_equal(sched_queued_count(), 2);
    assert_int_equal(sched_task_init(PID('B'), NULL, 0), MT_OK);
    assert_string_equal(trace, "Bi B1( )B B2( )B ");
    assert_int_equal(sched_queued_count(), 0);
}

static void a_inits_b(mt_port_t port)
{
    (void) port;
    send('C', 0);                       /* queued, created first */
    send('B', 1);                       /* held, created second */
    sched_task_init(PID('B'), NULL, 0); /* queued behind both */
    send('C', 1);                       /* queued, created last */
}

/* A (5) and C (2) initialised, B (2) not; A's handler does `a_action`,
 * C's `c_action`. */
static void send_a_beside_uninitialised_b(action_fn a_action, action_fn c_action)
{
    make_task('A', 5);
    make_task('C', 2);
    task_spec_t spec = {.pid = PID('B'), .prio = 2, .handler = traced};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    actions[PID('A')] = a_action;
    actions[PID('C')] = c_action;
    trace[0] = 0;
    send('A', 0);
}

static void test_rule7_released_messages_keep_creation_order(void **state)
{
    (void) state;
    send_a_beside_uninitialised_b(a_inits_b, NULL);
    /* B's INIT, then its held message, which was created before C1. */
    assert_string_equal(trace, "A0( )A C0( )C Bi B1( )B C1( )C ");
}

/* B's first message is taken off the queue and held before C0 runs; its
 * second is sent by C0's handler, whose INIT for B runs at once (equal
 * priority) and puts the first back ahead of the second, and of C1, sent
 * after them. */
static void a_sends_to_uninitialised_b(mt_port_t port)
{
    (void) port;
    send('B', 1); /* B is not initialised: held when the drain reaches it */
    send('C', 0);
}

static void c_inits_b(mt_port_t port)
{
    if (port != PORT_0) return;
    assert_int_equal(sched_queued_count(), 1); /* B1, in B's held list */
    send('B', 2);
    assert_int_equal(sched_task_init(PID('B'), NULL, 0), MT_OK);
    send('C', 1);
    assert_int_equal(sched_queued_count(), 3);
}

static void test_rule7_messages_held_in_two_turns_keep_creation_order(void **state)
{
    (void) state;
    send_a_beside_uninitialised_b(a_sends_to_uninitialised_b, c_inits_b);
    assert_string_equal(trace, "A0( )A C0( Bi )C B1( )B B2( )B C1( )C ");
    assert_int_equal(sched_queued_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rule1_equal_priority_runs_nested, setup),
        cmocka_unit_test_setup(test_rule1_higher_priority_runs_nested_on_same_stack, setup),
        cmocka_unit_test_setup(test_rule2_lower_priority_is_queued, setup),
        cmocka_unit_test_setup(test_rule2_queue_orders_by_priority_then_creation, setup),
        cmocka_unit_test_setup(test_rule3_isr_post_strictly_higher_runs_at_interrupt_exit, setup),
        cmocka_unit_test_setup(test_rule3_isr_post_equal_priority_waits, setup),
        cmocka_unit_test_setup(test_rule3_isr_post_while_masked_runs_on_unmask, setup),
        cmocka_unit_test_setup(test_rule3_isr_posts_run_by_priority_then_creation, setup),
        cmocka_unit_test_setup(test_rule3_isr_post_during_an_isr_posted_handler_nests, setup),
        cmocka_unit_test_setup(test_rule3_a_slot_task_killing_itself_keeps_its_level_for_final,
                               setup),
        cmocka_unit_test_setup(test_rule3_an_interrupt_body_cannot_kill_a_task, setup),
        cmocka_unit_test_setup(test_slot_block_a_post_to_the_running_task_waits_off_the_pool,
                               setup),
        cmocka_unit_test_setup(test_slot_block_a_message_keeps_its_place_in_its_level, setup),
        cmocka_unit_test_setup(test_slot_block_a_message_below_a_higher_queued_one, setup),
        cmocka_unit_test_setup(test_slot_block_a_post_during_its_handler_takes_it_again, setup),
        cmocka_unit_test_setup(test_slot_block_a_kill_takes_the_message_with_its_task, setup),
        cmocka_unit_test_setup(
            test_slot_block_a_kill_of_the_head_leaves_a_later_message_of_its_level, setup),
        cmocka_unit_test_setup(test_slot_block_taken_by_a_message_behind_its_level, setup),
        cmocka_unit_test_setup(test_slot_block_a_freeze_holds_the_message_in_order, setup),
        cmocka_unit_test_setup(test_slot_block_mid_level_a_kill_takes_it_alone, setup),
        cmocka_unit_test_setup(test_slot_block_waiting_low_a_higher_post_runs_at_its_exit, setup),
        cmocka_unit_test_setup(test_slot_block_mid_level_a_freeze_holds_it, setup),
        cmocka_unit_test_setup(
            test_slot_block_waiting_low_with_the_pool_empty_a_higher_post_is_refused, setup),
        cmocka_unit_test_setup(test_rule4_message_to_task_on_stack_waits, setup),
        cmocka_unit_test_setup(test_rule3_an_exit_with_nothing_to_run_lets_no_interrupt_nest,
                               setup),
        cmocka_unit_test_setup(test_rule4_self_send_runs_after_return, setup),
        cmocka_unit_test_setup(
            test_rule2_equals_that_send_themselves_their_turn_take_turns_in_order, setup),
        cmocka_unit_test_setup(test_rule5_head_runs_only_if_it_outranks_frame_below, setup),
        cmocka_unit_test_setup(test_rule6_idle_sleeps_until_the_next_deadline, setup),
        cmocka_unit_test_setup(test_rule7_messages_held_until_init_handled, setup),
        cmocka_unit_test_setup(test_rule7_released_messages_keep_creation_order, setup),
        cmocka_unit_test_setup(test_rule7_messages_held_in_two_turns_keep_creation_order, setup),
        cmocka_unit_test_setup(test_spare_more_than_tells_the_count_from_below_and_above, setup),
    };
    return cmocka_run_group_tests_name("dispatch rules", tests, NULL, NULL);
}
