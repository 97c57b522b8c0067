/* SPDX-License-Identifier: MIT */
/*
 * Event-boosting dynamic priorities (RETOS): without any priority set by
 * the programmer, a thread woken by a radio packet preempts a CPU-bound
 * thread at once; the boosts (+3 timer, +2 radio, +1 sensor from 4) and the
 * decay (-1 per 8 ms of CPU) are the paper's; the real-time classes rank
 * above every dynamic thread of their level.
 *
 * MOTET_TEST_KERNEL: thr_retos
 */
#include <string.h>

#include "test_support.h"
#include "thread_internal.h"

#define STACK    THREAD_STACK_BYTES(0)
#define PID_R    0x50
#define LEVEL    2
#define EVENT_AT TIMER_MS(5) /* into the CPU-bound thread's run */

static uint8_t stacks[3][STACK];
static thread_t *radio, *cpu;
static thread_event_t radio_event;
static uint64_t received_at;
static int8_t dyn_when_blocked;
static bool cpu_done;

static int setup(void **state)
{
    test_boot(state);
    received_at = 0;
    cpu_done = false;
    return 0;
}

static void radio_thread(void *arg)
{
    (void) arg;
    msg_t *m = thread_receive_ev(radio_event);
    assert_non_null(m);
    received_at = tport_time();
}

static void cpu_thread(void *arg)
{
    (void) arg;
    for (int i = 0; i < 40; i++) tport_busy(TIMER_MS(1)); /* 40 ms of computing */
    cpu_done = true;
}

static void isr_packet(void)
{
    sched_post_isr(PID_R, PORT_0, "pkt", 4, 0);
}

static thread_t *spawn(int i, thread_entry_t entry, mt_pid_t pid, uint8_t cls)
{
    thread_t *t;
    thread_spec_t spec = {.entry = entry,
                          .stack = stacks[i],
                          .stack_size = STACK,
                          .prio = LEVEL, /* the same level: no explicit priority */
                          .cls = cls,
                          .pid = pid};
    assert_int_equal(thread_create(&spec, &t), MT_OK);
    return t;
}

/* The radio thread waits first (it runs and blocks at creation), then the
 * CPU-bound one starts; a packet arrives 5 ms into its computation. */
static uint64_t packet_scenario(thread_event_t ev)
{
    radio_event = ev;
    radio = spawn(0, radio_thread, PID_R, THREAD_CLASS_DEFAULT);
    dyn_when_blocked = thread_dyn_prio(radio);
    tport_irq_attach(0, isr_packet);
    uint64_t start = tport_time();
    tport_irq_schedule(0, start + EVENT_AT);
    cpu = spawn(1, cpu_thread, MT_PID_NONE, THREAD_CLASS_DEFAULT);
    assert_true(cpu_done);
    return received_at - start;
}

static void test_radio_thread_preempts_cpu_bound_thread_at_once(void **state)
{
    (void) state;
    uint64_t latency = packet_scenario(THREAD_EV_RADIO);
    assert_int_equal(dyn_when_blocked, 4 + 2);
    assert_int_equal(latency, EVENT_AT); /* the instant it arrived */
}

static void test_without_the_boost_it_waits_for_the_decay(void **state)
{
    (void) state;
    uint64_t latency = packet_scenario(THREAD_EV_NONE);
    assert_int_equal(dyn_when_blocked, 4);
    /* Equal dynamic priorities: the running thread keeps the CPU until
     * 8 ms of computing cost it one level. */
    assert_int_equal(latency, TIMER_MS(8));
}

static sem_t go;
static int8_t dyn_of_cpu;

static void boosted_cpu_thread(void *arg)
{
    (void) arg;
    sem_wait_ev(&go, THREAD_EV_TIMER); /* a timer wait: 4 + 3 */
    dyn_of_cpu = thread_dyn_prio(thread_self());
    cpu_thread(NULL);
}

/* Dynamic priorities order threads within a level only: a packet thread
 * one level up (the tree-position benchmark's layout) preempts a lower
 * thread at once, however far that one was boosted and however low its
 * own dynamic priority is. */
