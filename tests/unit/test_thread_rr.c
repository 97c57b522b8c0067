/* SPDX-License-Identifier: MIT */
/*
 * Fixed priorities with round robin (MOTET_THREAD_RR=1): threads of class
 * RR share the CPU with their equals in slices of MOTET_THREAD_SLICE_US,
 * counted in their own CPU time; FIFO-class equals do not alternate; a
 * higher thread still preempts at once. The kernel counts switches by
 * cause here (MOTET_THREAD_CUT_STATS=1).
 *
 * MOTET_TEST_KERNEL: thr_rr
 */
#include <string.h>

#include "test_support.h"
#include "thread_internal.h"

#define STACK  THREAD_STACK_BYTES(0)
#define CHUNK  TIMER_MS(1)                    /* ticks of work per step */
#define SLICE  (MOTET_THREAD_SLICE_US / 1000) /* steps per slice */
#define STEPS  (3 * SLICE)
#define PID_GO 0x30
#define PID_H  0x31

static uint8_t stacks[3][STACK];
static char runs[256]; /* one letter per step */
static uint8_t cls;
static bool s_first;        /* creator(): a thread of two steps before A and B */
static unsigned steps_each; /* steps of work per worker */
static sem_t gate;

static int setup(void **state)
{
    test_boot(state);
    memset(runs, 0, sizeof runs);
    steps_each = STEPS;
    s_first = false;
    sem_init(&gate, 0);
    return 0;
}

static void step(char who)
{
    size_t n = strlen(runs);
    if (n < sizeof runs - 1) runs[n] = who;
    tport_busy(CHUNK);
}

static void worker(void *arg)
{
    char who = (char) (intptr_t) arg;
    for (unsigned i = 0; i < steps_each; i++) step(who);
}

static void spawn(int i, char who, mt_prio_t prio)
{
    thread_spec_t spec = {.entry = worker,
                          .arg = (void *) (intptr_t) who,
                          .stack = stacks[i],
                          .stack_size = STACK,
                          .prio = prio,
                          .cls = cls};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
}

static void two_steps(void *arg)
{
    (void) arg;
    step('S');
    step('S');
}

/* Create the threads from a handler above them, so none runs before all
 * exist; they start when it returns. With s_first, S (two steps) leads. */
static mt_err_t creator(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    if (s_first) {
        thread_spec_t spec = {
            .entry = two_steps, .stack = stacks[2], .stack_size = STACK, .prio = 2, .cls = cls};
        assert_int_equal(thread_create(&spec, NULL), MT_OK);
    }
    spawn(0, 'A', 2);
    spawn(1, 'B', 2);
    return MT_OK;
}

/* Run `creator_handler` in a task above the threads it creates. */
static void create_from_handler(task_handler_t creator_handler)
{
    task_spec_t spec = {.pid = PID_GO, .prio = 5, .handler = creator_handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_GO, NULL, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_GO, PORT_0, NULL, 0, 0), MT_OK);
}

static void run_two(uint8_t klass)
{
    cls = klass;
    create_from_handler(creator);
}

/* Expected letters: runs of `len` steps, alternating from 'A'. */
static void expect_alternation(unsigned len, unsigned total_each)
{
    char want[256] = {0};
    unsigned a = 0, b = 0;
    for (size_t n = 0; a + b < 2 * total_each; n++) {
        bool a_turn = (n / len) % 2 == 0;
        if ((a_turn && a < total_each) || b >= total_each) {
            want[strlen(want)] = 'A';
            a++;
        } else {
            want[strlen(want)] = 'B';
            b++;
        }
    }
    assert_string_equal(runs, want);
}

static void test_round_robin_alternates_equal_priorities(void **state)
{
    (void) state;
    run_two(THREAD_CLASS_RR);
    expect_alternation(SLICE, STEPS); /* AAAAAAAAAABBBBBBBBBBAAAA... */
}

static void test_fifo_class_equals_run_to_completion(void **state)
{
    (void) state;
    run_two(THREAD_CLASS_FIFO);
    expect_alternation(STEPS, STEPS); /* all of A, then all of B */
}

/* Each slice end that hands the CPU to the waiting equal is an
 * involuntary switch to an equal; the exits are voluntary. (Two and a half
 * slices of work each, so that no exit coincides with a slice end.) */
static void test_slice_ends_are_involuntary_switches_to_equals(void **state)
{
    (void) state;
    thread_switch_stats_t st;
    steps_each = 2 * SLICE + SLICE / 2;
    run_two(THREAD_CLASS_RR);
    expect_alternation(SLICE, steps_each); /* A B A B, A ends, B ends: four slice ends */
    thread_switch_stats(&st);
    assert_int_equal(st.involuntary, 4);
    assert_int_equal(st.to_equal, 4);
    assert_int_equal(st.voluntary, 2);   /* A exits to B, B exits to K */
    assert_int_equal(st.from_kernel, 1); /* K starts A */
    assert_int_equal(thread_switch_count(), 7);
}

