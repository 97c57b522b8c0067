/* SPDX-License-Identifier: MIT */
/*
 * Threads beside message tasks (thread.h), fixed-priority policy: life
 * cycle, semaphores (task and interrupt posts), sleep, the mailbox, and the
 * two directions of preemption between threads and handlers on the one
 * kernel stack, nested. Each test records a trace of what ran, in which
 * order, and compares it with the order the rules demand.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include <stdio.h>
#include <string.h>

#include "sched_internal.h"
#include "slab.h"
#include "test_support.h"
#include "thread_internal.h"

/* The kernel's block caches (slab.h), whose use a mailbox test watches. */
extern slab_cache_t timer_cache;
/* Message blocks taken from the pool. */
static uint8_t msg_blocks_in_use(void)
{
    return (uint8_t) (MOTET_MAX_QUEUED_MSGS - sched_msg_spare());
}

#define N_STACKS 4
#define STACK    THREAD_STACK_BYTES(0)

static uint8_t stacks[N_STACKS][STACK];
static char trace[512];
static sem_t sem;
static thread_t *th[N_STACKS];

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

static int setup(void **state)
{
    test_boot(state);
    memset(trace, 0, sizeof trace);
    memset(th, 0, sizeof th);
    sem_init(&sem, 0);
    return 0;
}

static thread_t *spawn(int i, thread_entry_t entry, mt_prio_t prio, mt_pid_t pid)
{
    thread_spec_t spec = {.entry = entry,
                          .arg = (void *) (intptr_t) i,
                          .stack = stacks[i],
                          .stack_size = sizeof stacks[i],
                          .prio = prio,
                          .pid = pid};
    assert_int_equal(thread_create(&spec, &th[i]), MT_OK);
    return th[i];
}

/* True if `p` lies in thread i's stack. */
static bool on_stack(int i, const void *p)
{
    const uint8_t *b = (const uint8_t *) p;
    return b >= stacks[i] && b < stacks[i] + STACK;
}

/* ---- life cycle ---- */

static void says_hello(void *arg)
{
    char s[16];
    snprintf(s, sizeof s, "T%d ", (int) (intptr_t) arg);
    note(s);
}

static void test_create_runs_at_once_and_exit_frees_the_slot(void **state)
{
    (void) state;
    /* Boot code is K's background: below every thread, so each runs as
     * soon as it is created, and returns (exits). */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < N_STACKS; i++) spawn(i, says_hello, 0, MT_PID_NONE);
    assert_string_equal(trace, "T0 T1 T2 T3 T0 T1 T2 T3 T0 T1 T2 T3 ");
    assert_null(thread_self());
}

static void test_create_rejects_bad_specs(void **state)
{
    (void) state;
    thread_spec_t spec = {.entry = says_hello, .stack = stacks[0], .stack_size = STACK};
    spec.prio = MOTET_PRIO_LEVELS;
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_INVALID);
    spec.prio = 1;
    spec.stack_size = 64; /* below the port's minimum */
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_INVALID);
    spec.stack_size = STACK;
    spec.stack_need = (uint16_t) (STACK - PORT_THREAD_STACK_EXTRA + 1); /* figure too big */
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_INVALID);
    spec.stack_need = 0;
    spec.entry = NULL;
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_INVALID);
    assert_true(test_count_logged_errors(MT_ERR_INVALID) >= 4);
}

static void waits_forever(void *arg)
{
    (void) arg;
    sem_wait(&sem);
}

static mt_err_t notes_nothing(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    return MT_OK;
}

static void test_thread_slots_run_out(void **state)
{
    (void) state;
    for (int i = 0; i < MOTET_MAX_THREADS; i++) spawn(i, waits_forever, 1, MT_PID_NONE);
    thread_spec_t spec = {
        .entry = waits_forever, .stack = stacks[0], .stack_size = STACK, .prio = 1};
    assert_int_equal(thread_create(&spec, NULL), MT_ERR_NO_SLAB);
}

/* A create claims its slot under the lock: one preempted before its
 * admission by another create (an interrupt's exit running a higher thread)
 * cannot be given the same slot. A create that fails gives it back. */
static void test_a_claimed_slot_is_not_handed_out_twice(void **state)
{
    (void) state;
    thread_t *first = thread_claim_slot();
    thread_t *second = thread_claim_slot();
    assert_non_null(first);
    assert_non_null(second);
    assert_ptr_not_equal(first, second);
    thread_release_slot(first);
    thread_release_slot(second);
    for (int i = 0; i < MOTET_MAX_THREADS; i++) spawn(i, waits_forever, 1, MT_PID_NONE);
}

