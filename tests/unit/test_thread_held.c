/* SPDX-License-Identifier: MIT */
/*
 * A message held by rule 7 does not keep a ready thread waiting past an
 * interrupt's exit. The interrupt wakes thread T (3) and posts to Y (5),
 * created but not initialised: the exit's drain finds Y's message at the
 * queue's head, which outranks T, and then holds it (rule 7). Held, it is
 * no claim of the kernel stack's (docs/threads.md: K before a ready thread
 * only for a frame at its level or above, or a queued message strictly
 * above it), so T, above the interrupted frame, runs at the exit, on every
 * policy: the order between K and a ready thread is by level in all.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_mantis thr_retos thr_rr thr_vop thr_vopd
 */
#include <string.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)

#define PID_S 0x50
#define PID_B 0x52
#define PID_Y 0x57 /* created, never initialised: its messages are held (rule 7) */
#define PID_M 0x58

static uint8_t stack_t_[STACK];
static char trace[256];
static sem_t sem_t_;
static thread_t *thread_t_;

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

static int setup(void **state)
{
    test_boot(state);
    memset(trace, 0, sizeof trace);
    sem_init(&sem_t_, 0);
    thread_t_ = NULL;
    return 0;
}

static void thread_t_body(void *arg)
{
    (void) arg;
    sem_wait(&sem_t_);
    note("T ");
    sem_wait(&sem_t_);
}

#define NOTE_HANDLER(name, text)                                                                   \
    static mt_err_t name(void *state, mt_port_t port, void *data, uint16_t len)                    \
    {                                                                                              \
        (void) state;                                                                              \
        (void) data;                                                                               \
        (void) len;                                                                                \
        if (port == PORT_0) note(text);                                                            \
        return MT_OK;                                                                              \
    }
NOTE_HANDLER(handler_b, "B ")
NOTE_HANDLER(handler_y, "Y ")

/* M (2): B (2) at once. */
static mt_err_t handler_m(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    note("M( ");
    assert_int_equal(sched_signal_to(PID_B, PORT_0), MT_OK);
    note(")M ");
    return MT_OK;
}

/* The same interrupt, and a post to M (2) behind Y's. */
static void isr_wakes_t_posts_to_y_and_m(void)
{
    sem_post_isr(&sem_t_);
    assert_int_equal(sched_post_isr(PID_Y, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_post_isr(PID_M, PORT_0, NULL, 0, 0), MT_OK);
}

/* S2 (1): the interrupt only. */
static mt_err_t handler_s2(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    note("S( ");
    tport_irq_raise(1);
    note(")S ");
    return MT_OK;
}

/* The interrupt wakes T (3) and posts to Y (5), not initialised: the exit's
 * drain at S's level finds Y's message at the head (T waits for it), then
 * holds it (rule 7): T, above S's level, must run then. */
static void isr_wakes_t_and_posts_to_y(void)
{
    sem_post_isr(&sem_t_);
    assert_int_equal(sched_post_isr(PID_Y, PORT_0, NULL, 0, 0), MT_OK);
}

/* S (1): the interrupt, then B (2) at once. */
static mt_err_t handler_s(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    note("S( ");
    tport_irq_raise(0);
    assert_int_equal(sched_signal_to(PID_B, PORT_0), MT_OK);
    note(")S ");
    return MT_OK;
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t h, bool init)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    if (init) assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static thread_t *spawn(uint8_t *stack, thread_entry_t entry, mt_prio_t prio)
{
    thread_spec_t spec = {.entry = entry,
                          .stack = stack,
                          .stack_size = STACK,
                          .prio = prio,
                          .pid = MT_PID_NONE,
                          .start = THREAD_START_NOW};
    thread_t *t = NULL;
    assert_int_equal(thread_create(&spec, &t), MT_OK);
    return t;
}

/* Y's message is still held, and runs once Y's INIT has. */
static void assert_y_s_message_runs_after_its_init(void)
{
    assert_int_equal(sched_queued_count(), 1);
    size_t before = strlen(trace);
    assert_int_equal(sched_task_init(PID_Y, NULL, 0), MT_OK);
    (void) sched_run_pending();
    assert_string_equal(trace + before, "Y ");
}

/* T runs at the interrupt's exit, before S's send to B (2). */
static void test_thread_runs_at_exit_past_a_held_head(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_wakes_t_and_posts_to_y);
    make_task(PID_S, 1, handler_s, true);
    make_task(PID_B, 2, handler_b, true);
    make_task(PID_Y, 5, handler_y, false);
    thread_t_ = spawn(stack_t_, thread_t_body, 3);
    trace[0] = 0;
    assert_int_equal(sched_signal_to(PID_S, PORT_0), MT_OK);
    assert_string_equal(trace, "S( T B )S ");
    assert_y_s_message_runs_after_its_init();
}

/* The same held head, then M (2) in the same drain: T, above M, runs
 * before it. */
static void test_thread_runs_before_a_lower_message_past_a_held_head(void **state)
{
    (void) state;
    tport_irq_attach(1, isr_wakes_t_posts_to_y_and_m);
    make_task(PID_S, 1, handler_s2, true);
    make_task(PID_B, 2, handler_b, true);
    make_task(PID_M, 2, handler_m, true);
    make_task(PID_Y, 5, handler_y, false);
    thread_t_ = spawn(stack_t_, thread_t_body, 3);
    trace[0] = 0;
    assert_int_equal(sched_signal_to(PID_S, PORT_0), MT_OK);
    assert_string_equal(trace, "S( T M( B )M )S ");
    assert_y_s_message_runs_after_its_init();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_thread_runs_at_exit_past_a_held_head, setup),
        cmocka_unit_test_setup(test_thread_runs_before_a_lower_message_past_a_held_head, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