static void waits_once(void *arg)
{
    (void) arg;
    assert_int_equal(sem_wait(&gate), MT_OK);
    step('W');
}

static void posts_once(void *arg)
{
    (void) arg;
    step('(');
    sem_post(&gate); /* wakes the higher waiter: this thread is preempted */
    step(')');
}

/* A thread that blocks or exits leaves voluntarily, one that a higher
 * thread preempts while it still has work leaves involuntarily, and the
 * kernel stack handing the CPU to a thread is neither. */
static void test_switches_are_split_by_cause(void **state)
{
    (void) state;
    thread_switch_stats_t before, after;
    uint32_t total = thread_switch_count();
    thread_switch_stats(&before);
    thread_spec_t spec = {.entry = waits_once, .stack = stacks[0], .stack_size = STACK, .prio = 4};
    assert_int_equal(thread_create(&spec, NULL), MT_OK); /* K -> waiter, which blocks: -> K */
    spec.entry = posts_once;
    spec.stack = stacks[1];
    spec.prio = 2;
    assert_int_equal(thread_create(&spec, NULL), MT_OK); /* K -> poster -> waiter -> poster -> K */
    assert_string_equal(runs, "(W)");
    thread_switch_stats(&after);
    assert_int_equal(after.from_kernel - before.from_kernel, 2);
    assert_int_equal(after.involuntary - before.involuntary, 1); /* the poster, preempted */
    assert_int_equal(after.to_equal - before.to_equal, 0);       /* by a higher thread */
    assert_int_equal(after.voluntary - before.voluntary, 3);     /* blocked, then two exits */
    assert_int_equal(thread_switch_count() - total, 6);
}

static void test_fifo_class_equals_switch_only_voluntarily(void **state)
{
    (void) state;
    thread_switch_stats_t st;
    run_two(THREAD_CLASS_FIFO);
    thread_switch_stats(&st);
    assert_int_equal(st.involuntary, 0);
    assert_int_equal(st.voluntary, 2);
}

static mt_err_t idle_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) port;
    (void) data;
    (void) len;
    (void) state;
    return MT_OK;
}

static void isr_posts_low(void)
{
    sched_post_isr(PID_H, PORT_0, NULL, 0, 0);
}

/* The slice timer is started once per slice that has a waiting equal, and
 * interrupts in between, which leave the running thread on the CPU, do not
 * touch it: A B A B A, then B alone with nothing to slice for. */
static void test_interrupts_that_keep_the_thread_leave_the_slice_timer_alone(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_H, .prio = 1, .handler = idle_handler}; /* below A and B */
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_H, NULL, 0), MT_OK);
    tport_irq_attach(0, isr_posts_low);
    for (uint64_t at = 1500; at < 50000; at += 2000) tport_irq_schedule(0, tport_time() + at);
    steps_each = 2 * SLICE + SLICE / 2;
    run_two(THREAD_CLASS_RR);
    expect_alternation(SLICE, steps_each);
    assert_int_equal(thread_slice_starts(), 5);
}

/* S runs two steps and exits with its slice timer running towards its own
 * slice end; A, which starts then with a whole slice, gets the whole of it,
 * no step more or less: SS, then A and B a slice each. */
static void test_a_thread_starting_mid_slice_gets_its_whole_slice(void **state)
{
    (void) state;
    steps_each = 2 * SLICE;
    s_first = true;
    run_two(THREAD_CLASS_RR);
    char want[256] = "SS";
    for (unsigned i = 0; i < 4 * SLICE; i++) want[2 + i] = (i / SLICE) % 2 ? 'B' : 'A';
    assert_string_equal(runs, want);
}

/* A handler that interrupts A for 5 ms: that time is not A's slice. */
static mt_err_t busy_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) tport_busy(5 * CHUNK);
    return MT_OK;
}

static void isr_posts_h(void)
{
    sched_post_isr(PID_H, PORT_0, NULL, 0, 0);
}

static void test_slice_counts_only_the_threads_own_cpu_time(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_H, .prio = 6, .handler = busy_handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_H, NULL, 0), MT_OK);
    tport_irq_attach(0, isr_posts_h);
    tport_irq_schedule(0, tport_time() + CHUNK * 7 / 2); /* in A's fourth step */
    run_two(THREAD_CLASS_RR);
    expect_alternation(SLICE, STEPS);
}

static void high(void *arg)
{
    (void) arg;
    sem_wait(&gate);
    step('H');
}

static void isr_opens_gate(void)
{
    sem_post_isr(&gate);
}