static void test_a_failed_create_leaves_its_slot_free(void **state)
{
    (void) state;
    task_spec_t taken = {.pid = 0x49, .prio = 1, .handler = notes_nothing};
    assert_int_equal(sched_task_create(&taken), MT_OK);
    thread_spec_t spec = {.entry = waits_forever,
                          .stack = stacks[0],
                          .stack_size = STACK,
                          .prio = 1,
                          .pid = 0x49}; /* its pid is taken: bind_task() fails */
    for (int n = 0; n < MOTET_MAX_THREADS + 1; n++)
        assert_int_not_equal(thread_create(&spec, NULL), MT_OK);
    for (int i = 0; i < MOTET_MAX_THREADS; i++) spawn(i, waits_forever, 1, MT_PID_NONE);
}

/* ---- semaphores ---- */

static void waiter(void *arg)
{
    int i = (int) (intptr_t) arg;
    char s[16];
    for (int n = 0; n < 2; n++) {
        snprintf(s, sizeof s, "w%d ", i);
        note(s);
        assert_int_equal(sem_wait(&sem), MT_OK);
        snprintf(s, sizeof s, "g%d ", i);
        note(s);
    }
}

static void test_sem_post_from_task_context_wakes_at_once(void **state)
{
    (void) state;
    spawn(0, waiter, 2, MT_PID_NONE);
    note("post ");
    sem_post(&sem); /* the waiter outranks the background: it runs now */
    note("back ");
    sem_post(&sem);
    assert_string_equal(trace, "w0 post g0 w0 back g0 ");
}

static void waiter_once(void *arg)
{
    char s[16];
    assert_int_equal(sem_wait(&sem), MT_OK);
    snprintf(s, sizeof s, "g%d ", (int) (intptr_t) arg);
    note(s);
}

static void test_sem_wakes_highest_priority_waiter_first(void **state)
{
    (void) state;
    spawn(0, waiter_once, 1, MT_PID_NONE);
    spawn(1, waiter_once, 3, MT_PID_NONE);
    spawn(2, waiter_once, 2, MT_PID_NONE);
    spawn(3, waiter_once, 2, MT_PID_NONE);
    sem_post(&sem);
    sem_post(&sem);
    sem_post(&sem);
    sem_post(&sem);
    assert_string_equal(trace, "g1 g2 g3 g0 "); /* FIFO among equals */
}

static void test_sem_counts_posts_without_waiters(void **state)
{
    (void) state;
    sem_post(&sem);
    sem_post(&sem);
    spawn(0, waiter, 1, MT_PID_NONE); /* takes both without blocking */
    assert_string_equal(trace, "w0 g0 w0 g0 ");
    assert_int_equal(sem.count, 0);
}

static void isr_posts_sem(void)
{
    note("isr ");
    sem_post_isr(&sem);
}

static void test_sem_post_isr_runs_thread_at_interrupt_exit(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_posts_sem);
    spawn(0, waiter, 2, MT_PID_NONE);
    note("raise ");
    tport_irq_raise(0);
    note("back ");
    assert_string_equal(trace, "w0 raise isr g0 w0 back ");
}

static void test_sem_wait_outside_a_thread_is_refused(void **state)
{
    (void) state;
    assert_int_equal(sem_wait(&sem), MT_ERR_STATE);
    assert_null(thread_receive());
    assert_int_equal(thread_yield(), MT_ERR_STATE);
}

/* ---- sleep ---- */

static uint64_t slept_at[2], woke_at[2];

static void sleeper(void *arg)
{
    int i = (int) (intptr_t) arg;
    slept_at[i] = tport_time();
    assert_int_equal(thread_sleep(i ? 700 : 1234), MT_OK);
    woke_at[i] = tport_time();
    sched_stop();
}

static void test_sleep_wakes_at_the_exact_tick(void **state)
{
    (void) state;
    spawn(0, sleeper, 2, MT_PID_NONE);
    spawn(1, sleeper, 1, MT_PID_NONE);
    sched_run(); /* the first thread to wake stops it; run again for the other */
    sched_run();
    assert_int_equal(woke_at[1] - slept_at[1], 700);
    assert_int_equal(woke_at[0] - slept_at[0], 1234);
    assert_int_equal(tport_sleep_ticks(), 1234);
}

/* ---- the mailbox ---- */

#define PID_RX 0x40
#define PID_H  0x41