static void test_a_higher_level_preempts_whatever_the_boosts(void **state)
{
    (void) state;
    sem_init(&go, 0);
    radio_event = THREAD_EV_NONE; /* no boost: it stays at 4, below 7 */
    thread_spec_t spec = {.entry = radio_thread,
                          .stack = stacks[0],
                          .stack_size = STACK,
                          .prio = LEVEL + 2,
                          .pid = PID_R};
    assert_int_equal(thread_create(&spec, &radio), MT_OK);
    dyn_when_blocked = thread_dyn_prio(radio);
    cpu = spawn(1, boosted_cpu_thread, MT_PID_NONE, THREAD_CLASS_DEFAULT);
    tport_irq_attach(0, isr_packet);
    uint64_t start = tport_time();
    tport_irq_schedule(0, start + EVENT_AT);
    sem_post(&go);
    assert_true(cpu_done);
    assert_int_equal(dyn_of_cpu, 7);
    assert_int_equal(dyn_when_blocked, 4);
    assert_int_equal(received_at - start, EVENT_AT); /* the instant it arrived */
}

static int8_t dyn_after_sleep;

static void sleeper(void *arg)
{
    (void) arg;
    thread_sleep(100);
    dyn_after_sleep = thread_dyn_prio(thread_self());
    sched_stop();
}

static void test_timer_wait_boosts_by_three(void **state)
{
    (void) state;
    spawn(0, sleeper, MT_PID_NONE, THREAD_CLASS_DEFAULT);
    sched_run();
    assert_int_equal(dyn_after_sleep, 7);
}

static int8_t dyn_after_computing;
static sem_t sem;

static void computer(void *arg)
{
    (void) arg;
    tport_busy(TIMER_MS(25)); /* three 8 ms steps */
    sem_wait_ev(&sem, THREAD_EV_SENSOR);
    dyn_after_computing = thread_dyn_prio(thread_self());
}

static void test_cpu_time_decays_and_a_sensor_wait_boosts_by_one(void **state)
{
    (void) state;
    sem_init(&sem, 0);
    thread_t *t = spawn(0, computer, MT_PID_NONE, THREAD_CLASS_DEFAULT);
    assert_int_equal(thread_dyn_prio(t), 4 - 3 + 1);
    sem_post(&sem);
    assert_int_equal(dyn_after_computing, 2);
}

static char order[8];

static void rt_thread(void *arg)
{
    (void) arg;
    strcat(order, "R");
}

static void other_thread(void *arg)
{
    (void) arg;
    sem_wait_ev(&go, THREAD_EV_TIMER); /* boosted to 7, the most it gets */
    strcat(order, "O");
}

/* Wakes the dynamic thread, then creates the real-time one: both become
 * ready under this handler, which outranks them. */
static mt_err_t starter(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    sem_post(&go);
    spawn(1, rt_thread, MT_PID_NONE, THREAD_CLASS_FIFO);
    return MT_OK;
}

static void test_real_time_class_ranks_above_every_dynamic_thread(void **state)
{
    (void) state;
    memset(order, 0, sizeof order);
    sem_init(&go, 0);
    thread_t *o = spawn(0, other_thread, MT_PID_NONE, THREAD_CLASS_OTHER);
    assert_int_equal(thread_dyn_prio(o), 7);
    task_spec_t spec = {.pid = 0x31, .prio = 6, .handler = starter};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x31, NULL, 0), MT_OK);
    assert_int_equal(sched_send_to(0x31, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "RO"); /* woken first, but dynamic */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_radio_thread_preempts_cpu_bound_thread_at_once, setup),
        cmocka_unit_test_setup(test_without_the_boost_it_waits_for_the_decay, setup),
        cmocka_unit_test_setup(test_a_higher_level_preempts_whatever_the_boosts, setup),
        cmocka_unit_test_setup(test_timer_wait_boosts_by_three, setup),
        cmocka_unit_test_setup(test_cpu_time_decays_and_a_sensor_wait_boosts_by_one, setup),
        cmocka_unit_test_setup(test_real_time_class_ranks_above_every_dynamic_thread, setup),
    };
    return cmocka_run_group_tests_name("event boosting", tests, NULL, NULL);
}