static void test_higher_thread_preempts_mid_slice(void **state)
{
    (void) state;
    thread_spec_t spec = {
        .entry = high, .stack = stacks[2], .stack_size = STACK, .prio = 4, .cls = THREAD_CLASS_RR};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    tport_irq_attach(0, isr_opens_gate);
    tport_irq_schedule(0, tport_time() + CHUNK * 5 / 2); /* in A's third step */
    run_two(THREAD_CLASS_RR);
    /* H runs at once after A's third step; A then finishes its slice. */
    assert_memory_equal(runs, "AAAHAAAAAAABBBBBBBBBB", 21);
}

static void yields_once(void *arg)
{
    (void) arg;
    step('A');
    thread_yield(); /* no equal ready: A keeps the CPU */
    step('a');
}

/* Seven steps, a yield, nine steps: with a new slice at the yield, the
 * slice ends after the sixteenth step, not the tenth. */
static void yields_midway(void *arg)
{
    (void) arg;
    for (int i = 0; i < 7; i++) step('A');
    thread_yield();
    for (int i = 0; i < 9; i++) step('A');
}

static void low_once(void *arg)
{
    (void) arg;
    step('L');
}

static thread_entry_t high_entry;
static bool with_low;

/* A thread of level 4 and, with_low, one of level 2, created from a
 * handler above both, so that both are ready when the higher one runs. */
static mt_err_t creator_high_low(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    thread_spec_t spec = {.entry = high_entry,
                          .stack = stacks[0],
                          .stack_size = STACK,
                          .prio = 4,
                          .cls = THREAD_CLASS_RR};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    if (!with_low) return MT_OK;
    spec.entry = low_once;
    spec.stack = stacks[1];
    spec.prio = 2;
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    return MT_OK;
}

static void run_high_low(thread_entry_t entry, bool low)
{
    high_entry = entry;
    with_low = low;
    create_from_handler(creator_high_low);
}

/* A yield with only a lower thread ready returns at once: the lower
 * thread runs only when the higher one is done. */
static void test_yield_with_only_a_lower_thread_ready_keeps_the_cpu(void **state)
{
    (void) state;
    uint32_t switches = thread_switch_count();
    run_high_low(yields_once, true);
    assert_string_equal(runs, "AaL");
    assert_int_equal(thread_switch_count() - switches, 3); /* K -> A -> L -> K */
}

/* A yield that keeps the CPU gives a new slice, as one behind equals does:
 * an equal woken in the eighth step (sem_post_isr) gets the CPU after the
 * sixteenth, with a lower thread ready at the yield or none. */
static void yield_kept_renews_slice(bool low)
{
    thread_spec_t spec = {.entry = waits_once,
                          .stack = stacks[2],
                          .stack_size = STACK,
                          .prio = 4,
                          .cls = THREAD_CLASS_RR};
    assert_int_equal(thread_create(&spec, NULL), MT_OK); /* blocks on the gate */
    tport_irq_attach(0, isr_opens_gate);
    tport_irq_schedule(0, tport_time() + CHUNK * 15 / 2);
    run_high_low(yields_midway, low);
    assert_string_equal(runs, low ? "AAAAAAAAAAAAAAAAWL" : "AAAAAAAAAAAAAAAAW");
}

static void test_yield_kept_with_a_lower_thread_ready_renews_the_slice(void **state)
{
    (void) state;
    yield_kept_renews_slice(true);
}

static void test_yield_kept_with_no_thread_ready_renews_the_slice(void **state)
{
    (void) state;
    yield_kept_renews_slice(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_round_robin_alternates_equal_priorities, setup),
        cmocka_unit_test_setup(test_fifo_class_equals_run_to_completion, setup),
        cmocka_unit_test_setup(test_slice_ends_are_involuntary_switches_to_equals, setup),
        cmocka_unit_test_setup(test_a_thread_starting_mid_slice_gets_its_whole_slice, setup),
        cmocka_unit_test_setup(test_fifo_class_equals_switch_only_voluntarily, setup),
        cmocka_unit_test_setup(test_switches_are_split_by_cause, setup),
        cmocka_unit_test_setup(test_interrupts_that_keep_the_thread_leave_the_slice_timer_alone,
                               setup),
        cmocka_unit_test_setup(test_slice_counts_only_the_threads_own_cpu_time, setup),
        cmocka_unit_test_setup(test_higher_thread_preempts_mid_slice, setup),
        cmocka_unit_test_setup(test_yield_with_only_a_lower_thread_ready_keeps_the_cpu, setup),
        cmocka_unit_test_setup(test_yield_kept_with_a_lower_thread_ready_renews_the_slice, setup),
        cmocka_unit_test_setup(test_yield_kept_with_no_thread_ready_renews_the_slice, setup),
    };
    return cmocka_run_group_tests_name("round robin", tests, NULL, NULL);
}