static void receiver(void *arg)
{
    (void) arg;
    char s[32];
    for (int n = 0; n < 3; n++) {
        msg_t *m = thread_receive();
        assert_non_null(m);
        snprintf(s, sizeof s, "rx%d:%s ", m->port - PORT_0, m->len ? (char *) m->data : "-");
        note(s);
    }
    assert_int_equal(timer_start(0, 500, false), MT_OK); /* its own timer */
    msg_t *m = thread_receive();
    assert_int_equal(m->port, PORT_TIMEOUT0);
    note("timeout ");
    sched_stop();
}

static void test_receive_takes_messages_in_order_with_payloads(void **state)
{
    (void) state;
    spawn(0, receiver, 1, PID_RX);
    assert_true(sched_task_exists(PID_RX));
    /* Borrowed payloads are copied: the thread reads them later. */
    char a[] = "one", b[] = "two";
    assert_int_equal(sched_send_to(PID_RX, PORT_0, a, sizeof a, 0), MT_OK);
    strcpy(a, "XXX");
    assert_int_equal(sched_send_to(PID_RX, PORT_0 + 1, b, sizeof b, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_RX, PORT_0 + 2, NULL, 0, 0), MT_OK);
    sched_run();
    assert_string_equal(trace, "rx0:one rx1:two rx2:- timeout ");
    assert_false(sched_task_exists(PID_RX)); /* exit removed its task */
}

/* Two periodic timeouts received, each in its timer's own block: the
 * message pool is never touched. */
static uint8_t pool_at_start;

static void receives_timeouts(void *arg)
{
    (void) arg;
    assert_int_equal(timer_start(1, 100, true), MT_OK);
    for (int n = 0; n < 2; n++) {
        msg_t *m = thread_receive();
        assert_int_equal(m->port, PORT_TIMEOUT1);
        assert_int_equal(msg_blocks_in_use(), pool_at_start);
        note("timeout ");
    }
    sched_stop();
}

static void test_a_thread_receives_its_timeouts_without_pool_blocks(void **state)
{
    (void) state;
    pool_at_start = msg_blocks_in_use();
    spawn(0, receives_timeouts, 1, PID_RX);
    sched_run();
    assert_string_equal(trace, "timeout timeout ");
    assert_false(sched_task_exists(PID_RX)); /* exit stopped its timer */
    assert_int_equal(timer_cache.in_use, 0);
    assert_int_equal(msg_blocks_in_use(), pool_at_start);
}

static void keeps_mail(void *arg)
{
    (void) arg;
    void *p = mem_alloc(40); /* owned by the bound pid: freed at exit */
    assert_non_null(p);
    sem_wait(&sem);
}

static void test_exit_frees_mailbox_and_memory(void **state)
{
    (void) state;
    mem_stats_t before, after;
    mem_get_stats(&before);
    spawn(0, keeps_mail, 1, PID_RX);
    assert_int_equal(sched_send_to(PID_RX, PORT_0, "abcdef", 7, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_RX, PORT_0, "ghijkl", 7, 0), MT_OK);
    assert_int_equal(thread_mail_count(th[0]), 2);
    assert_int_equal(sched_task_kill(PID_RX), MT_ERR_STATE); /* only the thread may end */
    sem_post(&sem);
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
    assert_false(sched_task_exists(PID_RX));
}

/* ---- preemption between threads and handlers ---- */

static const void *handler_local;
static uint8_t depth_in_thread;

static void hi_thread(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&sem);
        note("T( ");
        depth_in_thread = sched_stack_depth(); /* K's frames, left below */
        note(")T ");
    }
}

static mt_err_t raising_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note("H( ");
    tport_irq_raise(0); /* the ISR posts the semaphore */
    note("back ");
    note(")H ");
    return MT_OK;
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

/* A thread takes the payload of the message it received last only: the
 * one before went back to the pool at that receive, and its block may
 * carry another task's message by the time a stale pointer to it is
 * taken. It once was: the thread became the owner of PID_H's heap payload,
 * which PID_H then got as borrowed, no longer freed with its message. */
static msg_t *stale;
static void *taken_from_stale;
static uint8_t *for_h;

static mt_err_t keeps_its_payload(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st;
    if (port != PORT_0) return MT_OK;
    note(len == 4 && memcmp(data, "hhh", 4) == 0 ? "h:hhh " : "h:? ");
    note(mem_owner(data) == MEM_OWNER_KERNEL ? "kernel's " : "not the kernel's ");
    return MT_OK;
}

static void takes_a_stale_message(void *arg)
{
    (void) arg;
    stale = thread_receive();
    assert_non_null(stale);
    assert_null(thread_receive_for(THREAD_NO_WAIT)); /* its block is the pool's again */
    for_h = mem_alloc(4);
    memcpy(for_h, "hhh", 4);
    assert_int_equal(sched_send_to(PID_H, PORT_0, for_h, 4, MSG_HEAP), MT_OK); /* queued */
    assert_int_equal(stale->dst, PID_H); /* in the block the stale pointer names */
    taken_from_stale = sched_take_msg(stale);
    note("taken ");
}

static void test_a_thread_takes_only_the_message_it_received_last(void **state)
{
    (void) state;
    make_task(PID_H, 0, keeps_its_payload);
    spawn(0, takes_a_stale_message, 1, PID_RX);
    test_count_logged_errors(MT_OK);
    /* The thread outranks the sender: it runs to its end in this send. */
    assert_int_equal(sched_send_to(PID_RX, PORT_0, "one", 4, 0), MT_OK);
    assert_null(taken_from_stale);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    sched_run_pending(); /* PID_H's message, its payload the kernel's still */
    assert_string_equal(trace, "taken h:hhh kernel's ");
    assert_false(mem_is_heap(for_h)); /* freed after PID_H's handler */
    assert_true(mem_consistent());
}

static void test_thread_preempts_running_handler_which_resumes_after(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_posts_sem);
    spawn(0, hi_thread, 5, MT_PID_NONE);
    make_task(PID_H, 2, raising_handler);
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID_H, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "H( isr T( )T back )H ");
    assert_int_equal(depth_in_thread, 1);
}

static void test_equal_priority_thread_waits_for_the_handler(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_posts_sem);
    spawn(0, hi_thread, 2, MT_PID_NONE);
    make_task(PID_H, 2, raising_handler);
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID_H, PORT_0, NULL, 0, 0), MT_OK);
    /* Running keeps the CPU against an equal; the thread runs after. */
    assert_string_equal(trace, "H( isr back )H T( )T ");
    assert_int_equal(depth_in_thread, 0);
}

static bool handler_on_thread_stack;

static mt_err_t recording_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    int local = 0;
    if (port < PORT_0) return MT_OK;
    handler_local = &local;
    handler_on_thread_stack = on_stack(0, &local);
    char s[24];
    snprintf(s, sizeof s, "H%d( )H ", port - PORT_0);
    note(s);
    return MT_OK;
}

static void sending_thread(void *arg)
{
    (void) arg;
    note("send ");
    assert_int_equal(sched_send_to(PID_H, PORT_0, NULL, 0, 0), MT_OK);
    note("sent ");
    assert_int_equal(sched_send_to(PID_H, PORT_0 + 1, NULL, 0, 0), MT_OK);
    note("sent ");
}

static void test_handler_preempts_thread_on_the_kernel_stack(void **state)
{
    (void) state;
    make_task(PID_H, 3, recording_handler);
    spawn(0, sending_thread, 3, MT_PID_NONE);
    /* Rule 1 from a thread: equal or higher runs at once, on the kernel
     * stack, and the thread resumes after. */
    assert_string_equal(trace, "send H0( )H sent H1( )H sent ");
    assert_false(handler_on_thread_stack);
    assert_non_null(handler_local);
}

static void test_thread_send_to_lower_handler_is_queued(void **state)
{
    (void) state;
    make_task(PID_H, 1, recording_handler);
    spawn(0, sending_thread, 3, MT_PID_NONE);
    /* Queued below the thread: runs once it has exited. */
    assert_string_equal(trace, "send sent sent H0( )H H1( )H ");
}

static void isr_posts_to_h(void)
{
    note("isr ");
    sched_post_isr(PID_H, PORT_0 + 2, NULL, 0, 0);
}

static void interrupted_thread(void *arg)
{
    (void) arg;
    note("T( ");
    tport_irq_raise(1);
    note(")T ");
}

static void test_isr_post_strictly_higher_preempts_a_thread(void **state)
{
    (void) state;
    tport_irq_attach(1, isr_posts_to_h);
    make_task(PID_H, 4, recording_handler);
    spawn(0, interrupted_thread, 3, MT_PID_NONE);
    assert_string_equal(trace, "T( isr H2( )H )T ");
    assert_false(handler_on_thread_stack);
}

static void test_isr_post_equal_to_thread_waits(void **state)
{
    (void) state;
    tport_irq_attach(1, isr_posts_to_h);
    make_task(PID_H, 3, recording_handler);
    uint32_t switches = thread_switch_count();
    spawn(0, interrupted_thread, 3, MT_PID_NONE);
    assert_string_equal(trace, "T( isr )T H2( )H ");
    assert_int_equal(thread_switch_count() - switches, 2); /* in and out, nothing between */
}

/* Nesting: handler L (prio 1) is preempted by thread A (4); A sends to
 * handler M (6), which runs above L's frame; an interrupt in M wakes
 * thread B (7), which preempts M; then everything unwinds in order. */
#define PID_L 0x42
#define PID_M 0x43

static void thread_a(void *arg)
{
    (void) arg;
    sem_wait(&sem);
    note("A( ");
    sched_send_to(PID_M, PORT_0, NULL, 0, 0);
    note(")A ");
}

static sem_t sem_b;
static uint8_t depth_in_b;

static void thread_b(void *arg)
{
    (void) arg;
    sem_wait(&sem_b);
    depth_in_b = sched_stack_depth();
    note("B( )B ");
}

static void isr_posts_b(void)
{
    sem_post_isr(&sem_b);
}

static mt_err_t handler_l(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note("L( ");
    sem_post(&sem); /* wakes A, which preempts L at once */
    note(")L ");
    return MT_OK;
}

static mt_err_t handler_m(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    char s[8];
    snprintf(s, sizeof s, "M%d( ", sched_stack_depth());
    note(s);
    tport_irq_raise(2);
    note(")M ");
    return MT_OK;
}

/* M for a route: notes that it ran. */
static mt_err_t handler_m_plain(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) note("M ");
    return MT_OK;
}

static void test_nested_preemption_unwinds_in_order(void **state)
{
    (void) state;
    sem_init(&sem_b, 0);
    tport_irq_attach(2, isr_posts_b);
    spawn(0, thread_a, 4, MT_PID_NONE);
    spawn(1, thread_b, 7, MT_PID_NONE);
    make_task(PID_L, 1, handler_l);
    make_task(PID_M, 6, handler_m);
    uint32_t switches = thread_switch_count();
    trace[0] = 0;
    sched_send_to(PID_L, PORT_0, NULL, 0, 0);
    assert_string_equal(trace, "L( A( M2( B( )B )M )A )L ");
    assert_int_equal(depth_in_b, 2); /* L and M wait on the kernel stack */
    /* K->A, A->K (send), K->B (interrupt exit in M), B exits ->K, K->A,
     * A exits ->K. */
    assert_int_equal(thread_switch_count() - switches, 6);
}

/* A send along a route is the running handler's: a thread that preempts
 * handler R (a route to M, which outranks everything) and sends along
 * route 0 has no route of its own (bound to no task), so its send is
 * refused and logged, as from boot code, and never takes R's route; R's
 * own send along it, once the thread has finished, runs M at once. */
#define PID_R 0x46

static mt_err_t route_send_result;

static void route_thread(void *arg)
{
    (void) arg;
    sem_wait(&sem);
    note("A( ");
    route_send_result = sched_signal(0);
    note(")A ");
}

static mt_err_t handler_r(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note("R( ");
    sem_post(&sem); /* wakes the thread, which preempts R at once */
    assert_int_equal(sched_signal(0), MT_OK);
    note(")R ");
    return MT_OK;
}

static void test_thread_send_along_a_route_is_not_the_preempted_handlers(void **state)
{
    (void) state;
    static const route_t to_m[] = {{.pid = PID_M, .port = PORT_0}};
    spawn(0, route_thread, 4, MT_PID_NONE);
    make_task(PID_M, 6, handler_m_plain);
    task_spec_t spec = {
        .pid = PID_R, .prio = 1, .handler = handler_r, .routes = to_m, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_R, NULL, 0), MT_OK);
    test_count_logged_errors(MT_OK); /* drain */
    trace[0] = 0;
    route_send_result = MT_OK;
    assert_int_equal(sched_send_to(PID_R, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "R( A( )A M )R ");
    assert_int_equal(route_send_result, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

/* A thread woken by one of several queued handlers runs as soon as that
 * handler returns, before the lower queued ones, and an interrupt while it
 * runs does not bounce the CPU through the kernel stack. */
#define PID_Q1 0x44
#define PID_Q2 0x45

static mt_err_t q_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note(sched_current_pid() == PID_Q1 ? "M1 " : "M2 ");
    if (sched_current_pid() == PID_Q1) sem_post(&sem);
    return MT_OK;
}

static void mid_thread(void *arg)
{
    (void) arg;
    sem_wait(&sem);
    note("A( ");
    tport_irq_raise(3); /* nothing to post: its exit must not switch */
    note(")A ");
}

static void nothing(void)
{
}

static void test_thread_woken_mid_drain_runs_before_lower_messages(void **state)
{
    (void) state;
    tport_irq_attach(3, nothing);
    spawn(0, mid_thread, 3, MT_PID_NONE);
    make_task(PID_Q1, 5, q_handler);
    make_task(PID_Q2, 1, q_handler);
    port_irq_state_t s = port_irq_save(); /* queue both, run neither */
    sched_post_isr(PID_Q2, PORT_0, NULL, 0, 0);
    sched_post_isr(PID_Q1, PORT_0, NULL, 0, 0);
    port_irq_restore(s);
    uint32_t switches = thread_switch_count();
    trace[0] = 0;
    assert_int_equal(sched_run_pending(), 2);
    assert_string_equal(trace, "M1 A( )A M2 ");
    assert_int_equal(thread_switch_count() - switches, 2);
}

/* A thread made ready below the running handler's level waits for the pop
 * that goes below it, and runs there, before the handler under it resumes:
 * made ready by the handler (a semaphore post, PORT_0) or by an interrupt
 * during it (PORT_0 + 1), whichever frames were pushed above since. S (1)
 * runs A (5) at once, A makes thread T (3) ready and runs B (6) at once. */
#define PID_LOW 0x4A
#define PID_MID 0x4B
#define PID_TOP 0x4C

static mt_err_t handler_s(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    note("S( ");
    assert_int_equal(sched_signal_to(PID_MID, port), MT_OK);
    note(")S ");
    return MT_OK;
}

static mt_err_t handler_a(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    note("A( ");
    if (port == PORT_0)
        sem_post(&sem);
    else
        tport_irq_raise(0); /* the ISR posts the semaphore */
    assert_int_equal(sched_signal_to(PID_TOP, PORT_0), MT_OK);
    note(")A ");
    return MT_OK;
}

static mt_err_t handler_b(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) note("B ");
    return MT_OK;
}

static void test_a_thread_ready_below_a_handler_runs_at_the_pop_below_it(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_posts_sem);
    spawn(0, hi_thread, 3, MT_PID_NONE);
    make_task(PID_LOW, 1, handler_s);
    make_task(PID_MID, 5, handler_a);
    make_task(PID_TOP, 6, handler_b);
    static const char *const expected[] = {"S( A( B )A T( )T )S ", "S( A( isr B )A T( )T )S "};
    for (int i = 0; i < 2; i++) {
        trace[0] = 0;
        assert_int_equal(sched_send_to(PID_LOW, (mt_port_t) (PORT_0 + i), NULL, 0, 0), MT_OK);
        assert_string_equal(trace, expected[i]);
        assert_int_equal(depth_in_thread, 1); /* S waits below */
    }
}

/* A killed task's FINAL, run on top of its killer, wakes a thread that
 * outranks the killer's caller: the thread runs once the killer returns. */
#define PID_VICTIM 0x4D
static mt_err_t handler_victim(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_FINAL) {
        note("F ");
        sem_post(&sem);
    }
    return MT_OK;
}
static mt_err_t handler_killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    note("A( ");
    assert_int_equal(sched_task_kill(PID_VICTIM), MT_OK);
    note(")A ");
    return MT_OK;
}
static void test_a_thread_a_killed_task_s_final_wakes_runs_before_the_lower_caller(void **state)
{
    (void) state;
    spawn(0, hi_thread, 3, MT_PID_NONE);
    make_task(PID_LOW, 1, handler_s);
    make_task(PID_MID, 5, handler_killer);
    make_task(PID_VICTIM, 2, handler_victim);
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID_LOW, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "S( A( F )A T( )T )S ");
}

/* ---- the stack guard ---- */

static void deep(void *arg)
{
    (void) arg;
    sem_wait(&sem);
}

static void test_stack_painting_measures_use(void **state)
{
    (void) state;
    spawn(0, deep, 1, MT_PID_NONE);
    size_t used = thread_stack_high_water(th[0]);
    assert_true(used > 0 && used < STACK / 2);
    assert_true(thread_stack_guard_ok(th[0]));
    sem_post(&sem);
}

/* A timeout that falls due while a thread holds interrupts off is served
 * by that thread's own next timer call (the compare interrupt then never
 * comes), which decides nothing: the higher thread it wakes must still
 * run at the next yield of the equals, not after they are done. */
#define PID_T 0x46

static sem_t never;

static void times_out(void *arg)
{
    (void) arg;
    assert_int_equal(sem_wait_for(&never, 50), MT_ERR_TIMEOUT);
    note("H ");
}

static void yields_thrice(void *arg)
{
    int i = (int) (intptr_t) arg;
    for (int n = 0; n < 3; n++) {
        if (i == 2 && n == 0) { /* the timer call that serves H's timeout */
            port_irq_state_t s = port_irq_save();
            tport_busy(100);
            assert_int_equal(timer_stop_for(PID_T, 0), MT_OK);
            port_irq_restore(s);
        }
        note(i == 1 ? "L1 " : "L2 ");
        thread_yield();
    }
    sched_stop(); /* sched_run() returns once every thread is done */
}

/* PID_T's timer (40 ticks) is the head: a deadline after it that falls due
 * while a thread holds interrupts off is served by that thread's call. */
static void start_the_head_timer(void)
{
    make_task(PID_T, 1, raising_handler); /* its timer never fires: only INIT runs */
    assert_int_equal(timer_start_for(PID_T, 0, 40, false), MT_OK);
}

/* `higher_one` (level 4, bound to `pid`) waits 50 ticks; two equals at level 2
 * yield thrice, L2 serving its expiry first: it runs at their next yield. */
static void run_a_served_timeout(thread_entry_t higher_one, mt_pid_t pid)
{
    start_the_head_timer();
    spawn(0, higher_one, 4, pid);
    thread_spec_t spec = {.entry = yields_thrice, .prio = 2, .start = THREAD_START_AT_RUN};
    for (int i = 1; i <= 2; i++) {
        spec.arg = (void *) (intptr_t) i;
        spec.stack = stacks[i];
        spec.stack_size = sizeof stacks[i];
        assert_int_equal(thread_create(&spec, &th[i]), MT_OK);
    }
    sched_run();
    assert_string_equal(trace, "L1 L2 H L1 L2 L1 L2 ");
}

static void test_a_timeout_served_by_a_thread_s_timer_call_runs_at_its_yield(void **state)
{
    (void) state;
    sem_init(&never, 0);
    run_a_served_timeout(times_out, MT_PID_NONE);
}

/* The same for a thread bound to a pid whose own task timer expires while
 * it waits in thread_receive(): the expiry reaches its mailbox, not its
 * kernel timer, and must still run it at the equals' next yield. */
#define PID_B 0x47

static void receives_its_timeout(void *arg)
{
    (void) arg;
    assert_int_equal(timer_start(0, 50, false), MT_OK);
    msg_t *m = thread_receive();
    assert_int_equal(m->port, PORT_TIMEOUT0);
    note("H ");
}

static void test_a_mailbox_timeout_served_by_a_thread_s_timer_call_runs_at_its_yield(void **state)
{
    (void) state;
    run_a_served_timeout(receives_its_timeout, PID_B);
}

/* A task message queued above a lone thread by the same kind of served
 * expiry: the thread's next yield, with no equal to yield to, gives the
 * kernel stack its turn. */
#define PID_X 0x48

static mt_err_t notes_its_timeout(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_TIMEOUT0) note("X ");
    return MT_OK;
}

static void serves_and_yields(void *arg)
{
    (void) arg;
    for (int n = 0; n < 3; n++) {
        if (n == 0) { /* the timer call that serves X's timeout */
            port_irq_state_t s = port_irq_save();
            tport_busy(100);
            assert_int_equal(timer_stop_for(PID_T, 0), MT_OK);
            port_irq_restore(s);
        }
        note("L ");
        assert_int_equal(thread_yield(), MT_OK);
    }
    sched_stop();
}

static void test_a_yield_with_no_equal_gives_way_to_a_served_task_timeout(void **state)
{
    (void) state;
    start_the_head_timer();
    make_task(PID_X, 4, notes_its_timeout);
    assert_int_equal(timer_start_for(PID_X, 0, 50, false), MT_OK);
    thread_spec_t spec = {.entry = serves_and_yields,
                          .stack = stacks[1],
                          .stack_size = sizeof stacks[1],
                          .prio = 2,
                          .start = THREAD_START_AT_RUN};
    assert_int_equal(thread_create(&spec, &th[1]), MT_OK);
    sched_run();
    assert_string_equal(trace, "L X L L ");
}

/* Equals that yield take turns in the order they became ready, at every
 * step (the Thread-Metric bench checks only the counts at its end). */
static void yields_in_turn(void *arg)
{
    static const char *const names[] = {"A ", "B ", "C "};
    for (int n = 0; n < 3; n++) {
        note(names[(intptr_t) arg]);
        assert_int_equal(thread_yield(), MT_OK);
    }
    sched_stop(); /* sched_run() returns once every thread is done */
}

static void test_equals_that_yield_take_turns_in_order(void **state)
{
    (void) state;
    thread_spec_t spec = {.entry = yields_in_turn, .prio = 2, .start = THREAD_START_AT_RUN};
    for (int i = 0; i < 3; i++) {
        spec.arg = (void *) (intptr_t) i;
        spec.stack = stacks[i];
        spec.stack_size = sizeof stacks[i];
        assert_int_equal(thread_create(&spec, &th[i]), MT_OK);
    }
    sched_run();
    assert_string_equal(trace, "A B C A B C A B C ");
}

/* An expiry served in a handler's task context (a timer call after the
 * deadline passed with interrupts off) wakes a thread that outranks the
 * handler's caller: the thread runs once the handler returns. */
static mt_err_t handler_serves(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    note("A( ");
    port_irq_state_t s = port_irq_save();
    tport_busy(100);
    assert_int_equal(timer_stop_for(PID_T, 0), MT_OK);
    port_irq_restore(s);
    note(")A ");
    return MT_OK;
}
static void
test_a_thread_an_expiry_served_in_a_handler_wakes_runs_before_the_lower_caller(void **state)
{
    (void) state;
    sem_init(&never, 0);
    start_the_head_timer();
    spawn(0, times_out, 3, MT_PID_NONE);
    make_task(PID_LOW, 1, handler_s);
    make_task(PID_MID, 5, handler_serves);
    trace[0] = 0;
    assert_int_equal(sched_send_to(PID_LOW, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(trace, "S( A( )A H )S ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_create_runs_at_once_and_exit_frees_the_slot, setup),
        cmocka_unit_test_setup(test_create_rejects_bad_specs, setup),
        cmocka_unit_test_setup(test_thread_slots_run_out, setup),
        cmocka_unit_test_setup(test_a_claimed_slot_is_not_handed_out_twice, setup),
        cmocka_unit_test_setup(test_a_failed_create_leaves_its_slot_free, setup),
        cmocka_unit_test_setup(test_sem_post_from_task_context_wakes_at_once, setup),
        cmocka_unit_test_setup(test_sem_wakes_highest_priority_waiter_first, setup),
        cmocka_unit_test_setup(test_sem_counts_posts_without_waiters, setup),
        cmocka_unit_test_setup(test_sem_post_isr_runs_thread_at_interrupt_exit, setup),
        cmocka_unit_test_setup(test_sem_wait_outside_a_thread_is_refused, setup),
        cmocka_unit_test_setup(test_sleep_wakes_at_the_exact_tick, setup),
        cmocka_unit_test_setup(test_receive_takes_messages_in_order_with_payloads, setup),
        cmocka_unit_test_setup(test_a_thread_takes_only_the_message_it_received_last, setup),
        cmocka_unit_test_setup(test_a_thread_receives_its_timeouts_without_pool_blocks, setup),
        cmocka_unit_test_setup(test_exit_frees_mailbox_and_memory, setup),
        cmocka_unit_test_setup(test_thread_preempts_running_handler_which_resumes_after, setup),
        cmocka_unit_test_setup(test_equal_priority_thread_waits_for_the_handler, setup),
        cmocka_unit_test_setup(test_handler_preempts_thread_on_the_kernel_stack, setup),
        cmocka_unit_test_setup(test_thread_send_to_lower_handler_is_queued, setup),
        cmocka_unit_test_setup(test_thread_send_along_a_route_is_not_the_preempted_handlers, setup),
        cmocka_unit_test_setup(test_isr_post_strictly_higher_preempts_a_thread, setup),
        cmocka_unit_test_setup(test_isr_post_equal_to_thread_waits, setup),
        cmocka_unit_test_setup(test_nested_preemption_unwinds_in_order, setup),
        cmocka_unit_test_setup(test_thread_woken_mid_drain_runs_before_lower_messages, setup),
        cmocka_unit_test_setup(test_a_thread_ready_below_a_handler_runs_at_the_pop_below_it, setup),
        cmocka_unit_test_setup(
            test_a_thread_a_killed_task_s_final_wakes_runs_before_the_lower_caller, setup),
        cmocka_unit_test_setup(
            test_a_thread_an_expiry_served_in_a_handler_wakes_runs_before_the_lower_caller, setup),
        cmocka_unit_test_setup(test_stack_painting_measures_use, setup),
        cmocka_unit_test_setup(test_a_timeout_served_by_a_thread_s_timer_call_runs_at_its_yield,
                               setup),
        cmocka_unit_test_setup(
            test_a_mailbox_timeout_served_by_a_thread_s_timer_call_runs_at_its_yield, setup),
        cmocka_unit_test_setup(test_a_yield_with_no_equal_gives_way_to_a_served_task_timeout,
                               setup),
        cmocka_unit_test_setup(test_equals_that_yield_take_turns_in_order, setup),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
