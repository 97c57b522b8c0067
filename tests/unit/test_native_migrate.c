/* SPDX-License-Identifier: MIT */
/*
 * The task migrator on one native module, with the test playing the bus
 * and the other modules (as test_native_bus.c does): the frames the
 * migrator sends are captured, the test delivers the others' frames and
 * the ends of transmissions at chosen simulated ticks.
 *
 * As a bystander: the reply to FREEZE goes behind every message already
 * queued for the task (the order the protocol rests on), later sends are
 * held back, still after RESULT ok, and on CONFIRM they go to the task's
 * new module, in order. As the source: refusals, the task frozen and
 * serialised, its image sent once every module replied, resumed when the
 * destination is unreachable; on success its held messages forwarded,
 * then END, the task kept here frozen until END is through, then CONFIRM
 * and routed away; and taken back when END is unreachable. As the
 * destination: message blocks set aside for the forwarded messages before
 * ATTACHED, or the image refused when the pool cannot spare them. Frames
 * that the protocol never sends (empty or short ones, the migrator's own
 * records, fields out of range, a part played by the wrong module) are
 * dropped, counted and logged with their sender, and change nothing.
 *
 * A fault inside one of the migrator's steps (the heap exhausted for one
 * allocation, an interrupt whose handler kills the task) is placed at the
 * start of a kernel function the step calls:
 * MOTET_TEST_WRAP: mem_alloc_owned state_layout_encode_part timer_start_phase
 */
#include <stdatomic.h>
#include <string.h>

#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/state_layout.h"
#include "native.h"
#include "slab.h"
#include "test_support.h"
#include "timer_list.h"

#define SELF    1u
#define MODULES 0x7u  /* modules 0, 1, 2 */
#define REMOTE  0x30  /* a movable task on module 0 */
#define LOCAL   0x20  /* a movable task here */
#define FIXED   0x21  /* a task here that may not move */
#define SLOT    1100u /* a frame of a whole chunk */

static uint8_t sent[32][SLOT];
static uint16_t sent_len[32];
static unsigned n_sent;
static char got[64];

static void capture(const uint8_t *frame, uint16_t n)
{
    assert_true(n <= SLOT && n_sent < 32);
    memcpy(sent[n_sent], frame, n);
    sent_len[n_sent++] = n;
}

static bus_frame_t sent_frame(unsigned i)
{
    bus_frame_t f;
    assert_true(i < n_sent);
    assert_int_equal(bus_frame_decode(sent[i], sent_len[i], &f), MT_OK);
    return f;
}

static void finish_tx(uint8_t result)
{
    port_native_bus_inject_tx_done(result, tport_time() + 10);
    tport_busy(20);
}

/* Offer frame f to this module; true if it took it. */
static bool offer_frame(const bus_frame_t *f)
{
    uint8_t buf[SLOT];
    uint16_t n = bus_frame_encode(f, buf, sizeof buf);
    assert_true(n > 0);
    bool accepted = false;
    port_native_bus_inject_rx(buf, n, tport_time() + 10, &accepted);
    tport_busy(20);
    return accepted;
}

/* The next sequence number offer() gives a frame; every test starts at 0,
 * as a freshly booted module's links do (the cut of a destination compares
 * the numbers of the multicasts it took before joining). */
static uint8_t next_seq;

/* Offer a frame to this module; true if it took it. */
static bool offer(uint8_t type, mt_module_t src, mt_pid_t pid, mt_port_t port, const uint8_t *p,
                  uint16_t len)
{
    bus_frame_t f = {.type = type,
                     .src = src,
                     .dst = type == BUS_FRAME_MCAST ? BUS_BROADCAST : SELF,
                     .seq = next_seq++,
                     .pid = pid,
                     .port = port,
                     .prio = 2,
                     .len = len,
                     .payload = p};
    return offer_frame(&f);
}

/* Multicast frame number `seq` of module src's broadcast link, one byte to
 * group GROUP; taken. */
#define GROUP 3u
static void cast(mt_module_t src, uint8_t seq, char c)
{
    bus_frame_t f = {.type = BUS_FRAME_MCAST,
                     .src = src,
                     .dst = BUS_BROADCAST,
                     .seq = seq,
                     .pid = MT_PID_MULTICAST,
                     .port = GROUP,
                     .prio = 2,
                     .len = 1,
                     .payload = (const uint8_t *) &c};
    assert_true(offer_frame(&f));
}

static void receive(uint8_t type, mt_module_t src, mt_pid_t pid, mt_port_t port, const uint8_t *p,
                    uint16_t len)
{
    assert_true(offer(type, src, pid, port, p, len));
}

/* A migrator frame from module src. */
static void from_migrator(mt_module_t src, uint8_t kind, const uint8_t *p, uint16_t len)
{
    uint8_t type = kind == MIG_MSG_FREEZE || kind == MIG_MSG_RESULT || kind == MIG_MSG_CONFIRM
                       ? BUS_FRAME_MCAST
                       : BUS_FRAME_DATA;
    receive(type, src, MT_PID_MIGRATOR, kind, p, len);
}

/* ---- faults placed inside a step (MOTET_TEST_WRAP above) ---- */

/* The heap exhausted for the kernel's n-th allocation from now (0: none):
 * every free block is taken around that one call and given back after,
 * so that it fails as on a full heap, logged, and the next one does not. */
static unsigned exhaust_at;
void *__real_mem_alloc_owned(size_t size, mt_pid_t owner);
void *__wrap_mem_alloc_owned(size_t size, mt_pid_t owner)
{
    if (!exhaust_at || --exhaust_at) return __real_mem_alloc_owned(size, owner);
    void *taken[16];
    unsigned n = 0;
    mem_stats_t st;
    for (mem_get_stats(&st); st.largest_free && n < 16; mem_get_stats(&st))
        taken[n++] = __real_mem_alloc_owned(st.largest_free, MEM_OWNER_KERNEL);
    assert_int_equal(st.largest_free, 0);
    void *served = __real_mem_alloc_owned(size, owner);
    while (n) mem_release(taken[--n]);
    return served;
}

/* Set: interrupt line 0 is raised as the kernel starts encoding a layout
 * chunk past the first (an interrupt at that moment: taken at once if
 * interrupts are on, else at the next unmask). */
static bool interrupt_at_later_chunk;
static mt_pid_t kill_target;       /* the task interrupt line 0 has killed (below) */
static bool taken_before_the_copy; /* the interrupt ran at once: interrupts were on */
uint16_t __real_state_layout_encode_part(const state_layout_t *layout, const void *state,
                                         uint16_t state_size, uint16_t offset, uint8_t *out,
                                         uint16_t n);
uint16_t __wrap_state_layout_encode_part(const state_layout_t *layout, const void *state,
                                         uint16_t state_size, uint16_t offset, uint8_t *out,
                                         uint16_t n)
{
    if (interrupt_at_later_chunk && offset > 0) {
        interrupt_at_later_chunk = false;
        port_native_irq_raise(0);
        taken_before_the_copy = !sched_task_exists(kill_target);
    }
    return __real_state_layout_encode_part(layout, state, state_size, offset, out, n);
}

/* Set: interrupt line 0 is raised as the kernel starts a timer at a given
 * phase (a migrated task's, re-armed). Whatever the interrupt did, no
 * timer may run for a task that is not here. */
static bool interrupt_at_timer_start;
mt_err_t __real_timer_start_phase(mt_pid_t owner, uint8_t n, uint32_t first, uint32_t period);
mt_err_t __wrap_timer_start_phase(mt_pid_t owner, uint8_t n, uint32_t first, uint32_t period)
{
    if (interrupt_at_timer_start) {
        interrupt_at_timer_start = false;
        port_native_irq_raise(0);
    }
    mt_err_t err = __real_timer_start_phase(owner, n, first, period);
    if (!err) assert_true(sched_task_exists(owner) || !timer_remaining(owner, n, NULL));
    return err;
}

/* A task at level 7 that kills `kill_target` when interrupt line 0's
 * handler posts to it (at the interrupt's exit, above the migrator), then
 * runs `after_kill`. */
#define KILLER 0x26
static void (*after_kill)(void);

static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port != PORT_0) return MT_OK;
    assert_int_equal(sched_task_kill(kill_target), MT_OK);
    if (after_kill) after_kill();
    return MT_OK;
}

static void isr_posts_to_the_killer(void)
{
    assert_int_equal(sched_post_isr(KILLER, PORT_0, NULL, 0, 0), MT_OK);
}

static void arm_killer(mt_pid_t target, void (*then)(void))
{
    task_spec_t spec = {.pid = KILLER, .prio = 7, .handler = killer};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(KILLER, NULL, 0), MT_OK);
    port_native_irq_attach(0, isr_posts_to_the_killer);
    kill_target = target;
    after_kill = then;
}

/* Set: the task's PORT_SERIALIZE arms exhaust_at with it as it returns. */
static unsigned exhaust_after_serialise;

/* The block task's PORT_SERIALIZE hands migrate_state(); NULL: one of its own. */
static void *state_block;
/* Set: its PORT_SERIALIZE returns with an interrupt pending, taken by the
 * first restore that turns interrupts on: the one after its frame's pop. */
static bool interrupt_after_serialise;

static mt_err_t task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    size_t n = strlen(got);
    if (port == PORT_SERIALIZE) {
        got[n] = 'S';
        void *block = state_block;
        if (!block) {
            block = mem_alloc(3);
            memcpy(block, "abc", 3);
        }
        mt_err_t err = migrate_state(block, 3);
        if (interrupt_after_serialise) atomic_fetch_or(&port_native_irq_pending, 1u << 0);
        exhaust_at = exhaust_after_serialise;
        return err;
    }
    if (port >= PORT_0 && len) got[n] = ((const char *) data)[0];
    return MT_OK;
}

static const program_t programs[] = {{.id = 9, .name = "task", .handler = task}};

static unsigned phases; /* migration phases this module went through */
static unsigned dones, refusals, lives, kills;
/* Set: what a handler does at the report of MIG_FROZEN (the observer runs
 * in the migrator's step, between the freeze and the serialising). */
static void (*at_frozen)(void);
static mt_err_t refused_with, done_with;
static unsigned lost_from[MOTET_BUS_MODULES]; /* MIG_LOST reports, by the module that sent */
static mt_err_t lost_with;

static void observe(const migrate_event_t *ev)
{
    phases++;
    dones += ev->phase == MIG_DONE;
    lives += ev->phase == MIG_LIVE;
    kills += ev->phase == MIG_KILLED;
    if (ev->phase == MIG_FROZEN && at_frozen) at_frozen();
    if (ev->phase == MIG_LOST) {
        assert_true(ev->other < MOTET_BUS_MODULES);
        lost_from[ev->other]++;
        lost_with = ev->err;
    }
    if (ev->phase == MIG_DONE) done_with = ev->err;
    if (ev->phase == MIG_REFUSED) {
        refusals++;
        refused_with = ev->err;
    }
}

static int setup(void **state)
{
    test_boot(state);
    n_sent = 0;
    memset(got, 0, sizeof got);
    state_block = NULL;
    interrupt_after_serialise = false;
    exhaust_at = exhaust_after_serialise = 0;
    interrupt_at_later_chunk = interrupt_at_timer_start = taken_before_the_copy = false;
    after_kill = NULL;
    program_register(programs, 1);
    /* First: the bus's start clears the migrator's slots, which an earlier
     * test may have left holding LOCAL's pid. */
    port_native_bus_capture(capture);
    assert_int_equal(bus_start(SELF, MODULES), MT_OK);
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(LOCAL, NULL, 0), MT_OK);
    spec = (task_spec_t){.pid = FIXED, .prio = 2, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(FIXED, NULL, 0), MT_OK);
    assert_int_equal(sched_task_create_remote(REMOTE, 2, 0), MT_OK);
    next_seq = 0;
    phases = dones = refusals = lives = kills = 0;
    at_frozen = NULL;
    refused_with = done_with = MT_OK;
    memset(lost_from, 0, sizeof lost_from);
    lost_with = MT_OK;
    migrate_set_observer(observe);
    return 0;
}

static void expect_data(unsigned i, mt_module_t dst, char c)
{
    bus_frame_t f = sent_frame(i);
    assert_int_equal(f.type, BUS_FRAME_DATA);
    assert_int_equal(f.dst, dst);
    assert_int_equal(f.pid, REMOTE);
    assert_int_equal(f.payload[0], c);
}

/* ---- a bystander ---- */

static void test_reply_goes_behind_queued_messages_later_ones_are_held(void **state)
{
    (void) state;
    for (const char *c = "abc"; *c; c++)
        assert_int_equal(sched_send_to(REMOTE, PORT_0, (void *) c, 1, 0), MT_OK);
    assert_int_equal(n_sent, 1);                    /* 'a' in the interface, 'b' and 'c' queued */
    const uint8_t freeze[5] = {REMOTE, 1, 0, 2, 2}; /* pid, id, source 0, dest 2, prio 2 */
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    assert_int_equal(migrate_active(), 1);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held back */
    for (int i = 0; i < 3; i++) finish_tx(PORT_BUS_SENT);
    expect_data(0, 0, 'a');
    expect_data(1, 0, 'b');
    expect_data(2, 0, 'c');
    bus_frame_t reply = sent_frame(3); /* only now: behind c */
    assert_int_equal(reply.pid, MT_PID_MIGRATOR);
    assert_int_equal(reply.port, MIG_MSG_REPLY);
    assert_int_equal(reply.dst, 0);
    assert_int_equal(reply.prio, 2); /* the task's priority */
    const uint8_t ok[3] = {REMOTE, 1, MT_OK};
    assert_memory_equal(reply.payload, ok, 3);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, 4); /* 'd' waits */
    /* Success, not final yet: module 2 may die before it starts the task,
     * so 'd' and 'e' still wait, and the route is unchanged. */
    const uint8_t result[5] = {REMOTE, 1, MT_OK, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, result, 5);
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "e", 1, 0), MT_OK);
    assert_int_equal(n_sent, 4);
    /* CONFIRM: the task runs on module 2; 'd' goes there, then 'e', 'f'. */
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 2);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "f", 1, 0), MT_OK);
    finish_tx(PORT_BUS_SENT);
    finish_tx(PORT_BUS_SENT);
    expect_data(4, 2, 'd');
    expect_data(5, 2, 'e');
    expect_data(6, 2, 'f');
    assert_int_equal(migrate_active(), 0);
}

static void test_second_outcome_releases_to_the_source(void **state)
{
    (void) state;
    const uint8_t freeze[5] = {REMOTE, 3, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT); /* the reply */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "g", 1, 0), MT_OK);
    const uint8_t ok[5] = {REMOTE, 3, MT_OK, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    assert_int_equal(n_sent, 1); /* 'g' still held */
    /* The destination died before END: the source took the task back. */
    const uint8_t failed[5] = {REMOTE, 3, MT_ERR_BUS_DOWN, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, failed, 5);
    expect_data(1, 0, 'g');
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    assert_int_equal(migrate_active(), 0);
}

/* A bystander of REMOTE's migration from module 0, its reply sent: it
 * waits for the outcome, so the migrator's timeout tick runs. */
static void bystander_waits(void)
{
    const uint8_t freeze[5] = {REMOTE, 4, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT); /* the reply */
    sched_run_pending();
    assert_int_equal(migrate_active(), 1);
    assert_true(timer_remaining(MT_PID_MIGRATOR, MIG_TICK_TIMER, NULL));
    test_count_logged_errors(MT_OK);
}

/* The ticks go on: the bystander asks its silent source after the
 * timeout, once, and nothing more is refused. */
static void bystander_asks_its_source(unsigned before)
{
    for (unsigned ms = 0; n_sent == before && ms < 2u * MOTET_MIGRATE_TIMEOUT_MS; ms++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    assert_int_equal(n_sent, before + 1);
    bus_frame_t ping = sent_frame(before);
    assert_int_equal(ping.port, MIG_MSG_PING);
    assert_int_equal(ping.dst, 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 0);
}

/* A task that sends to the migrator's tick port when asked on PORT_0. */
#define TICK_SENDER 0x3F
static mt_err_t sends_a_tick(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st, (void) data, (void) len;
    if (port == PORT_0)
        assert_int_equal(sched_send_to(MT_PID_MIGRATOR, PORT_TIMEOUT0, NULL, 0, 0), MT_OK);
    return MT_OK;
}

/* The migrator's PORT_TIMEOUT0 takes its own timer's expiries alone: a
 * task's send there from its handler (any task may send to a global pid's
 * port) and an interrupt body's post with no tick owed are refused
 * (MT_ERR_NO_PORT, logged once each), send nothing, and leave the tick's
 * timer as it was (before: each was taken as a tick, silently, and ran the
 * timeouts out of turn). */
static void test_a_tasks_or_an_interrupts_tick_to_the_migrator_is_refused(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = TICK_SENDER, .prio = 3, .handler = sends_a_tick};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(TICK_SENDER, NULL, 0), MT_OK);
    bystander_waits();
    uint32_t left = 0, now = 0;
    assert_true(timer_remaining(MT_PID_MIGRATOR, 0, &left));
    unsigned before = n_sent;
    assert_int_equal(sched_send_to(TICK_SENDER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_post_isr(MT_PID_MIGRATOR, PORT_TIMEOUT0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 2);
    assert_int_equal(n_sent, before);
    assert_true(timer_remaining(MT_PID_MIGRATOR, 0, &now));
    assert_int_equal(now, left);
    bystander_asks_its_source(before);
}

/* Once the migration it waited on is confirmed, the bystander's tick is
 * stopped and no tick is owed: an interrupt's post on the tick port is
 * refused (MT_ERR_NO_PORT, logged once) and sends nothing (with the stop
 * not counted, it was taken as a tick owed). */
static void test_an_interrupts_tick_after_the_migration_is_refused(void **state)
{
    (void) state;
    bystander_waits();
    const uint8_t confirm[4] = {REMOTE, 4, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    assert_int_equal(migrate_active(), 0);
    assert_false(timer_remaining(MT_PID_MIGRATOR, 0, NULL));
    test_count_logged_errors(MT_OK);
    unsigned before = n_sent;
    assert_int_equal(sched_post_isr(MT_PID_MIGRATOR, PORT_TIMEOUT0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_int_equal(n_sent, before);
}

/* An interrupt's post that waits with the tick's expiry, both run at
 * that interrupt's exit: one is taken as the tick (both have no sender,
 * and one is owed: the same work, once), the other refused
 * (MT_ERR_NO_PORT, logged once), not both taken; the tick's timer was
 * started again at the first, so the ticks go on. */
static void test_an_interrupts_tick_waiting_with_the_owed_one_is_taken_once(void **state)
{
    (void) state;
    bystander_waits();
    uint32_t left = 0;
    assert_true(timer_remaining(MT_PID_MIGRATOR, 0, &left));
    assert_true(left > 1);
    tport_busy(left - 1u);
    assert_int_equal(sched_post_isr(MT_PID_MIGRATOR, PORT_TIMEOUT0, NULL, 0, 0), MT_OK);
    tport_busy(2); /* the expiry */
    unsigned before = n_sent;
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_true(timer_remaining(MT_PID_MIGRATOR, MIG_TICK_TIMER, NULL));
    bystander_asks_its_source(before);
}

/* Tasks that hold every timer block while the migrator's tick handler
 * runs, as a more important handler at an interrupt's exit may: the
 * bystander's PING goes out in that handler, and the capture takes the
 * pool there. */
#define HOGS      ((MOTET_MAX_TIMERS + TIMERS_PER_TASK - 1) / TIMERS_PER_TASK + 1)
#define FIRST_HOG 0x40
static bool hog_at_next_frame;
static unsigned hogs_refused; /* starts that found the pool empty */

static mt_err_t hog(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st, (void) port, (void) data, (void) len;
    return MT_OK;
}

static void make_hogs(void)
{
    for (mt_pid_t p = FIRST_HOG; p < FIRST_HOG + HOGS; p++) {
        task_spec_t spec = {.pid = p, .prio = 3, .handler = hog};
        assert_int_equal(sched_task_create(&spec), MT_OK);
        assert_int_equal(sched_task_init(p, NULL, 0), MT_OK);
    }
}

static void take_every_timer(void)
{
    for (mt_pid_t p = FIRST_HOG; p < FIRST_HOG + HOGS; p++)
        for (uint8_t i = 0; i < TIMERS_PER_TASK; i++)
            if (timer_start_for(p, i, TIMER_MS(100000), false) != MT_OK) hogs_refused++;
}

static void capture_then_take_every_timer(const uint8_t *frame, uint16_t n)
{
    capture(frame, n);
    if (!hog_at_next_frame) return;
    hog_at_next_frame = false;
    take_every_timer();
}

/* Every timer block is the tasks' before the migration begins: the tick's
 * first start needs none (its block is its own, TIMER_SLOT_TICK),
 * so the bystander asks its silent source at the timeout, with no
 * MT_ERR_NO_SLAB logged (before: that start found the pool empty, logged
 * MT_ERR_NO_SLAB and was tried again only at the migrator's next frame,
 * which a silent source never brings: no tick ever came). */
static void test_the_first_tick_needs_no_free_timer_block(void **state)
{
    (void) state;
    make_hogs();
    hogs_refused = 0;
    take_every_timer();
    assert_true(hogs_refused > 0); /* the pool is empty */
    test_count_logged_errors(MT_OK);
    const uint8_t freeze[5] = {REMOTE, 4, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT); /* the reply */
    sched_run_pending();
    unsigned no_slab = test_count_logged_errors(MT_ERR_NO_SLAB);
    bystander_asks_its_source(n_sent);
    assert_int_equal(no_slab, 0);
}

/* The migrator's tick is one-shot, started again after each tick; its
 * block is its own (TIMER_SLOT_TICK), so an empty timer
 * pool at the restart cannot stop it: once the pool is free again the bystander asks
 * its silent source again (before: the restart found no block, failed
 * with MT_ERR_NO_SLAB, logged, and no tick ever came again). */
static void test_the_tick_survives_an_empty_timer_pool(void **state)
{
    (void) state;
    make_hogs();
    bystander_waits();
    port_native_bus_capture(capture_then_take_every_timer);
    hog_at_next_frame = true;
    hogs_refused = 0;
    unsigned before = n_sent;
    bystander_asks_its_source(before); /* the first PING: the pool is taken meanwhile */
    assert_false(hog_at_next_frame);
    assert_true(timer_remaining(MT_PID_MIGRATOR, MIG_TICK_TIMER, NULL));
    finish_tx(PORT_BUS_SENT);
    for (mt_pid_t p = FIRST_HOG; p < FIRST_HOG + HOGS; p++) timer_stop_all(p);
    assert_true(hogs_refused > 0); /* the pool was empty */
    test_count_logged_errors(MT_OK);
    before = n_sent;
    for (unsigned ms = 0; n_sent == before && ms < 20u * MOTET_MIGRATE_TIMEOUT_MS; ms++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    assert_int_equal(n_sent, before + 1); /* the bystander asks again */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 0);
}

/* The timers' block cache (slab.h), whose use the tests below watch. */
extern slab_cache_t timer_cache;

/* Errors logged since the last call, of any kind. */
static unsigned drain_errors(void)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned found = 0;
    for (unsigned i = 0; i < n; i++) found += rec[i].type == EV_ERROR;
    return found;
}

/* The counted timers' blocks at the timer level. With every slab block
 * taken, the tick's timer starts in its own slot, owing one expiry, and a
 * restart owes none more; its stop owes none, a second stop finds it
 * stopped, and a start after them owes one again; the slab is untouched
 * throughout, nothing logged. */
static void test_a_counted_timer_has_a_block_of_its_own(void **state)
{
    (void) state;
    make_hogs();
    hogs_refused = 0;
    take_every_timer();
    assert_true(hogs_refused > 0); /* the pool is empty */
    uint8_t in_use = timer_cache.in_use;
    drain_errors();
    uint8_t owed = 0;
    timer_counted_start(TIMER_SLOT_TICK, MT_PID_MIGRATOR, MIG_TICK_TIMER, 100, &owed);
    timer_counted_start(TIMER_SLOT_TICK, MT_PID_MIGRATOR, MIG_TICK_TIMER, 200, &owed); /* restart */
    uint32_t left = 0;
    assert_true(timer_remaining(MT_PID_MIGRATOR, MIG_TICK_TIMER, &left));
    assert_int_equal(left, 200);
    assert_int_equal(owed, 1);
    assert_true(timer_counted_stop(MT_PID_MIGRATOR, MIG_TICK_TIMER, &owed));
    assert_int_equal(owed, 0);
    assert_false(timer_counted_stop(MT_PID_MIGRATOR, MIG_TICK_TIMER, &owed));
    assert_int_equal(owed, 0);
    timer_counted_start(TIMER_SLOT_TICK, MT_PID_MIGRATOR, MIG_TICK_TIMER, 100, &owed);
    assert_true(timer_remaining(MT_PID_MIGRATOR, MIG_TICK_TIMER, NULL));
    assert_int_equal(owed, 1);
    assert_true(timer_counted_stop(MT_PID_MIGRATOR, MIG_TICK_TIMER, &owed));
    assert_int_equal(timer_cache.in_use, in_use);
    assert_int_equal(drain_errors(), 0);
}

/* Where timer `n` of `owner` is: in the running list, and in the retired
 * list (blocks whose expiry message still waits). */
static void where_is(mt_pid_t owner, uint8_t n, bool *linked, bool *retired)
{
    *linked = *retired = false;
    for (const timer_block_t *t = timer_head; t; t = t->next)
        if (t->owner == owner && t->index == n) *linked = true;
    for (const timer_block_t *t = timer_retired; t; t = t->next)
        if (t->owner == owner && t->index == n) *retired = true;
}

/* The counted timer's expiry waits for its owner (a hog) while this
 * task, more important, runs: its message stays in the block while the
 * timer starts again. */
#define HOLDER (FIRST_HOG + HOGS)
static uint8_t holder_owed;
static bool holder_linked, holder_retired;

static mt_err_t expire_and_restart_while_held(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st, (void) port, (void) data, (void) len;
    timer_counted_start(TIMER_SLOT_TICK, FIRST_HOG, 0, 5, &holder_owed);
    tport_busy(6); /* it expires; its message waits in the block for the hog */
    bool linked, retired;
    where_is(FIRST_HOG, 0, &linked, &retired);
    holder_linked = linked;
    holder_retired = retired;
    timer_counted_start(TIMER_SLOT_TICK, FIRST_HOG, 0, 5, &holder_owed);
    return MT_OK;
}

/* A counted timer's block is never retired (retire(), TIMER_KEPT): not
 * freed to the slab, which does not own it (MT_ERR_BAD_POINTER), and not
 * put in the retired list, from where it would be linked twice once the
 * timer starts again out of its slot. Taken through an expiry whose
 * message waits while it restarts, that message's release, a stop, and
 * an expiry whose message is taken at once: never retired, nothing
 * logged, the slab untouched. A hog task owns it, as a system task would,
 * so that no handler counts its expiries. */
static void test_a_counted_timers_block_is_never_retired(void **state)
{
    (void) state;
    make_hogs();
    task_spec_t spec = {.pid = HOLDER, .prio = 5, .handler = expire_and_restart_while_held};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(HOLDER, NULL, 0), MT_OK);
    drain_errors();
    uint8_t in_use = timer_cache.in_use;
    holder_owed = 0;
    assert_int_equal(sched_send_to(HOLDER, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();          /* the hog takes the expiry; its message released */
    assert_false(holder_linked);  /* expired, */
    assert_false(holder_retired); /* its message waiting, */
    bool linked, retired;
    where_is(FIRST_HOG, 0, &linked, &retired);
    assert_true(linked); /* then started again */
    assert_false(retired);
    assert_true(timer_counted_stop(FIRST_HOG, 0, &holder_owed));
    where_is(FIRST_HOG, 0, &linked, &retired);
    assert_false(linked);
    assert_false(retired);
    timer_counted_start(TIMER_SLOT_TICK, FIRST_HOG, 0, 5, &holder_owed);
    tport_busy(6); /* expired, its message taken at once */
    sched_run_pending();
    where_is(FIRST_HOG, 0, &linked, &retired);
    assert_false(linked);
    assert_false(retired);
    timer_counted_start(TIMER_SLOT_TICK, FIRST_HOG, 0, 5, &holder_owed);
    assert_true(timer_remaining(FIRST_HOG, 0, NULL));
    assert_true(timer_counted_stop(FIRST_HOG, 0, &holder_owed));
    assert_int_equal(timer_cache.in_use, in_use);
    assert_int_equal(drain_errors(), 0);
}

static void test_failed_migration_releases_to_the_source(void **state)
{
    (void) state;
    const uint8_t freeze[5] = {REMOTE, 7, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT); /* the reply */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "f", 1, 0), MT_OK);
    assert_int_equal(n_sent, 1);
    const uint8_t result[5] = {REMOTE, 7, MT_ERR_NO_MEM, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, result, 5);
    expect_data(1, 0, 'f'); /* still on module 0 */
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
}

/* ---- the source ---- */

static void test_requests_that_are_refused_at_once(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(FIXED, 2), MT_ERR_NOT_MOVABLE);
    assert_int_equal(migrate_request(0x7E, 2), MT_ERR_NO_TASK);
    assert_int_equal(migrate_request(LOCAL, 9), MT_ERR_INVALID); /* not on the device */
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_MOVABLE), 1);
    assert_int_equal(n_sent, 0);
    assert_true(migrate_live(LOCAL));
}

/* Ask, let FREEZE go and every module reply: the image goes out. */
static void freeze_and_reply(uint8_t *id)
{
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending(); /* the migrator runs */
    assert_string_equal(got, "S");
    assert_false(migrate_live(LOCAL));
    bus_frame_t freeze = sent_frame(0);
    assert_int_equal(freeze.type, BUS_FRAME_MCAST);
    assert_int_equal(freeze.port, MIG_MSG_FREEZE);
    *id = freeze.payload[1];
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "h", 1, 0), MT_OK); /* held */
    const uint8_t reply[3] = {LOCAL, *id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    assert_int_equal(n_sent, 1);
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    bus_frame_t chunk = sent_frame(1);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    assert_int_equal(chunk.dst, 2);
    assert_int_equal(chunk.len, MIG_CHUNK_HDR + MIG_IMAGE_HEADER + 3); /* no routes, timers */
    assert_memory_equal(chunk.payload + chunk.len - 3, "abc", 3);
    /* 'h' is held: the destination is told one message will follow. */
    assert_int_equal(mig_get16(chunk.payload + MIG_CHUNK_HDR + MIG_IMAGE_HELD), 1);
}

/* A task's state must be in a block of its own: FIXED's block handed to
 * migrate_state() by LOCAL is refused (MT_ERR_NOT_OWNER, logged) and stays
 * FIXED's, unsent; the migration is refused and LOCAL stays. Once it was
 * taken (its heap and length checked, not its owner), sent as LOCAL's
 * state and freed by the kernel at the migration's end under FIXED. */
static void test_a_state_in_another_tasks_block_is_refused(void **state)
{
    (void) state;
    uint8_t *theirs = mem_alloc(3);
    memcpy(theirs, "xyz", 3);
    assert_int_equal(mem_set_owner(theirs, FIXED), MT_OK);
    state_block = theirs;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    assert_string_equal(got, "S");
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
    assert_true(test_count_logged_errors(MT_ERR_NOT_OWNER) >= 1);
    assert_int_equal(mem_owner(theirs), FIXED);
    assert_memory_equal(theirs, "xyz", 3);
    for (unsigned i = 0; i < n_sent; i++) assert_int_not_equal(sent_frame(i).port, MIG_MSG_FREEZE);
    mem_free(theirs);
}

/* ---- out of heap while the image is built ---- */

#define ROUTED 0x25 /* a movable task with an output route and a timer */

static void send_two_to_routed(void)
{
    assert_int_equal(sched_send_to(ROUTED, PORT_0, "h", 1, 0), MT_OK); /* held: frozen */
    assert_int_equal(sched_send_to(ROUTED, PORT_0, "i", 1, 0), MT_OK);
}

/* ROUTED, asked by module `requester` to move to module 2, finds the heap
 * exhausted at the `allocation`-th of the kernel's allocations after its
 * serialiser: build_image()'s copy of its routes (1), then its header
 * (2). Running out of memory must never kill it: the request is refused
 * (MT_ERR_NO_MEM, logged, the requester told), nothing goes on the bus but
 * a remote requester's REFUSED, and the task runs on with its timer and
 * the two messages held while it was frozen, in order. Once the heap was
 * out at its routes, the header allocated after (the heap back) left a
 * header of no bytes and no timers taken: resume() could not decode it
 * and killed the task (MIG_KILLED, MIG_RESULT_KILLED). */
static void refused_for_want_of_heap_at(unsigned allocation, mt_module_t requester)
{
    route_t out[1] = {{.pid = FIXED, .port = PORT_0}};
    task_spec_t spec = {.pid = ROUTED,
                        .prio = 2,
                        .flags = TASK_MOVABLE,
                        .handler = task,
                        .routes = out,
                        .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(ROUTED, NULL, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(timer_start_for(ROUTED, 1, TIMER_MS(50), true), MT_OK);
    at_frozen = send_two_to_routed;
    exhaust_after_serialise = allocation;
    (void) test_count_logged_errors(MT_ERR_NO_MEM); /* the log drained */
    if (requester == SELF) {
        assert_int_equal(migrate_request(ROUTED, 2), MT_OK);
    } else {
        const uint8_t request[4] = {ROUTED, 2, requester, 1};
        from_migrator(requester, MIG_MSG_REQUEST, request, 4);
    }
    sched_run_pending();
    assert_int_equal(exhaust_at, 0); /* the allocation came */
    assert_true(test_count_logged_errors(MT_ERR_NO_MEM) >= 1);
    assert_int_equal(kills, 0);
    assert_true(sched_task_exists(ROUTED));
    assert_true(migrate_live(ROUTED));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(refusals, 1);
    assert_int_equal(refused_with, MT_ERR_NO_MEM);
    assert_string_equal(got, "Shi");
    assert_true(timer_remaining(ROUTED, 1, NULL));
    unsigned refused_frames = 0;
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        assert_int_equal(f.port, MIG_MSG_REFUSED);
        assert_int_equal(f.dst, requester);
        const uint8_t why[2] = {ROUTED, MT_ERR_NO_MEM};
        assert_memory_equal(f.payload, why, 2);
        refused_frames++;
    }
    assert_int_equal(refused_frames, requester == SELF ? 0u : 1u);
    assert_int_equal(sched_send_to(ROUTED, PORT_0, "j", 1, 0), MT_OK); /* and it runs on */
    sched_run_pending();
    assert_string_equal(got, "Shij");
}

static void test_out_of_heap_for_the_routes_refuses_and_the_task_runs_on(void **state)
{
    (void) state;
    refused_for_want_of_heap_at(1, SELF);
}

static void test_out_of_heap_for_the_header_refuses_and_the_task_runs_on(void **state)
{
    (void) state;
    refused_for_want_of_heap_at(2, SELF);
}

static void test_out_of_heap_for_a_remote_request_tells_its_requester(void **state)
{
    (void) state;
    refused_for_want_of_heap_at(1, 0);
}

/* A handler run at an interrupt's exit right after SERIALIZE's pop kills
 * the frozen task and tries to create another of its pid: refused
 * (MT_ERR_EXISTS, logged) while the migration holds the pid, so that no
 * other task can be taken for the migrating one. The migration is
 * refused, MT_ERR_NO_TASK, nothing sent, and then the pid is free. Once
 * the image was built from the new task and FREEZE went out. */
#define REPLACER 0x22
static mt_err_t replacer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port != PORT_0) return MT_OK;
    assert_int_equal(sched_task_kill(LOCAL), MT_OK);
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_ERR_EXISTS);
    return MT_OK;
}

static void isr_replaces_local(void)
{
    assert_int_equal(sched_post_isr(REPLACER, PORT_0, NULL, 0, 0), MT_OK);
}

static void test_a_task_replaced_after_serialise_is_not_migrated_nor_resumed(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = REPLACER, .prio = 7, .handler = replacer};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(REPLACER, NULL, 0), MT_OK);
    port_native_irq_attach(0, isr_replaces_local);
    interrupt_after_serialise = true;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    assert_string_equal(got, "S");
    assert_int_equal(refusals, 1);
    assert_int_equal(refused_with, MT_ERR_NO_TASK);
    assert_int_equal(migrate_active(), 0);
    for (unsigned i = 0; i < n_sent; i++) assert_int_not_equal(sent_frame(i).port, MIG_MSG_FREEZE);
    assert_int_equal(test_count_logged_errors(MT_ERR_EXISTS), 1);
    assert_false(sched_task_exists(LOCAL));
    task_spec_t again = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&again), MT_OK); /* the migration over: free again */
}

#define STRANGER 0x24 /* a task created in the frozen task's freed block */
static unsigned stranger_runs;
static task_handler_t stranger_handler;

static mt_err_t stranger(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) port, (void) data, (void) len;
    stranger_runs++;
    return MT_OK;
}

static void kill_local_and_create_a_stranger(void)
{
    const task_t *was = sched_find_task(LOCAL);
    assert_int_equal(sched_task_kill(LOCAL), MT_OK);
    task_spec_t spec = {.pid = STRANGER, .prio = 2, .handler = stranger_handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_ptr_equal(sched_find_task(STRANGER), was); /* the case: in LOCAL's block */
}

/* Killed at MIG_FROZEN's report, a task of another pid created in its
 * block: the first step finds LOCAL gone (it looks it up by pid) and ends
 * there, refused, nothing sent; the new task is as created and none of
 * its handlers ran (once the step went on with the old pointer: the new
 * task's PORT_SERIALIZE before its INIT, or, its handler no program's, a
 * program lookup of NULL). */
static void kill_at_the_freeze_and_create_another_task(task_handler_t handler)
{
    stranger_handler = handler;
    stranger_runs = 0;
    at_frozen = kill_local_and_create_a_stranger;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    assert_int_equal(refusals, 1);
    assert_int_equal(refused_with, MT_ERR_NO_TASK);
    assert_int_equal(migrate_active(), 0);
    for (unsigned i = 0; i < n_sent; i++) assert_int_not_equal(sent_frame(i).port, MIG_MSG_FREEZE);
    const task_t *t = sched_find_task(STRANGER);
    assert_non_null(t);
    assert_int_equal(t->flags & (TASK_FROZEN | TASK_INITIALISED), 0); /* as created */
    assert_int_equal(stranger_runs, 0);
    assert_string_equal(got, "");
    assert_false(sched_task_exists(LOCAL));
}

static void test_a_task_killed_at_the_freeze_leaves_a_new_task_of_no_program_alone(void **state)
{
    (void) state;
    kill_at_the_freeze_and_create_another_task(stranger);
}

static void test_a_task_killed_at_the_freeze_leaves_a_new_task_of_a_program_alone(void **state)
{
    (void) state;
    kill_at_the_freeze_and_create_another_task(task); /* program 9's handler */
}

static void test_unreachable_destination_leaves_the_task_here(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_UNREACHABLE);
    assert_true(migrate_live(LOCAL));
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t failed[5] = {LOCAL, id, MT_ERR_BUS_DOWN, SELF, 2};
    assert_memory_equal(result.payload, failed, 5);
    sched_run_pending();
    assert_string_equal(got, "Sh"); /* the held message ran here */
}

/* The destination stops answering mid-transfer: the chunk never ends (its
 * interface holds it). The source waits no longer than its budget (the
 * rounds of answers and MOTET_MIGRATE_FRAME_MS for the one chunk), then
 * abandons: the task runs here again with its held message, the timeout
 * is logged and is the outcome everyone gets. The destination's late
 * ATTACHED is answered ABORT and starts nothing. */
static void test_source_abandons_a_transfer_that_does_not_end_in_time(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    slot_t *s = mig_slot_of(LOCAL);
    assert_non_null(s);
    uint32_t budget = mig_source_budget(s);
    assert_int_equal(budget, 2u * MOTET_MIGRATE_ROUNDS * TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS) +
                                 TIMER_MS(MOTET_MIGRATE_FRAME_MS));
    uint32_t waited = timer_now() - s->clock;
    tport_busy(budget - waited - TIMER_MS(1));
    assert_false(migrate_live(LOCAL)); /* still within its budget */
    assert_int_equal(test_count_logged_errors(MT_ERR_TIMEOUT), 0);
    tport_busy(TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS)); /* the migrator's next tick */
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_TIMEOUT), 1);
    sched_run_pending();
    assert_string_equal(got, "Sh"); /* the held message ran here */
    assert_int_equal(n_sent, 2);    /* the outcome waits behind the chunk */
    finish_tx(PORT_BUS_SENT);       /* the chunk, late */
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t failed[5] = {LOCAL, id, MT_ERR_TIMEOUT, SELF, 2};
    assert_memory_equal(result.payload, failed, 5);
    finish_tx(PORT_BUS_SENT);
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    bus_frame_t abort = sent_frame(3);
    assert_int_equal(abort.port, MIG_MSG_ABORT);
    assert_int_equal(abort.dst, 2);
    assert_memory_equal(abort.payload, attached, 2);
    finish_tx(PORT_BUS_SENT);
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
}

/* ---- more migrations at once than a module has slots for ---- */

/* The migrator (asked for LOCAL to move to module 2) froze it and sent
 * FREEZE as frame `first`, or sends it once due: module 0 replies, module
 * 2 replies `err`. The FREEZE's id. */
static uint8_t ask_and_reply(unsigned first, mt_err_t err)
{
    for (unsigned guard = 0; n_sent <= first && guard < 200; guard++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    bus_frame_t freeze = sent_frame(first);
    assert_int_equal(freeze.port, MIG_MSG_FREEZE);
    uint8_t id = freeze.payload[1];
    finish_tx(PORT_BUS_SENT);
    const uint8_t ok[3] = {LOCAL, id, MT_OK}, answer[3] = {LOCAL, id, (uint8_t) err};
    from_migrator(0, MIG_MSG_REPLY, ok, 3);
    from_migrator(2, MIG_MSG_REPLY, answer, 3);
    return id;
}

/* Module 2 takes part in as many migrations as it has slots for and
 * answers FREEZE MT_ERR_FULL: nothing has moved. The task runs here again
 * with what was held for it, every module is told the migration is put
 * off (RESULT MT_ERR_FULL: no MIG_DONE anywhere), and the source asks
 * again later: this time it is admitted and the image goes. */
static void test_a_migration_put_off_for_a_module_without_a_slot_goes_later(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "h", 1, 0), MT_OK); /* held */
    uint8_t id = ask_and_reply(0, MT_ERR_FULL);
    assert_true(migrate_live(LOCAL));
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 1);
    bus_frame_t result = sent_frame(1);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t put_off[5] = {LOCAL, id, MT_ERR_FULL, SELF, 2};
    assert_memory_equal(result.payload, put_off, 5);
    finish_tx(PORT_BUS_SENT);
    sched_run_pending();
    assert_string_equal(got, "Sh"); /* it ran here meanwhile */
    assert_int_equal(dones + refusals, 0);
    /* Asked again after (1 + this module's number / 2) timeouts: admitted. */
    uint8_t again = ask_and_reply(2, MT_OK);
    assert_int_equal(again, (uint8_t) (id + 1u));
    assert_string_equal(got, "ShS");
    bus_frame_t chunk = sent_frame(3);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    assert_int_equal(chunk.dst, 2);
    assert_false(migrate_live(LOCAL));
}

/* A request put off (for module 2), then a newer one for the same task
 * put off too (for module 0): the newest wins, the older one is dropped
 * and never moves the task to the module it named. */
static void test_a_newer_request_overtakes_one_put_off(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    ask_and_reply(0, MT_ERR_FULL);
    finish_tx(PORT_BUS_SENT); /* the RESULT */
    assert_int_equal(migrate_request(LOCAL, 0), MT_OK);
    sched_run_pending();
    ask_and_reply(2, MT_ERR_FULL);
    assert_int_equal(sent_frame(2).payload[3], 0);
    finish_tx(PORT_BUS_SENT);
    assert_true(migrate_live(LOCAL));
    ask_and_reply(4, MT_OK); /* asked again: the newer request */
    bus_frame_t freeze = sent_frame(4);
    assert_int_equal(freeze.port, MIG_MSG_FREEZE);
    assert_int_equal(freeze.payload[3], 0);
    bus_frame_t chunk = sent_frame(5);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    assert_int_equal(chunk.dst, 0);
}

/* A request put off, then its task killed and its pid given to a new
 * task: the new task is not moved by the old request. */
static void test_a_request_put_off_dies_with_its_task(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    ask_and_reply(0, MT_ERR_FULL);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(sched_task_kill(LOCAL), MT_OK);
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(LOCAL, NULL, 0), MT_OK);
    unsigned before = n_sent;
    tport_busy(TIMER_MS(10 * MOTET_MIGRATE_TIMEOUT_MS));
    sched_run_pending();
    assert_int_equal(n_sent, before); /* no FREEZE: nothing left to ask */
    assert_int_equal(migrate_active(), 0);
}

/* Put off MOTET_MIGRATE_ROUNDS times and refused once more: the request
 * is refused for good (MIG_REFUSED, MT_ERR_FULL, on the requester), and
 * the task stays here and runs. */
static void test_a_migration_put_off_too_often_is_refused_and_the_task_stays(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    for (unsigned k = 0; k <= MOTET_MIGRATE_ROUNDS; k++) {
        ask_and_reply(2 * k, MT_ERR_FULL);
        finish_tx(PORT_BUS_SENT); /* the RESULT */
        assert_true(migrate_live(LOCAL));
        assert_int_equal(refusals, k == MOTET_MIGRATE_ROUNDS);
    }
    assert_int_equal(refused_with, MT_ERR_FULL);
    assert_int_equal(dones, 0);
    assert_int_equal(migrate_active(), 0);
    unsigned before = n_sent;
    tport_busy(TIMER_MS(10 * MOTET_MIGRATE_TIMEOUT_MS));
    sched_run_pending();
    assert_int_equal(n_sent, before); /* not asked again */
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "z", 1, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(got[strlen(got) - 1], 'z'); /* it runs here */
}

/* A bystander in as many migrations as it has slots for answers the next
 * FREEZE MT_ERR_FULL (logged), holding nothing back for that task. */
static void test_a_bystander_without_a_slot_answers_full(void **state)
{
    (void) state;
    for (mt_pid_t pid = 0x30; pid < 0x30 + MOTET_MIGRATE_SLOTS + 1; pid++) {
        const uint8_t freeze[5] = {pid, 1, 0, 2, 2};
        from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
        sched_run_pending();
    }
    for (unsigned i = 0; i < MOTET_MIGRATE_SLOTS + 1; i++) finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, MOTET_MIGRATE_SLOTS + 1);
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t reply = sent_frame(i);
        assert_int_equal(reply.port, MIG_MSG_REPLY);
        assert_int_equal(reply.payload[2], i < MOTET_MIGRATE_SLOTS ? MT_OK : MT_ERR_FULL);
    }
    assert_int_equal(migrate_active(), MOTET_MIGRATE_SLOTS);
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 1);
}

/* The destination has no room for the held message the image announced:
 * the task resumes here with it, and everyone is told. */
static void test_destination_refusing_for_lack_of_blocks_leaves_the_task_here(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t refused[3] = {LOCAL, id, MT_ERR_QUEUE_FULL};
    from_migrator(2, MIG_MSG_ATTACHED, refused, 3);
    assert_true(migrate_live(LOCAL));
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t failed[5] = {LOCAL, id, MT_ERR_QUEUE_FULL, SELF, 2};
    assert_memory_equal(result.payload, failed, 5);
    sched_run_pending();
    assert_string_equal(got, "Sh"); /* the held message ran here */
    assert_int_equal(migrate_active(), 0);
}

/* The image is in, module 2 attached it, our RESULT ok went out and 'h'
 * was forwarded: END is the frame on the bus. 'k' is sent here meanwhile. */
static void commit_and_forward(uint8_t *id)
{
    freeze_and_reply(id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    /* Held after the image counted 'h': forwarded too, into no set-aside block. */
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "j", 1, 0), MT_OK);
    const uint8_t attached[3] = {LOCAL, *id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    assert_int_equal(result.payload[2], MT_OK);
    finish_tx(PORT_BUS_SENT);
    /* Committed, but the task stays here, frozen, until END is through. */
    assert_true(sched_task_exists(LOCAL));
    assert_false(migrate_live(LOCAL));
    bus_frame_t fwd = sent_frame(3);
    assert_int_equal(fwd.port, MIG_MSG_FORWARD);
    const uint8_t two[10] = {LOCAL, *id, PORT_0, 1, 0, 'h', PORT_0, 1, 0, 'j'};
    assert_int_equal(fwd.len, 10);
    assert_memory_equal(fwd.payload, two, 10);
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "k", 1, 0), MT_OK); /* held here */
    finish_tx(PORT_BUS_SENT);
    bus_frame_t end = sent_frame(4);
    assert_int_equal(end.port, MIG_MSG_END);
    assert_int_equal(end.payload[2], 2); /* two messages forwarded */
    assert_int_equal(n_sent, 5);
}

/* Waits on the migrator's ticks, up to `ms`, until no migration is left. */
static void wait_until_no_migration(unsigned ms)
{
    for (unsigned waited = 0; migrate_active() && waited < ms; waited++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
}

/* After the timeouts: taken back here, MT_ERR_TIMEOUT logged and the
 * outcome everyone gets, the task live with 'h', and neither END nor any
 * FORWARD but those in `forwards` ever sent, once every frame ends. */
static void expect_taken_back_for_time(uint8_t id, unsigned forwards)
{
    assert_int_equal(migrate_active(), 0);
    assert_false(mig_pid_pinned(LOCAL));
    assert_true(migrate_live(LOCAL));
    assert_int_equal(dones, 1);
    assert_int_equal(done_with, MT_ERR_TIMEOUT);
    sched_run_pending();
    assert_string_equal(got, "Sh");
    for (unsigned guard = 0; bus_tx_pending() && guard < 16; guard++) finish_tx(PORT_BUS_SENT);
    unsigned failed = 0;
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        assert_int_not_equal(f.port, MIG_MSG_END);
        forwards -= f.port == MIG_MSG_FORWARD;
        const uint8_t timeout[5] = {LOCAL, id, MT_ERR_TIMEOUT, SELF, 2};
        failed += f.port == MIG_MSG_RESULT && !memcmp(f.payload, timeout, 5);
    }
    assert_int_equal(forwards, 0);
    assert_int_equal(failed, 1);
    assert_true(migrate_live(LOCAL));
}

/* Decided, but our RESULT ok never goes out (the bus holds it: a frame
 * given up, or dropped from a full control queue, would not go either).
 * Nothing after it left, so no module can have started the task: after
 * MOTET_MIGRATE_ROUNDS timeouts, RESULT ok asked again each time, the
 * task is taken back (once the slot waited for good, the pid pinned and
 * the task frozen). */
static void test_a_result_ok_that_never_goes_out_has_the_task_taken_back(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    assert_int_equal(result.payload[2], MT_OK);
    wait_until_no_migration((MOTET_MIGRATE_ROUNDS + 3u) * MOTET_MIGRATE_TIMEOUT_MS);
    expect_taken_back_for_time(id, 0);
}

/* Committed, the first FORWARD on the bus never ends: END has not left,
 * so the destination cannot have started the task; after the timeouts it
 * is taken back with 'h' (the forwarded copy). */
static void test_a_forward_that_never_ends_has_the_task_taken_back(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    finish_tx(PORT_BUS_SENT); /* RESULT ok: committed */
    assert_int_equal(sent_frame(3).port, MIG_MSG_FORWARD);
    wait_until_no_migration((MOTET_MIGRATE_ROUNDS + 3u) * MOTET_MIGRATE_TIMEOUT_MS);
    expect_taken_back_for_time(id, 1);
}

/* Ticks `ms` milliseconds, the migrator running at each. */
static void tick_ms(unsigned ms)
{
    for (unsigned waited = 0; waited < ms; waited++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
}

/* Committed, the first FORWARD waits behind six frames of this module,
 * each ending just within a timeout, seven timeouts in all: more than the
 * MOTET_MIGRATE_ROUNDS + 1 that take the task back when nothing moves.
 * The queue moves, ours with it: the wait starts again at each frame that
 * ends, and the migration succeeds. (Counted on the clock alone, the task
 * was taken back while its FORWARD waited its turn.) */
static void test_frames_ending_ahead_of_a_forward_keep_the_migration_going(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(sent_frame(2).port, MIG_MSG_RESULT);
    enum { AHEAD = 6 };
    for (unsigned i = 0; i < AHEAD; i++) /* behind RESULT ok, ahead of the FORWARD to come */
        assert_int_equal(sched_send_to(REMOTE, PORT_0, "q", 1, 0), MT_OK);
    finish_tx(PORT_BUS_SENT); /* RESULT ok: committed */
    sched_run_pending();
    unsigned ms = 0;
    for (unsigned i = 0; i < AHEAD; i++) {
        tick_ms(MOTET_MIGRATE_TIMEOUT_MS - 1u);
        ms += MOTET_MIGRATE_TIMEOUT_MS - 1u;
        expect_data(3 + i, 0, 'q');
        finish_tx(PORT_BUS_SENT);
        sched_run_pending();
    }
    assert_true(ms > (MOTET_MIGRATE_ROUNDS + 1u) * MOTET_MIGRATE_TIMEOUT_MS);
    assert_int_equal(dones, 0); /* not taken back */
    assert_int_equal(sent_frame(3 + AHEAD).port, MIG_MSG_FORWARD);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(sent_frame(4 + AHEAD).port, MIG_MSG_END);
    finish_tx(PORT_BUS_SENT); /* END through: module 2 runs the task */
    assert_false(sched_task_exists(LOCAL));
    assert_int_equal(dones, 1);
    assert_int_equal(done_with, MT_OK);
    assert_int_equal(sent_frame(5 + AHEAD).port, MIG_MSG_CONFIRM);
}

/* RESULT ok (pid, id) frames among those sent, each counted at its first
 * try (the bus's retries carry BUS_TYPE_RETRY). */
static unsigned results_ok(uint8_t id)
{
    unsigned n = 0;
    const uint8_t ok[5] = {LOCAL, id, MT_OK, SELF, 2};
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        n += f.port == MIG_MSG_RESULT && !f.retry && !memcmp(f.payload, ok, 5);
    }
    return n;
}

/* RESULT ok is sent again at each timeout without progress: with the
 * first given up (rejected MOTET_BUS_RETRIES times: a multicast's end is
 * reported only when it went), the second commits, and the migration goes
 * on: FORWARD, END, CONFIRM. */
static void test_a_result_ok_sent_again_commits_when_the_first_was_given_up(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    for (unsigned i = 0; i < MOTET_BUS_RETRIES; i++) finish_tx(PORT_BUS_REJECTED);
    sched_run_pending();
    assert_int_equal(bus_tx_pending(), 0); /* given up */
    unsigned before = n_sent;
    for (unsigned ms = 0; n_sent == before && ms < 2u * MOTET_MIGRATE_TIMEOUT_MS; ms++) tick_ms(1);
    assert_int_equal(n_sent, before + 1);
    bus_frame_t again = sent_frame(before);
    assert_int_equal(again.port, MIG_MSG_RESULT);
    assert_int_equal(again.payload[2], MT_OK);
    finish_tx(PORT_BUS_SENT); /* committed */
    assert_int_equal(sent_frame(before + 1).port, MIG_MSG_FORWARD);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(sent_frame(before + 2).port, MIG_MSG_END);
    finish_tx(PORT_BUS_SENT);
    assert_false(sched_task_exists(LOCAL));
    assert_int_equal(done_with, MT_OK);
    assert_int_equal(sent_frame(before + 3).port, MIG_MSG_CONFIRM);
}

/* Every RESULT ok is given up (rejected MOTET_BUS_RETRIES times), each
 * sent again at a timeout: the migrator's own frames ending are no
 * progress, so after MOTET_MIGRATE_ROUNDS of them the task is taken back.
 * (Counted as progress, they kept the migration going for good.) */
static void test_result_ok_given_up_again_and_again_is_no_progress(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    unsigned given_up = 0;
    for (unsigned ms = 0;
         migrate_active() && ms < 4u * MOTET_MIGRATE_ROUNDS * MOTET_MIGRATE_TIMEOUT_MS; ms++) {
        bus_frame_t last = sent_frame(n_sent - 1);
        if (bus_tx_pending() && last.port == MIG_MSG_RESULT && last.payload[2] == MT_OK) {
            for (unsigned i = 0; i < MOTET_BUS_RETRIES; i++) finish_tx(PORT_BUS_REJECTED);
            given_up++;
            n_sent = 3; /* the capture keeps FREEZE, the chunk and the first RESULT ok */
        }
        tick_ms(1);
    }
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(dones, 1);
    assert_int_equal(done_with, MT_ERR_TIMEOUT);
    assert_int_equal(given_up, 1u + MOTET_MIGRATE_ROUNDS);
    assert_true(migrate_live(LOCAL));
}

/* A RESULT ok that never goes out is asked again once a timeout, as long
 * as nothing moves: MOTET_MIGRATE_ROUNDS times after the first, then the
 * task is taken back, and no more. */
static void test_result_ok_is_sent_again_once_a_round(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    for (unsigned i = 0; i < MOTET_BUS_RETRIES; i++) finish_tx(PORT_BUS_REJECTED); /* given up */
    sched_run_pending();
    wait_until_no_migration((MOTET_MIGRATE_ROUNDS + 3u) * MOTET_MIGRATE_TIMEOUT_MS);
    assert_int_equal(dones, 1);
    assert_int_equal(done_with, MT_ERR_TIMEOUT);
    tick_ms(4u * MOTET_MIGRATE_TIMEOUT_MS);
    /* The slot is gone: the frames going now change nothing. */
    for (unsigned guard = 0; bus_tx_pending() && guard < 16; guard++) finish_tx(PORT_BUS_SENT);
    assert_true(sched_task_exists(LOCAL));
    /* The first and one at each timeout but the last, whose round takes
     * the task back. */
    assert_int_equal(results_ok(id), 1u + MOTET_MIGRATE_ROUNDS);
}

/* With END on the bus no clock ends the wait: END may yet reach module 2,
 * which then runs the task; taking it back here would make it live twice.
 * Only END's verdict decides. */
static void test_end_on_the_bus_is_waited_for_however_long(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    wait_until_no_migration(10u * MOTET_MIGRATE_ROUNDS * MOTET_MIGRATE_TIMEOUT_MS);
    assert_int_equal(migrate_active(), 1);
    assert_false(migrate_live(LOCAL));
    assert_int_equal(dones, 0);
    assert_int_equal(n_sent, 5);
    finish_tx(PORT_BUS_SENT); /* END went through: module 2 runs the task */
    assert_false(sched_task_exists(LOCAL));
    assert_int_equal(sent_frame(5).port, MIG_MSG_CONFIRM);
}

/* END queued behind a frame of this module that never ends (a receiver
 * answering it busy for good): the interface never had END, so module 2
 * cannot have it. After MOTET_MIGRATE_ROUNDS timeouts without progress,
 * END is taken out of the send queue and the task taken back, with every
 * message; END never goes. (Counted out as soon as it was queued, END
 * kept the task frozen and its pid pinned on both modules for good.) */
static void test_end_still_in_the_send_queue_is_taken_out_and_the_task_back(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    finish_tx(PORT_BUS_SENT); /* RESULT ok: committed */
    assert_int_equal(sent_frame(3).port, MIG_MSG_FORWARD);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "q", 1, 0), MT_OK); /* behind the FORWARD */
    finish_tx(PORT_BUS_SENT); /* the FORWARD: END is queued, behind 'q' */
    sched_run_pending();
    expect_data(4, 0, 'q');
    assert_int_equal(bus_tx_pending(), 2); /* 'q' at the interface, END waiting */
    wait_until_no_migration((MOTET_MIGRATE_ROUNDS + 3u) * MOTET_MIGRATE_TIMEOUT_MS);
    assert_int_equal(migrate_active(), 0);
    assert_false(mig_pid_pinned(LOCAL));
    assert_int_equal(dones, 1);
    assert_int_equal(done_with, MT_ERR_TIMEOUT);
    sched_run_pending();
    assert_string_equal(got, "Sh"); /* the forwarded copy, at its place */
    for (unsigned guard = 0; bus_tx_pending() && guard < 16; guard++) finish_tx(PORT_BUS_SENT);
    unsigned failed = 0;
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        assert_int_not_equal(f.port, MIG_MSG_END);
        const uint8_t timeout[5] = {LOCAL, id, MT_ERR_TIMEOUT, SELF, 2};
        failed += f.port == MIG_MSG_RESULT && !memcmp(f.payload, timeout, 5);
    }
    assert_int_equal(failed, 1);
    assert_true(migrate_live(LOCAL));
}

static void test_success_moves_the_task_once_end_is_through(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    finish_tx(PORT_BUS_SENT); /* END went through: module 2 runs the task */
    assert_false(sched_task_exists(LOCAL));
    mt_module_t where;
    assert_true(sched_mig_remote(LOCAL, &where, NULL));
    assert_int_equal(where, 2);
    bus_frame_t confirm = sent_frame(5);
    assert_int_equal(confirm.type, BUS_FRAME_MCAST);
    assert_int_equal(confirm.port, MIG_MSG_CONFIRM);
    const uint8_t c[4] = {LOCAL, id, SELF, 2};
    assert_memory_equal(confirm.payload, c, 4);
    finish_tx(PORT_BUS_SENT);
    bus_frame_t k = sent_frame(6); /* what was held here since the commit follows the task */
    assert_int_equal(k.type, BUS_FRAME_DATA);
    assert_int_equal(k.dst, 2);
    assert_int_equal(k.pid, LOCAL);
    assert_int_equal(k.payload[0], 'k');
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(migrate_active(), 0);
    assert_string_equal(got, "S"); /* 'h', 'j' and 'k' ran nowhere here */
}

static void test_end_unreachable_takes_the_task_back(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    finish_tx(PORT_BUS_UNREACHABLE); /* END: module 2 is gone */
    assert_true(migrate_live(LOCAL));
    bus_frame_t result = sent_frame(5); /* the second outcome */
    assert_int_equal(result.type, BUS_FRAME_MCAST);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t failed[5] = {LOCAL, id, MT_ERR_BUS_DOWN, SELF, 2};
    assert_memory_equal(result.payload, failed, 5);
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_BUS_DOWN), 2); /* the bus, the migrator */
    sched_run_pending();
    assert_string_equal(got, "Shjk"); /* the forwarded copy, then what was held here */
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "m", 1, 0), MT_OK); /* runs here */
    sched_run_pending();
    assert_string_equal(got, "Shjkm");
}

/* ---- a question about an outcome no longer kept ---- */

/* LOCAL asked to move to module 2, which cannot attach it: the task runs
 * here again and the failure is kept. The migration's id. */
static uint8_t migrate_refused_by_the_destination(void)
{
    unsigned first = n_sent;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    uint8_t id = ask_and_reply(first, MT_OK);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t no_mem[3] = {LOCAL, id, MT_ERR_NO_MEM};
    from_migrator(2, MIG_MSG_ATTACHED, no_mem, 3);
    bus_frame_t result = sent_frame(first + 2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    assert_int_equal(result.payload[2], MT_ERR_NO_MEM);
    finish_tx(PORT_BUS_SENT);
    assert_true(migrate_live(LOCAL));
    return id;
}

/* A migrator frame from module src, and the one frame this module sends
 * in answer once its migrator has run. */
static bus_frame_t the_answer_to(mt_module_t src, uint8_t kind, const uint8_t *p, uint16_t len)
{
    unsigned before = n_sent;
    from_migrator(src, kind, p, len);
    sched_run_pending();
    assert_int_equal(n_sent, before + 1);
    return sent_frame(before);
}

/* Module 0 asks (PING: pid, id, the source it waits for) about migration
 * `id` of `pid`; the answer, the one frame sent, to module 0 alone. */
static bus_frame_t ask_about(mt_pid_t pid, uint8_t id)
{
    const uint8_t ping[3] = {pid, id, SELF};
    bus_frame_t answer = the_answer_to(0, MIG_MSG_PING, ping, 3);
    assert_int_equal(answer.type, BUS_FRAME_DATA);
    assert_int_equal(answer.dst, 0);
    finish_tx(PORT_BUS_SENT);
    return answer;
}

/* More migrations than the source keeps outcomes of: a module that missed
 * the first one's outcome (it was stopped) asks, and the source answers
 * from where the task is, here: a failure, on which the asker sends what
 * it held back here and a destination drops its copy. It used to answer
 * nothing, and the asker kept its slot and its messages for good. The
 * latest outcomes are still given as they were; a task that is nowhere
 * is dead. The source's own question to a destination (no source named)
 * is not answered. */
static void test_source_answers_for_an_outcome_it_no_longer_keeps_where_the_task_is(void **state)
{
    (void) state;
    uint8_t ids[MIG_OUTCOMES + 1];
    for (unsigned i = 0; i < MIG_OUTCOMES + 1; i++) ids[i] = migrate_refused_by_the_destination();
    unsigned before = n_sent;
    const uint8_t probe[2] = {LOCAL, ids[0]};
    from_migrator(2, MIG_MSG_PING, probe, 2);
    sched_run_pending();
    assert_int_equal(n_sent, before);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0);

    bus_frame_t answer = ask_about(LOCAL, ids[0]);
    assert_int_equal(answer.port, MIG_MSG_RESULT);
    const uint8_t here[5] = {LOCAL, ids[0], MIG_RESULT_FORGOTTEN, SELF, SELF};
    assert_memory_equal(answer.payload, here, 5);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);

    answer = ask_about(LOCAL, ids[MIG_OUTCOMES]); /* kept */
    const uint8_t kept[5] = {LOCAL, ids[MIG_OUTCOMES], MT_ERR_NO_MEM, SELF, 2};
    assert_memory_equal(answer.payload, kept, 5);

    answer = ask_about(0x7E, 1); /* no such task here nor a route to it */
    const uint8_t dead[5] = {0x7E, 1, MIG_RESULT_KILLED, SELF, SELF};
    assert_memory_equal(answer.payload, dead, 5);
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
}

/* The task moved to module 2; asked about a migration of it whose outcome
 * is not kept, the source names the module it routes the task to, in a
 * CONFIRM: a bystander sends there what it held back. */
static void
test_source_answers_for_an_outcome_it_no_longer_keeps_where_it_routes_the_task(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    finish_tx(PORT_BUS_SENT); /* END */
    finish_tx(PORT_BUS_SENT); /* CONFIRM */
    finish_tx(PORT_BUS_SENT); /* 'k' */
    uint8_t older = (uint8_t) (id - 1u);
    bus_frame_t answer = ask_about(LOCAL, older);
    assert_int_equal(answer.port, MIG_MSG_CONFIRM);
    const uint8_t there[4] = {LOCAL, older, SELF, 2};
    assert_memory_equal(answer.payload, there, 4);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

/* LOCAL, a member of GROUP, asked to move to module 2: frozen, FREEZE
 * sent (frame 0); the migration's number. */
static uint8_t freeze_a_member(void)
{
    assert_int_equal(mcast_join(GROUP, LOCAL, PORT_0), MT_OK);
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    return sent_frame(0).payload[1];
}

/* Multicasts: the task leaves its groups when it is frozen, and the
 * multicasts to them from then on are recorded, each with its bus frame
 * (origin, number), and forwarded behind the held messages, so that the
 * destination can drop the ones it delivered itself. A multicast that
 * arrives while the RESULT is still on its way is among them: the task
 * once got it both here (it was still a member) and on the destination
 * (which joined at its first good copy of a RESULT sent again). Taken
 * back, the task gets them all, once, in order, and is a member again. */
static void test_source_records_multicasts_from_the_freeze_and_forwards_their_frames(void **state)
{
    (void) state;
    uint8_t id = freeze_a_member();
    assert_int_equal(mcast_member_count(GROUP), 0); /* left with the freeze */
    finish_tx(PORT_BUS_SENT);
    cast(0, 20, 'm'); /* recorded, not delivered */
    const uint8_t reply[3] = {LOCAL, id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    bus_frame_t chunk = sent_frame(1);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    /* The recorded multicast will follow: the destination sets a block aside. */
    assert_int_equal(mig_get16(chunk.payload + MIG_CHUNK_HDR + MIG_IMAGE_HELD), 1);
    finish_tx(PORT_BUS_SENT);
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(sent_frame(2).port, MIG_MSG_RESULT);
    cast(2, 30, 'n'); /* the RESULT is still going out */
    finish_tx(PORT_BUS_SENT);
    bus_frame_t fwd = sent_frame(3);
    assert_int_equal(fwd.port, MIG_MSG_FORWARD);
    const uint8_t casts[14] = {LOCAL, id,  PORT_0 | MIG_FWD_CAST, 1, 0, 0,
                               20,    'm', PORT_0 | MIG_FWD_CAST, 1, 0, 2,
                               30,    'n'};
    assert_int_equal(fwd.len, sizeof casts);
    assert_memory_equal(fwd.payload, casts, sizeof casts);
    finish_tx(PORT_BUS_SENT);
    bus_frame_t end = sent_frame(4);
    assert_int_equal(end.port, MIG_MSG_END);
    assert_int_equal(end.payload[2], 2);
    assert_string_equal(got, "S");   /* none ran here */
    finish_tx(PORT_BUS_UNREACHABLE); /* END: taken back */
    sched_run_pending();
    assert_string_equal(got, "Smn");
    assert_int_equal(mcast_member_count(GROUP), 1);
    cast(0, 21, 'o');
    sched_run_pending();
    assert_string_equal(got, "Smno");
}

/* The tail: a destination that missed RESULT ok (it went by while the
 * destination was stopped) joins the task's groups only at the first frame
 * that an OK decision alone sends, and the multicasts it took before that
 * were recorded here after the commit. So once the destination has taken
 * a FORWARD (an empty one when there was nothing to forward: the join's
 * place), the multicasts recorded since the commit follow, with END when
 * they fit in it. One recorded later, while END is on its way: the
 * destination took it after joining. */
static void test_source_forwards_the_multicasts_recorded_since_the_commit_before_end(void **state)
{
    (void) state;
    uint8_t id = freeze_a_member();
    finish_tx(PORT_BUS_SENT);
    const uint8_t reply[3] = {LOCAL, id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    finish_tx(PORT_BUS_SENT); /* the image */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(sent_frame(2).port, MIG_MSG_RESULT);
    finish_tx(PORT_BUS_SENT); /* committed: nothing held, nothing recorded */
    bus_frame_t join = sent_frame(3);
    assert_int_equal(join.port, MIG_MSG_FORWARD);
    const uint8_t empty[2] = {LOCAL, id};
    assert_int_equal(join.len, sizeof empty);
    assert_memory_equal(join.payload, empty, sizeof empty);
    cast(0, 60, 'n'); /* taken here, and maybe by the destination before it joined */
    finish_tx(PORT_BUS_SENT);
    bus_frame_t end = sent_frame(4); /* the tail goes with END: no frame of its own */
    assert_int_equal(end.port, MIG_MSG_END);
    assert_int_equal(end.len, MIG_END_HDR + MIG_FWD_CAST_ENTRY + 1);
    assert_int_equal(mig_get16(end.payload + 2), 1); /* forwarded: the tail's one */
    const uint8_t since[6] = {PORT_0 | MIG_FWD_CAST, 1, 0, 0, 60, 'n'};
    assert_memory_equal(end.payload + MIG_END_HDR, since, sizeof since);
    cast(0, 61, 'o'); /* after the destination's join: it has this one */
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, 6);
    sched_run_pending();
    assert_int_equal(sent_frame(5).port, MIG_MSG_CONFIRM);
    assert_false(sched_task_exists(LOCAL));
    assert_string_equal(got, "S"); /* none ran here */
}

/* ---- the task killed during its migration: its pid stays taken ---- */

/* A handler (here the test, between two of the migrator's steps) kills
 * the frozen LOCAL and tries to create another task of its pid: refused
 * with MT_ERR_EXISTS, logged, while the migration's slot holds the pid
 * (once it was created, and each later step took it for the migrating
 * task: its held messages, its groups, its move out). */
static void kill_local_and_try_to_replace_it(void)
{
    assert_int_equal(sched_task_kill(LOCAL), MT_OK);
    (void) test_count_logged_errors(MT_ERR_EXISTS); /* the log drained: only this one counts */
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_ERR_EXISTS);
    assert_int_equal(test_count_logged_errors(MT_ERR_EXISTS), 1);
    assert_false(sched_task_exists(LOCAL));
}

/* The migration over and its task dead, the pid is free again: a task
 * created under it got nothing of the migration's (no recorded multicast,
 * no group, no forwarded copy), and at its INIT runs its own 'n' alone. */
static void expect_the_pid_free_and_a_new_task_untouched(void)
{
    assert_false(sched_mig_remote(LOCAL, NULL, NULL));
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "n", 1, 0), MT_OK);
    task_t *t = sched_find_task(LOCAL);
    assert_non_null(t);
    assert_int_equal(t->flags & (TASK_FROZEN | TASK_INITIALISED), 0);
    assert_int_equal(mcast_member_count(GROUP), 0);
    size_t before = strlen(got);
    assert_int_equal(sched_task_init(LOCAL, NULL, 0), MT_OK);
    sched_run_pending();
    assert_string_equal(got + before, "n");
}

/* The migration ends as for a killed task: the outcome everyone gets
 * (frame `i`) and MIG_DONE are MIG_RESULT_KILLED, and no slot is left. */
static void expect_ended_as_killed(unsigned i, uint8_t id)
{
    bus_frame_t result = sent_frame(i);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    const uint8_t killed[5] = {LOCAL, id, MIG_RESULT_KILLED, SELF, 2};
    assert_memory_equal(result.payload, killed, 5);
    assert_int_equal(dones, 1);
    assert_int_equal(migrate_active(), 0);
}

/* Killed after the decision: the copy runs at module 2, and the pid
 * routes there from here too (once no remote block was made, and a task
 * made here meanwhile lived beside the copy under the same pid). */
static void expect_the_pid_routed_to_the_copy(void)
{
    mt_module_t where;
    assert_true(sched_mig_remote(LOCAL, &where, NULL));
    assert_int_equal(where, 2);
    assert_false(sched_task_exists(LOCAL));
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_ERR_EXISTS);
    assert_int_equal(migrate_active(), 0);
}

/* A member frozen, a multicast to its group recorded, then the task
 * killed; module 2 replies `err`, which ends the migration (before the
 * decision) as killed, the recorded multicast freed with the slot. */
static void kill_a_member_then_reply(mt_err_t err)
{
    uint8_t id = freeze_a_member();
    finish_tx(PORT_BUS_SENT);
    cast(0, 20, 'c'); /* recorded for the frozen task */
    kill_local_and_try_to_replace_it();
    const uint8_t answer[3] = {LOCAL, id, (uint8_t) err};
    from_migrator(2, MIG_MSG_REPLY, answer, 3);
    expect_ended_as_killed(1, id);
    expect_the_pid_free_and_a_new_task_untouched();
}

static void test_a_task_killed_before_a_failure_keeps_its_pid_until_the_end(void **state)
{
    (void) state;
    kill_a_member_then_reply(MT_ERR_NO_MEM); /* mig_source_fail() */
    assert_int_equal(refusals, 0);
}

static void test_a_task_killed_before_a_put_off_keeps_its_pid_and_is_not_asked_again(void **state)
{
    (void) state;
    kill_a_member_then_reply(MT_ERR_FULL); /* put_off() */
    unsigned before = n_sent;
    tport_busy(TIMER_MS(10 * MOTET_MIGRATE_TIMEOUT_MS));
    sched_run_pending();
    for (unsigned i = before; i < n_sent; i++)
        assert_int_not_equal(sent_frame(i).port, MIG_MSG_FREEZE);
}

/* Killed before the last reply: the image announces no held message
 * ('h' went with the kill), and the ATTACHED that follows decides
 * nothing: the migration ends as killed. */
static void test_a_task_killed_before_the_image_is_counted_as_holding_nothing(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(LOCAL, 2), MT_OK);
    sched_run_pending();
    uint8_t id = sent_frame(0).payload[1];
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "h", 1, 0), MT_OK); /* held, then killed */
    const uint8_t reply[3] = {LOCAL, id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    kill_local_and_try_to_replace_it();
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    bus_frame_t chunk = sent_frame(1);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    assert_int_equal(mig_get16(chunk.payload + MIG_CHUNK_HDR + MIG_IMAGE_HELD), 0);
    finish_tx(PORT_BUS_SENT);
    from_migrator(2, MIG_MSG_ATTACHED, reply, 3);
    expect_ended_as_killed(2, id);
    expect_the_pid_free_and_a_new_task_untouched();
}

/* Killed before the destination's ATTACHED: no decision, ended as
 * killed (MT_ERR_NO_TASK logged). */
static void test_a_task_killed_before_attached_is_not_decided(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    kill_local_and_try_to_replace_it();
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
    expect_ended_as_killed(2, id);
    expect_the_pid_free_and_a_new_task_untouched();
}

/* Killed while RESULT ok goes out: the decision stands, the copy runs on
 * module 2; the commit forwards nothing ('h' went with the kill), END
 * goes, and once it is through the pid routes to the copy. */
static void test_a_task_killed_before_the_commit_runs_on_at_the_destination(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(sent_frame(2).payload[2], MT_OK);
    kill_local_and_try_to_replace_it();
    finish_tx(PORT_BUS_SENT);        /* RESULT: committed */
    bus_frame_t end = sent_frame(3); /* no FORWARD: nothing to forward */
    assert_int_equal(end.port, MIG_MSG_END);
    assert_int_equal(end.len, MIG_END_HDR);
    assert_int_equal(mig_get16(end.payload + 2), 0);
    task_spec_t spec = {.pid = LOCAL, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_ERR_EXISTS); /* END on the bus: still held */
    finish_tx(PORT_BUS_SENT);                                  /* END through */
    assert_int_equal(sent_frame(4).port, MIG_MSG_CONFIRM);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, 5);
    expect_the_pid_routed_to_the_copy();
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "r", 1, 0), MT_OK); /* to module 2 */
    bus_frame_t r = sent_frame(5);
    assert_int_equal(r.type, BUS_FRAME_DATA);
    assert_int_equal(r.dst, 2);
    assert_int_equal(r.pid, LOCAL);
}

/* Killed once ATTACHED decided: its pid may not be recorded as a remote
 * task elsewhere either (MT_ERR_EXISTS, logged) while the migration holds
 * it, so that at END it routes to the copy on module 2 (once the record
 * was taken, END's own refused, and the pid routed to module 0). */
static void test_a_task_killed_after_the_decision_takes_no_remote_record(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    kill_local_and_try_to_replace_it();
    assert_int_equal(sched_task_create_remote(LOCAL, 2, 0), MT_ERR_EXISTS);
    assert_int_equal(test_count_logged_errors(MT_ERR_EXISTS), 1);
    assert_false(sched_mig_remote(LOCAL, NULL, NULL));
    finish_tx(PORT_BUS_SENT); /* RESULT: committed */
    finish_tx(PORT_BUS_SENT); /* END through */
    finish_tx(PORT_BUS_SENT); /* CONFIRM */
    expect_the_pid_routed_to_the_copy();
    assert_int_equal(sched_task_create_remote(LOCAL, 2, 0), MT_ERR_EXISTS); /* the copy's */
}

/* Killed while END goes out, 'h' and 'j' forwarded, 'k' held: END
 * through, the copy runs on module 2 and the pid routes there. */
static void test_a_task_killed_before_end_is_through_runs_on_at_the_destination(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    kill_local_and_try_to_replace_it();
    finish_tx(PORT_BUS_SENT); /* END through */
    assert_int_equal(sent_frame(5).port, MIG_MSG_CONFIRM);
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, 6); /* nothing followed: 'k' went with the kill */
    expect_the_pid_routed_to_the_copy();
}

/* Killed while END goes out, then END unreachable: taken back, but the
 * task is gone: ended as killed, the copies of 'h' and 'j' freed with
 * the slot, the pid free again. */
static void test_a_task_killed_before_end_fails_ends_as_killed(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    kill_local_and_try_to_replace_it();
    finish_tx(PORT_BUS_UNREACHABLE); /* END: module 2 is gone */
    expect_ended_as_killed(5, id);
    expect_the_pid_free_and_a_new_task_untouched();
}

/* A task whose program declares a layout: its state is encoded from the
 * frozen task itself, chunk by chunk as the image goes (migrate_layout.c),
 * here in three chunks. */
#define BIG 0x23
typedef struct {
    uint8_t bytes[2600];
} big_t;
static const state_field_t big_fields[] = {STATE_ARRAY(big_t, bytes)};
static const state_layout_t big_layout = STATE_LAYOUT(big_fields);
static const program_t with_big[] = {
    {.id = 9, .name = "task", .handler = task},
    {.id = 10, .name = "big", .handler = hog, .state_size = sizeof(big_t), .layout = &big_layout}};

/* Killed once its first chunk is through: a task of its pid cannot be
 * made meanwhile, so the next chunk cannot be encoded from another's
 * state (once it held the new task's bytes), and the migration ends as
 * killed. */
static void test_a_task_killed_between_layout_chunks_sends_no_other_state(void **state)
{
    (void) state;
    program_register(with_big, 2);
    task_spec_t spec = {
        .pid = BIG, .prio = 2, .flags = TASK_MOVABLE, .handler = hog, .state_size = sizeof(big_t)};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(BIG, NULL, 0), MT_OK);
    sched_run_pending();
    memset(sched_find_task(BIG)->state, 'o', sizeof(big_t));
    assert_int_equal(migrate_request(BIG, 2), MT_OK);
    sched_run_pending();
    uint8_t id = sent_frame(0).payload[1];
    finish_tx(PORT_BUS_SENT);
    const uint8_t reply[3] = {BIG, id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    assert_int_equal(n_sent, 2); /* the first chunk on the wire */
    bus_frame_t chunk = sent_frame(1);
    assert_int_equal(chunk.port, MIG_MSG_STATE);
    assert_int_equal(chunk.payload[chunk.len - 1], 'o');
    assert_int_equal(sched_task_kill(BIG), MT_OK);
    (void) test_count_logged_errors(MT_ERR_EXISTS); /* the log drained: only this one counts */
    task_spec_t again = {.pid = BIG, .prio = 2, .flags = TASK_MOVABLE, .handler = hog};
    assert_int_equal(sched_task_create(&again), MT_ERR_EXISTS);
    assert_int_equal(test_count_logged_errors(MT_ERR_EXISTS), 1);
    finish_tx(PORT_BUS_SENT); /* the first chunk: the next cannot be made */
    for (unsigned done = 2; done < n_sent; done++) finish_tx(PORT_BUS_SENT);
    unsigned chunks = 0, results = 0;
    for (unsigned i = 1; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        if (f.port == MIG_MSG_STATE) { /* only the first, encoded before the kill */
            chunks++;
            assert_int_equal(f.payload[f.len - 1], 'o');
        }
        const uint8_t killed[5] = {BIG, id, MIG_RESULT_KILLED, SELF, 2};
        if (f.port == MIG_MSG_RESULT && !memcmp(f.payload, killed, 5)) results++;
    }
    assert_int_equal(chunks, 1);
    assert_int_equal(results, 1);
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(sched_task_create(&again), MT_OK); /* the migration over: free again */
}

/* A handler at an interrupt's exit, the moment BIG's second chunk is
 * being encoded, kills BIG and creates a stranger whose state is BIG's
 * freed block, filled with 'x'. The chunk is encoded with interrupts on
 * (no interrupt waits for the copy), so it may hold the stranger's bytes:
 * the task, found gone once the copy is done, has the chunk dropped, and
 * no later chunk goes; the migration ends as killed. (Once the task was
 * found with interrupts on and the chunk kept without looking again: the
 * stranger's bytes went onto the bus.) */
static uint8_t *big_state;

static void create_a_stranger_in_bigs_state(void)
{
    task_spec_t spec = {
        .pid = STRANGER, .prio = 2, .handler = stranger, .state_size = sizeof(big_t)};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    uint8_t *theirs = sched_find_task(STRANGER)->state;
    assert_ptr_equal(theirs, big_state); /* the case: in BIG's freed block */
    memset(theirs, 'x', sizeof(big_t));
}

static void
test_a_task_killed_while_a_layout_chunk_is_encoded_sends_only_its_own_state(void **state)
{
    (void) state;
    program_register(with_big, 2);
    task_spec_t spec = {
        .pid = BIG, .prio = 2, .flags = TASK_MOVABLE, .handler = hog, .state_size = sizeof(big_t)};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(BIG, NULL, 0), MT_OK);
    sched_run_pending();
    big_state = sched_find_task(BIG)->state;
    memset(big_state, 'o', sizeof(big_t));
    arm_killer(BIG, create_a_stranger_in_bigs_state);
    assert_int_equal(migrate_request(BIG, 2), MT_OK);
    sched_run_pending();
    uint8_t id = sent_frame(0).payload[1];
    finish_tx(PORT_BUS_SENT);
    const uint8_t reply[3] = {BIG, id, MT_OK};
    from_migrator(0, MIG_MSG_REPLY, reply, 3);
    interrupt_at_later_chunk = true;
    from_migrator(2, MIG_MSG_REPLY, reply, 3);
    for (unsigned done = 1; interrupt_at_later_chunk && done < n_sent; done++)
        finish_tx(PORT_BUS_SENT);           /* a chunk ends: the next is made */
    assert_false(interrupt_at_later_chunk); /* the second chunk was encoded */
    assert_true(taken_before_the_copy);     /* with interrupts on */
    assert_false(sched_task_exists(BIG));
    for (unsigned done = 2; done < n_sent; done++) finish_tx(PORT_BUS_SENT);
    sched_run_pending();
    unsigned chunks = 0, results = 0;
    for (unsigned i = 1; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        if (f.port == MIG_MSG_STATE) {
            chunks++;
            for (uint16_t k = MIG_CHUNK_HDR; k < f.len; k++)
                assert_int_not_equal(f.payload[k], 'x');
        }
        const uint8_t killed[5] = {BIG, id, MIG_RESULT_KILLED, SELF, 2};
        if (f.port == MIG_MSG_RESULT && !memcmp(f.payload, killed, 5)) results++;
    }
    assert_int_equal(chunks, 1); /* the one before the kill: the one it came in is dropped */
    assert_int_equal(results, 1);
    assert_int_equal(migrate_active(), 0);
}

/* A task that cannot be set going here again (no timer block left for
 * its timer, the pool taken meanwhile) is killed: MIG_KILLED, the outcome
 * MIG_RESULT_KILLED, and its pid free. */
static void test_a_task_that_cannot_resume_is_killed(void **state)
{
    (void) state;
    make_hogs();
    assert_int_equal(timer_start_for(LOCAL, 0, TIMER_MS(100000), false), MT_OK);
    uint8_t id = freeze_a_member();
    finish_tx(PORT_BUS_SENT);
    take_every_timer(); /* the frozen task's timer was stopped: its block is taken */
    unsigned before = phases;
    const uint8_t failed[3] = {LOCAL, id, MT_ERR_NO_MEM};
    from_migrator(2, MIG_MSG_REPLY, failed, 3);
    assert_true(phases > before);
    assert_false(sched_task_exists(LOCAL));
    expect_ended_as_killed(1, id);
    assert_int_equal(mcast_member_count(GROUP), 0);
}

/* END through, but no remote block is free to route the pid to the copy:
 * the task here goes anyway (killed, MT_ERR_NO_SLAB logged), and 'k',
 * held here since the commit, still follows it to module 2. */
static void test_a_task_with_no_remote_block_left_is_killed_and_its_messages_follow(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    for (mt_pid_t p = 0x50; sched_task_create_remote(p, 2, 0) == MT_OK; p++)
        assert_true(p < 0x50 + MOTET_MAX_REMOTE_TASKS);
    (void) test_count_logged_errors(MT_ERR_NO_SLAB); /* the log drained: the fill's */
    finish_tx(PORT_BUS_SENT);                        /* END through */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    assert_false(sched_task_exists(LOCAL));
    assert_false(sched_mig_remote(LOCAL, NULL, NULL));
    assert_int_equal(sent_frame(5).port, MIG_MSG_CONFIRM);
    finish_tx(PORT_BUS_SENT);
    bus_frame_t k = sent_frame(6);
    assert_int_equal(k.type, BUS_FRAME_DATA);
    assert_int_equal(k.dst, 2);
    assert_int_equal(k.pid, LOCAL);
    assert_int_equal(k.payload[0], 'k');
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(migrate_active(), 0);
    assert_string_equal(got, "S");
}

/* Flow control: while the task is frozen, sends that would take the
 * migrator's reserve of message blocks are refused (the local sender is
 * told, and tries again), and a bus frame is answered busy: not taken, not
 * dropped; offered again once there is room, it is taken, once. */
static void test_frozen_task_at_the_reserve_refuses_and_answers_busy(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    unsigned taken = 0;
    while (sched_send_to(LOCAL, PORT_0, "x", 1, 0) == MT_OK) taken++;
    assert_true(taken > 4 && taken < 40);
    assert_int_equal(sched_send_to(LOCAL, PORT_0, "x", 1, 0), MT_ERR_QUEUE_FULL);
    assert_int_equal(sched_msg_spare(), MIG_RESERVE); /* the reserve is intact */
    const uint8_t r = 'r';
    assert_false(offer(BUS_FRAME_DATA, 0, LOCAL, PORT_0, &r, 1)); /* busy */
    assert_int_equal(bus_stats()->rx_undeliverable, 0);
    assert_int_equal(bus_stats()->rx_corrupt, 0);
    finish_tx(PORT_BUS_UNREACHABLE); /* the chunk: the task resumes here */
    sched_run_pending();
    assert_true(offer(BUS_FRAME_DATA, 0, LOCAL, PORT_0, &r, 1)); /* room now */
    sched_run_pending();
    char want[64] = "Sh";
    memset(want + 2, 'x', taken);
    want[2 + taken] = 'r';
    assert_string_equal(got, want);
}

/* A multicast to a frozen task's groups is recorded in a message block,
 * and cannot be answered busy (other modules took it, other members here
 * may want it): with the pool at the migrator's reserve it is lost. It
 * used to be lost with an error logged in whatever context took the frame
 * and nothing more; the task, resumed, found a gap in its sender's
 * numbers (the whole device: test_device_pause.py's stalled bystander).
 * Each loss is reported to the observer and logged as MIG_LOST, naming the
 * task, the module that sent it and why. */
static void test_source_reports_each_multicast_it_has_no_block_for(void **state)
{
    (void) state;
    uint8_t id = freeze_a_member();
    (void) id;
    finish_tx(PORT_BUS_SENT); /* FREEZE */
    while (sched_send_to(LOCAL, PORT_0, "x", 1, 0) == MT_OK) continue;
    assert_int_equal(sched_msg_spare(), MIG_RESERVE);
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    cast(0, 20, 'm'); /* taken by the bus: not offered again */
    cast(0, 21, 'n');
    cast(2, 7, 'p');
    sched_run_pending();
    assert_int_equal(lost_from[0], 2);
    assert_int_equal(lost_from[2], 1);
    assert_int_equal(lost_with, MT_ERR_QUEUE_FULL);
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), logged = 0, errors = 0;
    for (unsigned i = 0; i < n; i++) {
        errors += rec[i].type == EV_ERROR && rec[i].arg == MT_ERR_QUEUE_FULL;
        if (rec[i].type != EV_MIGRATE || rec[i].arg >> 8 != MIG_LOST) continue;
        assert_int_equal(rec[i].pid, LOCAL);
        logged++;
    }
    assert_int_equal(logged, 3);
    assert_int_equal(errors, 3);   /* where each was lost */
    assert_string_equal(got, "S"); /* the task still frozen: nothing ran */
}

/* Migration numbers are each source's own: a newer migration of the task,
 * from its new module, may carry the number of the one this bystander is
 * still holding back for (RESULT ok taken, CONFIRM not yet). That FREEZE
 * is not the older one asked again: the reply must not go ahead of what
 * is held back for the older migration, so it is put off (MT_ERR_FULL),
 * and the held message goes where the older one's CONFIRM says, once. */
static void test_freeze_of_a_newer_migration_with_the_same_number_is_put_off(void **state)
{
    (void) state;
    const uint8_t freeze[5] = {REMOTE, 1, 0, 2, 2}; /* module 0's migration 1: to 2 */
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT);                                          /* the reply */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held back */
    const uint8_t ok[5] = {REMOTE, 1, MT_OK, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    const uint8_t newer[5] = {REMOTE, 1, 2, 0, 2}; /* module 2's migration 1: back to 0 */
    bus_frame_t reply = the_answer_to(2, MIG_MSG_FREEZE, newer, 5);
    assert_int_equal(reply.port, MIG_MSG_REPLY);
    assert_int_equal(reply.dst, 2);
    const uint8_t put_off[3] = {REMOTE, 1, MT_ERR_FULL};
    assert_memory_equal(reply.payload, put_off, 3);
    finish_tx(PORT_BUS_SENT);
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT);
    expect_data(n_sent - 1, 2, 'd');
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 1);
}

/* ---- the destination ---- */

/* FREEZE from module 0 moving REMOTE here; the reply goes out. */
static void freeze_here(uint8_t id)
{
    const uint8_t freeze[5] = {REMOTE, id, 0, SELF, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT);
}

/* The first chunk of migration `id` of REMOTE (program 9, priority 2),
 * with what `img` says beyond that (held messages, state, groups), into
 * chunk (cap bytes); its length. */
static uint16_t first_chunk(mig_image_t img, uint8_t id, uint8_t *chunk, uint16_t cap)
{
    img.pid = REMOTE;
    img.prio = 2;
    img.flags = TASK_MOVABLE;
    img.program = 9;
    img.tick_hz = PORT_TICKS_PER_SECOND;
    const uint8_t head[MIG_CHUNK_HDR] = {REMOTE, id, 0, 0};
    memcpy(chunk, head, sizeof head);
    uint16_t n = mig_image_size(&img);
    assert_int_equal(mig_image_encode(&img, chunk + MIG_CHUNK_HDR, cap - MIG_CHUNK_HDR), n);
    return (uint16_t) (MIG_CHUNK_HDR + n);
}

/* The image of REMOTE (no state) announcing `held` forwarded messages;
 * returns the error ATTACHED answers. */
static mt_err_t image_here(uint8_t id, uint16_t held)
{
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER];
    assert_int_equal(first_chunk((mig_image_t){.held = held}, id, chunk, sizeof chunk),
                     sizeof chunk);
    unsigned before = n_sent;
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk);
    sched_run_pending(); /* the migrator attaches */
    assert_int_equal(n_sent, before + 1);
    bus_frame_t attached = sent_frame(before);
    assert_int_equal(attached.port, MIG_MSG_ATTACHED);
    assert_int_equal(attached.dst, 0);
    finish_tx(PORT_BUS_SENT);
    return (mt_err_t) attached.payload[2];
}

/* A source that gave up (here: out of time) before its decision: the
 * destination drops what it had of the image, half of one or a copy
 * attached from a whole one, on the failed outcome, and what still
 * arrives from that migration (the rest of the image, an END) starts
 * nothing: the task exists on one module only. */
static void test_destination_drops_the_image_of_a_migration_given_up(void **state)
{
    (void) state;
    freeze_here(6);
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER];
    assert_int_equal(first_chunk((mig_image_t){.state_len = 3}, 6, chunk, sizeof chunk),
                     sizeof chunk);
    unsigned before = n_sent;
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk); /* the header; the state is missing */
    sched_run_pending();
    assert_int_equal(n_sent, before); /* no answer for half an image */
    const uint8_t gave_up[5] = {REMOTE, 6, MT_ERR_TIMEOUT, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, gave_up, 5);
    sched_run_pending();
    assert_int_equal(migrate_active(), 0);
    const uint8_t rest[MIG_CHUNK_HDR + 3] = {REMOTE, 6, MIG_IMAGE_HEADER, 0, 'a', 'b', 'c'};
    from_migrator(0, MIG_MSG_STATE, rest, sizeof rest);
    sched_run_pending();
    assert_int_equal(n_sent, before); /* still no ATTACHED: nothing was created */
    assert_false(sched_task_exists(REMOTE));

    freeze_here(7); /* the next try: a whole image, attached, then given up */
    assert_int_equal(image_here(7, 0), MT_OK);
    assert_true(sched_task_exists(REMOTE));
    const uint8_t gave_up_again[5] = {REMOTE, 7, MT_ERR_TIMEOUT, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, gave_up_again, 5);
    sched_run_pending();
    assert_false(sched_task_exists(REMOTE)); /* the copy went */
    assert_int_equal(migrate_active(), 0);
    const uint8_t end[8] = {REMOTE, 7, 0, 0};
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_false(sched_task_exists(REMOTE));
    assert_false(migrate_live(REMOTE));
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0); /* still routed to the source */
}

/* Heap bytes in use now. */
static uint16_t heap_in_use(void)
{
    mem_stats_t m;
    mem_get_stats(&m);
    return m.in_use;
}

/* A task busy while the source gives migration 6 up and freezes again
 * for migration 7: the migrator, the least important task, takes both
 * frames' records in one run once it returns. */
#define BUSY 0x3E
static mt_err_t busy_while_the_source_tries_again(void *st, mt_port_t port, void *data,
                                                  uint16_t len)
{
    (void) st, (void) data, (void) len;
    if (port != PORT_0) return MT_OK;
    const uint8_t gave_up[5] = {REMOTE, 6, MT_ERR_TIMEOUT, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, gave_up, 5);
    const uint8_t again[5] = {REMOTE, 7, 0, SELF, 2};
    from_migrator(0, MIG_MSG_FREEZE, again, 5);
    assert_int_equal(MIG.ring_count, 2); /* not taken yet */
    return MT_OK;
}

/* A migration given up while the destination holds half its image, and
 * the source's next try, its FREEZE taken in the same run of the
 * migrator as the failed outcome, so that the first one's slot is still
 * there, sending what it held back: the second is a migration of its
 * own. It once took over the first one's blocks (its image header
 * leaked, and the half state went to the new copy's PORT_DESERIALIZE as
 * its state). */
static void test_a_new_migration_in_a_slot_still_flushing_starts_clean(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = BUSY, .prio = 2, .handler = busy_while_the_source_tries_again};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(BUSY, NULL, 0), MT_OK);
    sched_run_pending();
    uint16_t before = heap_in_use();
    freeze_here(6);
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER];
    assert_int_equal(first_chunk((mig_image_t){.state_len = 3}, 6, chunk, sizeof chunk),
                     sizeof chunk);
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk); /* header and state blocks taken */
    assert_true(heap_in_use() > before);
    assert_int_equal(sched_send_to(BUSY, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT); /* the reply to the second FREEZE */
    assert_int_equal(migrate_active(), 1);
    assert_int_equal(image_here(7, 0), MT_OK); /* no state: none given */
    assert_true(sched_task_exists(REMOTE));
    assert_string_equal(got, "");
    const uint8_t gave_up_again[5] = {REMOTE, 7, MT_ERR_TIMEOUT, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, gave_up_again, 5);
    sched_run_pending();
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(heap_in_use(), before); /* nothing of either image is left */
}

/* A task on module 0 besides REMOTE, to fill the bus queue with. */
#define FILLER 0x31

/* Module 0's migration 1 moves REMOTE to module 2, confirmed; the bus
 * queue full, this module's slot still holds 'd' back, flushing: the
 * slot. */
static slot_t *flushing_for_want_of_room(void)
{
    assert_int_equal(sched_task_create_remote(FILLER, 2, 0), MT_OK);
    const uint8_t freeze[5] = {REMOTE, 1, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT);                                          /* the reply */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held back */
    for (unsigned i = 0; i < MOTET_BUS_TX_QUEUE; i++)
        assert_int_equal(sched_send_to(FILLER, PORT_0, "q", 1, 0), MT_OK);
    const uint8_t ok[5] = {REMOTE, 1, MT_OK, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    slot_t *s = mig_slot_of(REMOTE);
    assert_non_null(s);
    assert_int_equal(s->step, ST_FLUSHING);
    assert_non_null(s->out); /* 'd' waits for room */
    return s;
}

/* White box: a slot still sending what it held back for an earlier
 * migration (the bus queue full), taken over by a newer one of its task,
 * keeps that line and nothing else. Whatever an earlier destination or
 * source may have left in it (an image's blocks and layout program, a
 * refusal, the end of the image, the groups joined, END, cuts, a source's
 * lists, blocks set aside) is freed or zeroed, as in a new slot: kept, the
 * newer image would be decoded with the older program, the older state
 * handed to the new copy, the older refusal or end taken for the newer
 * image's, and blocks lost. */
static void test_a_slot_taken_over_keeps_only_the_line_it_holds(void **state)
{
    (void) state;
    slot_t *s = flushing_for_want_of_room();
    msg_t *line = s->out;
    uint16_t heap_before = heap_in_use();
    uint8_t spare = sched_msg_spare();
    mt_err_t why;
    s->head = mem_alloc(8);
    s->head_len = 8;
    s->state = mem_alloc(8);
    s->state_len = 8;
    s->decoding = &programs[0];
    s->err = MT_ERR_NO_PROGRAM;
    s->rx_done = s->joined = s->end_seen = true;
    s->cut_seen = s->cut_raised = 0x5;
    s->offset = s->fwd_count = s->fwd_kept = 3;
    s->age = 7;
    s->fwd = sched_mig_msg(REMOTE, PORT_0, "f", 1, &why);
    s->casts = sched_mig_msg(REMOTE, PORT_0, "c", 1, &why);
    s->reserved = sched_mig_msg(REMOTE, PORT_0, "r", 1, &why);
    assert_true(s->head && s->state && s->fwd && s->casts && s->reserved);
    const uint8_t newer[5] = {REMOTE, 5, 2, 0, 2}; /* module 2's migration 5: back to 0 */
    from_migrator(2, MIG_MSG_FREEZE, newer, 5);
    sched_run_pending();
    assert_ptr_equal(mig_slot_of(REMOTE), s);
    assert_int_equal(s->id, 5);
    assert_int_equal(s->source, 2);
    assert_int_equal(s->step, ST_HOLDING);
    assert_ptr_equal(s->out, line);
    assert_null(s->head);
    assert_null(s->state);
    assert_null(s->decoding);
    assert_int_equal(s->head_len + s->state_len + s->offset + s->fwd_count + s->fwd_kept, 0);
    assert_int_equal(s->err, MT_OK);
    assert_false(s->rx_done || s->joined || s->end_seen);
    assert_int_equal(s->cut_seen | s->cut_raised | s->age, 0);
    assert_true(!s->fwd && !s->casts && !s->reserved);
    assert_int_equal(heap_in_use(), heap_before);
    assert_int_equal(sched_msg_spare(), spare);
    assert_int_equal(bus_stats()->rx_bad, 0);
}

/* A bystander whose source was unreachable (its PING came back so) gave
 * up: its line of messages held back goes to the source, in order, the
 * bus queue letting one through at a time. A RESULT ok then (re-sent by a
 * source that was only slow) and its CONFIRM leave that line alone: once
 * they moved the slot on, the rest of the line went to the destination,
 * the first of it to the source, out of order for the task. */
static void test_a_bystander_flushing_to_its_source_keeps_its_line_whole(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(FILLER, 2, 0), MT_OK);
    bystander_waits();
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "a", 1, 0), MT_OK); /* held back */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "b", 1, 0), MT_OK);
    bystander_asks_its_source(1);
    for (unsigned i = 0; i + 2u < MOTET_BUS_TX_QUEUE; i++) /* behind the PING, little room */
        assert_int_equal(sched_send_to(FILLER, PORT_0, "q", 1, 0), MT_OK);
    finish_tx(PORT_BUS_UNREACHABLE); /* the PING: the source is gone */
    sched_run_pending();
    assert_int_equal(mig_slot_of(REMOTE)->step, ST_FLUSHING);
    finish_tx(PORT_BUS_SENT); /* a filler: room for 'a' alone */
    sched_run_pending();
    const uint8_t ok[5] = {REMOTE, 4, MT_OK, 0, 2};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "c", 1, 0), MT_OK); /* joins the line */
    const uint8_t confirm[4] = {REMOTE, 4, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    for (unsigned guard = 0; (bus_tx_pending() || migrate_active()) && guard < 32; guard++) {
        finish_tx(PORT_BUS_SENT);
        sched_run_pending();
    }
    assert_int_equal(migrate_active(), 0);
    char line[4] = {0};
    unsigned n = 0;
    for (unsigned i = 0; i < n_sent; i++) {
        bus_frame_t f = sent_frame(i);
        if (f.type != BUS_FRAME_DATA || f.pid != REMOTE) continue;
        assert_int_equal(f.dst, 0); /* all of it to the source, which passes it on */
        assert_true(n < 3);
        line[n++] = (char) f.payload[0];
    }
    assert_string_equal(line, "abc");
}

/* A destination that has its copy and RESULT ok but not END (lost with
 * the record it made) asks its source after MOTET_MIGRATE_TIMEOUT_MS,
 * naming it; `where`, the answer for an outcome the source no longer
 * keeps: the module it routes the task to. */
static void wait_for_end_and_be_told(mt_module_t where)
{
    freeze_here(6);
    assert_int_equal(image_here(6, 0), MT_OK);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "q", 1, 0), MT_OK); /* held by the copy */
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    unsigned before = n_sent;
    for (unsigned ms = 0; n_sent == before && ms < 2u * MOTET_MIGRATE_TIMEOUT_MS; ms++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    assert_true(n_sent > before);
    bus_frame_t ping = sent_frame(before);
    assert_int_equal(ping.port, MIG_MSG_PING);
    assert_int_equal(ping.dst, 0);
    const uint8_t asked[3] = {REMOTE, 6, 0};
    assert_int_equal(ping.len, 3);
    assert_memory_equal(ping.payload, asked, 3);
    finish_tx(PORT_BUS_SENT);
    const uint8_t told[4] = {REMOTE, 6, 0, where};
    from_migrator(0, MIG_MSG_CONFIRM, told, 4);
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

/* A destination attached with a timer of REMOTE's, that never takes
 * RESULT ok: END comes only after an OK decision, so it starts the copy,
 * its timer going on with the time END says passed at the source. */
static void test_destination_that_missed_result_ok_starts_at_end(void **state)
{
    (void) state;
    freeze_here(6);
    mig_image_t img = {.n_timers = 1};
    img.timers[0] = (mig_timer_t){.index = 0, .remaining = 1000, .period = 0};
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER + MIG_TIMER_BYTES];
    assert_int_equal(first_chunk(img, 6, chunk, sizeof chunk), sizeof chunk);
    unsigned before = n_sent;
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk);
    sched_run_pending();
    assert_int_equal(sent_frame(before).port, MIG_MSG_ATTACHED);
    assert_int_equal(sent_frame(before).payload[2], MT_OK);
    finish_tx(PORT_BUS_SENT);
    assert_false(migrate_live(REMOTE));
    const uint8_t end[8] = {REMOTE, 6, 0, 0, 100, 0, 0, 0}; /* nothing forwarded, age 100 */
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_int_equal(migrate_active(), 0);
    uint32_t left = 0;
    assert_true(timer_remaining(REMOTE, 0, &left));
    assert_true(left <= 900 && left > 800); /* 1000 less END's age less the time since */
}

/* The copy attached here, a handler kills it and tries to create a task
 * of its pid: refused (MT_ERR_EXISTS, logged) while the slot holds the
 * pid, so that END cannot start another task as the copy (once it thawed
 * the new one, never initialised, as the migrated task). */
static void test_a_copy_killed_at_the_destination_keeps_its_pid_until_the_end(void **state)
{
    (void) state;
    freeze_here(6);
    assert_int_equal(image_here(6, 0), MT_OK);
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    assert_int_equal(sched_task_kill(REMOTE), MT_OK);
    (void) test_count_logged_errors(MT_ERR_EXISTS); /* the log drained: only this one counts */
    task_spec_t spec = {.pid = REMOTE, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_ERR_EXISTS);
    assert_int_equal(test_count_logged_errors(MT_ERR_EXISTS), 1);
    const uint8_t end[8] = {REMOTE, 6, 0, 0, 0, 0, 0, 0}; /* nothing forwarded */
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(sched_task_create(&spec), MT_OK); /* the migration over: free again */
    task_t *t = sched_find_task(REMOTE);
    assert_int_equal(t->flags & (TASK_FROZEN | TASK_INITIALISED), 0); /* as created */
}

/* The copy killed here before END: END starts nothing and reports no live
 * task (once MIG_LIVE was reported for the dead copy). */
static void test_a_copy_killed_before_end_is_not_reported_live(void **state)
{
    (void) state;
    freeze_here(6);
    assert_int_equal(image_here(6, 0), MT_OK);
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    assert_int_equal(sched_task_kill(REMOTE), MT_OK);
    const uint8_t end[8] = {REMOTE, 6, 0, 0, 0, 0, 0, 0}; /* nothing forwarded */
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_int_equal(lives, 0);
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(migrate_active(), 0);
}

/* A handler at an interrupt's exit kills the copy at the destination the
 * moment its timer is being set again at END. The copy is found, re-armed
 * and thawed in one step: the kill comes after, as for any running task,
 * and takes the timer with it; no timer ever runs for the dead copy (once
 * the copy was looked up, then re-armed with interrupts on: the timer was
 * started for a task already gone, and stopped only after). */
static void test_a_copy_killed_as_its_timers_are_set_again_keeps_no_timer(void **state)
{
    (void) state;
    freeze_here(6);
    mig_image_t img = {.n_timers = 1};
    img.timers[0] = (mig_timer_t){.index = 0, .remaining = 1000, .period = 500};
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER + MIG_TIMER_BYTES];
    assert_int_equal(first_chunk(img, 6, chunk, sizeof chunk), sizeof chunk);
    unsigned before = n_sent;
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk);
    sched_run_pending();
    assert_int_equal(sent_frame(before).payload[2], MT_OK); /* ATTACHED */
    finish_tx(PORT_BUS_SENT);
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    arm_killer(REMOTE, NULL);
    interrupt_at_timer_start = true;
    const uint8_t end[8] = {REMOTE, 6, 0, 0, 100, 0, 0, 0};
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_false(interrupt_at_timer_start); /* the timer was started */
    assert_false(sched_task_exists(REMOTE));
    assert_false(timer_remaining(REMOTE, 0, NULL));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(lives, 1); /* it started, then was killed */
}

/* The source killed the task after the copy attached here: the copy goes,
 * and nothing routes its pid anywhere, so that the pid is free here once
 * the migration ended (once the copy's move out recorded it as living on
 * the source, and a task of it could never be created here again). */
static void test_a_copy_of_a_task_killed_at_its_source_leaves_no_route(void **state)
{
    (void) state;
    freeze_here(6);
    assert_int_equal(image_here(6, 0), MT_OK);
    const uint8_t killed[5] = {REMOTE, 6, MIG_RESULT_KILLED, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, killed, 5);
    sched_run_pending();
    assert_false(sched_task_exists(REMOTE));
    assert_false(sched_mig_remote(REMOTE, NULL, NULL));
    assert_int_equal(migrate_active(), 0);
    task_spec_t spec = {.pid = REMOTE, .prio = 2, .flags = TASK_MOVABLE, .handler = task};
    assert_int_equal(sched_task_create(&spec), MT_OK);
}

/* Routed here: END was through, so the copy starts, with what it held. */
static void test_destination_told_the_task_is_its_own_starts_it(void **state)
{
    (void) state;
    wait_for_end_and_be_told(SELF);
    assert_true(migrate_live(REMOTE));
    assert_int_equal(migrate_active(), 0);
    sched_run_pending();
    assert_string_equal(got, "q");
}

/* Routed elsewhere: the copy goes, what it held follows the task there. */
static void test_destination_told_the_task_is_elsewhere_drops_its_copy(void **state)
{
    (void) state;
    wait_for_end_and_be_told(2);
    assert_false(sched_task_exists(REMOTE));
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 2);
    for (unsigned guard = 0; migrate_active() && guard < 10; guard++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
        if (n_sent && sent_frame(n_sent - 1).pid == REMOTE) finish_tx(PORT_BUS_SENT);
    }
    expect_data(n_sent - 1, 2, 'q');
    assert_int_equal(migrate_active(), 0);
    assert_string_equal(got, "");
}

/* The destination's own senders hold back all but the migrator's reserve:
 * no room for the two messages the source will forward, so the image is
 * refused like one that does not fit (the source then resumes the task)
 * and what was held back here goes to the source, every one. */
static void test_destination_without_room_for_the_forwarded_messages_refuses(void **state)
{
    (void) state;
    freeze_here(4);
    unsigned held = 0;
    while (sched_send_to(REMOTE, PORT_0, "x", 1, 0) == MT_OK) held++;
    assert_true(held > 4);
    assert_int_equal(sched_msg_spare(), MIG_RESERVE);
    assert_int_equal(image_here(4, 2), MT_ERR_QUEUE_FULL);
    assert_false(sched_task_exists(REMOTE)); /* no copy here */
    assert_int_equal(sched_msg_spare(), MIG_RESERVE);
    unsigned first = n_sent;
    const uint8_t failed[5] = {REMOTE, 4, MT_ERR_QUEUE_FULL, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, failed, 5);
    for (unsigned guard = 0; n_sent - first < held && guard < 64; guard++) {
        finish_tx(PORT_BUS_SENT);
        sched_run_pending();
    }
    assert_int_equal(n_sent - first, held);
    assert_int_equal(migrate_active(), 0);
    for (unsigned i = first; i < n_sent; i++) expect_data(i, 0, 'x');
}

/* With room, the blocks are set aside at ATTACHED: the pool then fills up
 * to the reserve with the task's own senders here, and both forwarded
 * messages are still stored, first, and run once END has come. */
static void test_destination_sets_blocks_aside_for_the_forwarded_messages(void **state)
{
    (void) state;
    freeze_here(5);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held back */
    uint8_t spare = sched_msg_spare();
    assert_int_equal(image_here(5, 2), MT_OK);
    assert_int_equal(sched_msg_spare(), spare - 2);
    unsigned later = 0;
    while (sched_send_to(REMOTE, PORT_0, "y", 1, 0) == MT_OK) later++;
    assert_int_equal(sched_msg_spare(), MIG_RESERVE);
    const uint8_t ok[5] = {REMOTE, 5, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    const uint8_t fwd[10] = {REMOTE, 5, PORT_0, 1, 0, 'p', PORT_0, 1, 0, 'q'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    const uint8_t end[8] = {REMOTE, 5, 2, 0}; /* no age */
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0); /* END's count matched */
    char want[64] = "pqd";
    memset(want + 3, 'y', later);
    want[3 + later] = 0;
    assert_string_equal(got, want);
}

/* A forwarded message whose block was set aside at ATTACHED but whose
 * payload finds no heap is lost for want of heap: reported MIG_LOST with
 * MT_ERR_NO_MEM, the error that lost it. It used to be reported with an
 * error guessed afterwards from the pool, MT_ERR_QUEUE_FULL here: the
 * pool was empty (messages waiting for another task) and the set-aside
 * block, given back, left it below the migrator's reserve. */
static void test_destination_reports_a_forwarded_message_lost_for_heap_as_such(void **state)
{
    (void) state;
    freeze_here(5);
    assert_int_equal(image_here(5, 1), MT_OK);
    const uint8_t ok[5] = {REMOTE, 5, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    const mt_pid_t waiting = MT_PID_LAST_APP; /* uninitialised: what is sent to it waits */
    assert_int_equal(sched_task_create(&(task_spec_t){.pid = waiting, .prio = 1, .handler = task}),
                     MT_OK);
    while (sched_send_to(waiting, PORT_0, NULL, 0, 0) == MT_OK) continue;
    assert_int_equal(sched_msg_spare(), 0);
    void **fill = NULL, **block; /* the heap, taken whole: a chain through its blocks */
    while ((block = mem_alloc(sizeof(void *))) != NULL) {
        *block = fill;
        fill = block;
    }
    const uint8_t fwd[5 + MSG_INLINE_BYTES + 3] = {REMOTE, 5, PORT_0, MSG_INLINE_BYTES + 3, 0, 'p'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    sched_run_pending();
    assert_int_equal(lost_from[0], 1);
    assert_int_equal(lost_with, MT_ERR_NO_MEM);
    while (fill) {
        block = *fill;
        mem_free(fill);
        fill = block;
    }
}

/* Migration `id` of REMOTE, a member of GROUP, from module 0 to here,
 * announcing `held` forwarded messages: its copy attached, ATTACHED sent. */
static void attach_in_group(uint8_t id, uint16_t held)
{
    freeze_here(id);
    mig_image_t img = {.held = held, .n_groups = 1, .groups = (const uint8_t[]){GROUP, PORT_0}};
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER + MIG_GROUP_BYTES];
    assert_int_equal(first_chunk(img, id, chunk, sizeof chunk), sizeof chunk);
    from_migrator(0, MIG_MSG_STATE, chunk, sizeof chunk);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT); /* ATTACHED */
}

/* attach_in_group(6, held), then multicast 40 of module 2 ('a') taken
 * before the join (not ours to deliver) and RESULT ok: joined, the cut at
 * 40 on module 2's link. */
static void join_after_a_cast(uint16_t held)
{
    attach_in_group(6, held);
    cast(2, 40, 'a');
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    assert_int_equal(mcast_member_count(GROUP), 1);
}

/* The copy, attached in a group, killed here before the decision is known
 * here: the kill left its groups, and the frame that would have joined
 * them (`joining`: RESULT ok or, that one missed, the first FORWARD) joins
 * nothing, so that no dead pid stays a member for ever; END then reports
 * no live task. */
static void kill_the_copy_then_take(uint8_t joining, const uint8_t *p, uint16_t len)
{
    attach_in_group(6, 1);
    assert_int_equal(mcast_member_count(GROUP), 0);
    assert_int_equal(sched_task_kill(REMOTE), MT_OK);
    from_migrator(0, joining, p, len);
    sched_run_pending();
    assert_int_equal(mcast_member_count(GROUP), 0);
    const uint8_t end[8] = {REMOTE, 6, 1, 0}; /* one forwarded */
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_int_equal(lives, 0);
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(mcast_member_count(GROUP), 0);
}

static void test_a_copy_killed_before_result_ok_joins_no_group(void **state)
{
    (void) state;
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    kill_the_copy_then_take(MIG_MSG_RESULT, ok, 5);
}

static void test_a_copy_killed_before_its_first_forward_joins_no_group(void **state)
{
    (void) state;
    const uint8_t fwd[6] = {REMOTE, 6, PORT_0, 1, 0, 'u'};
    kill_the_copy_then_take(MIG_MSG_FORWARD, fwd, 6);
}

/* As above, the copy having missed RESULT ok and END: told the task is
 * its own, it joins nothing either (join_late()). */
static void test_a_copy_killed_then_told_it_is_its_own_joins_no_group(void **state)
{
    (void) state;
    attach_in_group(6, 0);
    assert_int_equal(sched_task_kill(REMOTE), MT_OK);
    unsigned before = n_sent;
    for (unsigned ms = 0; n_sent == before && ms < 2u * MOTET_MIGRATE_TIMEOUT_MS; ms++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    assert_true(n_sent > before);
    assert_int_equal(sent_frame(before).port, MIG_MSG_PING);
    finish_tx(PORT_BUS_SENT);
    const uint8_t told[4] = {REMOTE, 6, 0, SELF};
    from_migrator(0, MIG_MSG_CONFIRM, told, 4);
    sched_run_pending();
    assert_int_equal(lives, 0);
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(mcast_member_count(GROUP), 0);
}

/* The destination joins the task's groups at the RESULT and notes the
 * last multicast it took from each module before (the cut). Of the
 * forwarded multicasts it keeps those it took before joining, numbered up
 * to the cut, and drops the later ones: it delivered them to the task
 * itself. Each multicast reaches the task once: the one taken before the
 * join from the source's forward, the one taken after from the bus. */
static void test_destination_keeps_the_forwarded_multicasts_it_took_before_joining(void **state)
{
    (void) state;
    join_after_a_cast(3);
    cast(2, 41, 'b'); /* after: delivered to the copy here */
    cast(0, 50, 'c'); /* the source's own link, after the join */
    const uint8_t fwd[18] = {REMOTE,
                             6,
                             PORT_0,
                             1,
                             0,
                             'u', /* held at the source */
                             PORT_0 | MIG_FWD_CAST,
                             1,
                             0,
                             2,
                             40,
                             'a',
                             PORT_0 | MIG_FWD_CAST,
                             1,
                             0,
                             2,
                             41,
                             'b'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    const uint8_t more[8] = {REMOTE, 6, PORT_0 | MIG_FWD_CAST, 1, 0, 0, 50, 'c'};
    from_migrator(0, MIG_MSG_FORWARD, more, sizeof more);
    const uint8_t end[8] = {REMOTE, 6, 4, 0};
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_string_equal(got, "uabc"); /* forwarded and kept first, then its own */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0); /* END's count matched */
}

/* A destination that never took RESULT ok joins the task's groups at the
 * first FORWARD (only an OK decision sends one), noting its cut there: it
 * keeps the forwarded multicast it took before, delivers the one it takes
 * after, and drops that one when the tail, with END, forwards it too.
 * Each reaches the task once, in order. */
static void test_destination_that_missed_result_ok_joins_at_the_first_forward(void **state)
{
    (void) state;
    attach_in_group(6, 2);
    cast(2, 40, 'a'); /* not a member yet: not delivered here */
    assert_int_equal(mcast_member_count(GROUP), 0);
    /* RESULT ok went by without this module. */
    const uint8_t fwd[12] = {REMOTE, 6, PORT_0, 1, 0, 'u', PORT_0 | MIG_FWD_CAST, 1, 0, 2, 40, 'a'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    assert_int_equal(mcast_member_count(GROUP), 1); /* joined at that frame */
    cast(2, 41, 'b');                               /* delivered to the copy here */
    /* END with the tail: the source recorded 'b' too. */
    const uint8_t end[14] = {REMOTE, 6, 3, 0, 0, 0, 0, 0, PORT_0 | MIG_FWD_CAST, 1, 0, 2, 41, 'b'};
    from_migrator(0, MIG_MSG_END, end, sizeof end);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_int_equal(mcast_member_count(GROUP), 1); /* joined once */
    assert_string_equal(got, "uab");
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0); /* END's count matched */
}

/* A destination stopped as RESULT ok came and resumed before the FORWARD:
 * multicasts 41 and 42 of module 2 went by it while it was stopped (the
 * bus skipped it), and it took nothing later from module 2 before joining
 * late at the FORWARD, so they are numbered past its cut (40). They are
 * not its own deliveries: it keeps them, in their frames' place, ahead of
 * 43, which it took after joining, and drops the forwarded 43. It used to
 * drop every one past the cut: 'b' and 'c' never reached the task
 * (docs/migration.md, "Multicasts"). */
static void test_destination_keeps_the_forwarded_multicasts_that_went_by_it(void **state)
{
    (void) state;
    attach_in_group(6, 5);
    cast(2, 40, 'a'); /* taken before joining */
    /* RESULT ok, 41 and 42 went by without this module. */
    const uint8_t fwd[12] = {REMOTE, 6, PORT_0, 1, 0, 'u', PORT_0 | MIG_FWD_CAST, 1, 0, 2, 40, 'a'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    assert_int_equal(mcast_member_count(GROUP), 1); /* joined at that frame, cut at 40 */
    cast(2, 43, 'd');                               /* after the join: the copy's */
    const uint8_t end[26] = {REMOTE,
                             6,
                             5,
                             0,
                             0,
                             0,
                             0,
                             0, /* END with the tail */
                             PORT_0 | MIG_FWD_CAST,
                             1,
                             0,
                             2,
                             41,
                             'b',
                             PORT_0 | MIG_FWD_CAST,
                             1,
                             0,
                             2,
                             42,
                             'c',
                             PORT_0 | MIG_FWD_CAST,
                             1,
                             0,
                             2,
                             43,
                             'd'};
    from_migrator(0, MIG_MSG_END, end, sizeof end);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_string_equal(got, "uabcd");
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0); /* END's count matched */
    cast(2, 44, 'e');                                            /* a member now, as any */
    sched_run_pending();
    assert_string_equal(got, "uabcde");
}

/* The forwarded 41 comes before this module has taken frame 41 (it was
 * rejected here once, and is offered again): the copy keeps the forwarded
 * one and, when the frame comes, does not deliver it again. Until it has,
 * the copy does not start at END: as a member it would take that frame as
 * new. Without it, 42 still starts it (41 went by), and with nothing
 * more, MOTET_MIGRATE_FRAME_MS after END, by when 41 has ended here. */
static void forwarded_ahead_of_its_frame(void)
{
    attach_in_group(6, 2);
    cast(2, 40, 'a');
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    const uint8_t fwd[14] = {REMOTE, 6,   PORT_0 | MIG_FWD_CAST, 1, 0, 2,
                             40,     'a', PORT_0 | MIG_FWD_CAST, 1, 0, 2,
                             41,     'b'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    const uint8_t end[8] = {REMOTE, 6, 2, 0};
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_false(migrate_live(REMOTE)); /* frame 41 may yet come */
    assert_string_equal(got, "");
}

static void test_destination_keeps_a_forwarded_multicast_ahead_of_its_frame(void **state)
{
    (void) state;
    forwarded_ahead_of_its_frame();
    cast(2, 41, 'b'); /* the frame: not delivered again */
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    cast(2, 42, 'c');
    sched_run_pending();
    assert_string_equal(got, "abc");
}

static void test_destination_starts_once_the_frame_of_a_kept_multicast_cannot_come(void **state)
{
    (void) state;
    forwarded_ahead_of_its_frame();
    cast(2, 42, 'c'); /* 41 went by */
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_string_equal(got, "abc");
}

static void test_destination_starts_after_the_frame_time_without_the_frame(void **state)
{
    (void) state;
    forwarded_ahead_of_its_frame();
    unsigned ms = 0;
    for (; !migrate_live(REMOTE) && ms < 4u * MOTET_MIGRATE_FRAME_MS; ms++) {
        tport_busy(TIMER_MS(1));
        sched_run_pending();
    }
    assert_true(migrate_live(REMOTE));
    assert_true(ms >= MOTET_MIGRATE_FRAME_MS - 1u);
    assert_int_equal(migrate_active(), 0);
    assert_string_equal(got, "ab");
}

/* A destination that joined the task's groups at RESULT ok and took a
 * FORWARD, whose source then takes the task back (a frame to it ended
 * unreachable: it was stopped, not dead) and says so with a second
 * RESULT. The copy goes, and of what reached it only what the source
 * lacks goes back there: the message a task here sent to it. Not the
 * forwarded ones, of which the source kept copies, nor the multicast
 * delivered to it after joining, which the source recorded; before,
 * all four went back, and the source handled three twice. */
static void test_destination_taken_back_from_gives_back_only_what_the_source_lacks(void **state)
{
    (void) state;
    join_after_a_cast(2); /* 'a' before the join: the source forwards it */
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held by the copy */
    cast(2, 41, 'b'); /* after: delivered to the copy here, recorded at the source */
    const uint8_t fwd[12] = {REMOTE, 6, PORT_0, 1, 0, 'u', PORT_0 | MIG_FWD_CAST, 1, 0, 2, 40, 'a'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, sizeof fwd);
    unsigned first = n_sent;
    const uint8_t taken_back[5] = {REMOTE, 6, MT_ERR_BUS_DOWN, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, taken_back, 5);
    sched_run_pending();
    for (unsigned ended = first; ended < n_sent; ended++) { /* each frame ends, the next goes */
        finish_tx(PORT_BUS_SENT);
        sched_run_pending();
    }
    assert_int_equal(migrate_active(), 0);
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(mcast_member_count(GROUP), 0);
    assert_int_equal(n_sent - first, 1);
    expect_data(first, 0, 'd');
    assert_string_equal(got, "");
}

/* The source took the task back on a clock (a frame of its that did not
 * end: RESULT MT_ERR_TIMEOUT) after RESULT ok, a FORWARD of the migration
 * still on its way: the copy goes, what it held goes to the source, and
 * the FORWARD and END that come late start nothing and deliver nothing
 * here (no slot names the migration any more); the task lives on one
 * module, the source. */
static void test_destination_taken_back_from_on_a_clock_ignores_a_late_forward(void **state)
{
    (void) state;
    freeze_here(6);
    assert_int_equal(image_here(6, 1), MT_OK);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "d", 1, 0), MT_OK); /* held by the copy */
    const uint8_t ok[5] = {REMOTE, 6, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    sched_run_pending();
    unsigned first = n_sent;
    const uint8_t timeout[5] = {REMOTE, 6, MT_ERR_TIMEOUT, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, timeout, 5);
    sched_run_pending();
    assert_int_equal(done_with, MT_ERR_TIMEOUT);
    const uint8_t fwd[6] = {REMOTE, 6, PORT_0, 1, 0, 'u'};
    from_migrator(0, MIG_MSG_FORWARD, fwd, 6);
    const uint8_t end[8] = {REMOTE, 6, 1, 0, 0, 0, 0, 0};
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    for (unsigned ended = first; ended < n_sent; ended++) {
        finish_tx(PORT_BUS_SENT);
        sched_run_pending();
    }
    assert_int_equal(migrate_active(), 0);
    assert_false(sched_task_exists(REMOTE));
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    assert_int_equal(lives, 0);
    assert_int_equal(n_sent - first, 1); /* 'd' alone, to the source; 'u' nowhere */
    expect_data(first, 0, 'd');
    assert_string_equal(got, "");
    assert_int_equal(bus_stats()->rx_bad, 0);
}

/* ---- frames the protocol never sends ---- */

/* What a dropped frame must leave as it was. */
typedef struct snapshot {
    unsigned sent, phases;
    char got[64];
    uint8_t active, ring, queued, pending;
    uint8_t steps[MOTET_MIGRATE_SLOTS];
    uint16_t heap_in_use;
    bool live_local, live_remote;
    uint32_t rx_bad, rx_frames;
} snapshot_t;

static void snapshot(snapshot_t *s)
{
    s->sent = n_sent;
    s->phases = phases;
    strcpy(s->got, got);
    s->active = migrate_active();
    s->ring = MIG.ring_count;
    s->queued = sched_queued_count();
    s->pending = bus_tx_pending();
    for (unsigned i = 0; i < MOTET_MIGRATE_SLOTS; i++)
        s->steps[i] = MIG.slots[i].role ? MIG.slots[i].step : 0xFFu;
    mem_stats_t m;
    mem_get_stats(&m);
    s->heap_in_use = m.in_use;
    s->live_local = migrate_live(LOCAL);
    s->live_remote = migrate_live(REMOTE);
    s->rx_bad = bus_stats()->rx_bad;
    s->rx_frames = bus_stats()->rx_frames;
}

/* A migrator frame of `kind` from module src arrives intact: it is
 * acknowledged, counted and logged once with its sender, and nothing else
 * happens, now or when the migrator next runs. */
static void expect_dropped(uint8_t type, mt_module_t src, uint8_t kind, const uint8_t *p,
                           uint16_t len)
{
    snapshot_t before, after;
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    snapshot(&before);
    assert_true(offer(type, src, MT_PID_MIGRATOR, kind, p, len));
    sched_run_pending();
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), bad = 0;
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].type != EV_BAD_FRAME) continue;
        assert_int_equal(rec[i].pid, MT_PID_NONE); /* offer()'s sending task */
        assert_int_equal(rec[i].arg, (uint16_t) (src << 8 | type));
        bad++;
    }
    assert_int_equal(bad, 1);
    snapshot(&after);
    assert_int_equal(after.rx_bad, before.rx_bad + 1);
    assert_int_equal(after.rx_frames, before.rx_frames);
    assert_int_equal(after.sent, before.sent);
    assert_int_equal(after.phases, before.phases);
    assert_string_equal(after.got, before.got);
    assert_int_equal(after.active, before.active);
    assert_int_equal(after.ring, before.ring);
    assert_int_equal(after.queued, before.queued);
    assert_int_equal(after.pending, before.pending);
    assert_memory_equal(after.steps, before.steps, sizeof before.steps);
    assert_int_equal(after.heap_in_use, before.heap_in_use);
    assert_int_equal(after.live_local, before.live_local);
    assert_int_equal(after.live_remote, before.live_remote);
}

static void unicast_dropped(mt_module_t src, uint8_t kind, const uint8_t *p, uint16_t len)
{
    expect_dropped(BUS_FRAME_DATA, src, kind, p, len);
}

/* An empty frame of any kind, the migrator's own records and ports below
 * its kinds included: nothing to read, and nothing is read (the ring once
 * copied from its NULL payload and acted on stale bytes). */
static void test_empty_migrator_frames_are_dropped(void **state)
{
    (void) state;
    for (unsigned kind = PORT_INIT; kind <= MIG_REC_COMMITTED + 1u; kind++) {
        unicast_dropped(0, (uint8_t) kind, NULL, 0);
        expect_dropped(BUS_FRAME_MCAST, 2, (uint8_t) kind, NULL, 0);
    }
    assert_true(migrate_live(LOCAL));
}

/* A record's bytes past a short frame are what an earlier record left:
 * a one-byte REQUEST once moved LOCAL to module 0 for module 0, and a
 * one-byte REFUSED reported a refusal with no error. */
static void test_short_migrator_frames_are_dropped(void **state)
{
    (void) state;
    const uint8_t pid[1] = {LOCAL};
    unicast_dropped(0, MIG_MSG_REQUEST, pid, 1);
    unicast_dropped(0, MIG_MSG_REFUSED, pid, 1);
    const uint8_t three[3] = {REMOTE, 1, 0};
    expect_dropped(BUS_FRAME_MCAST, 0, MIG_MSG_FREEZE, three, 3);
    unicast_dropped(0, MIG_MSG_REPLY, three, 2);
    unicast_dropped(0, MIG_MSG_END, three, 3);
    unicast_dropped(0, MIG_MSG_STATE, three, 3);
    unicast_dropped(0, MIG_MSG_FORWARD, three, 1);
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
}

static void test_migrator_frames_with_fields_out_of_range_are_dropped(void **state)
{
    (void) state;
    const uint8_t far[4] = {LOCAL, 9, 0, 1}; /* to module 9: not on the device */
    unicast_dropped(0, MIG_MSG_REQUEST, far, 4);
    const uint8_t no_hop[4] = {LOCAL, 2, 0, 0}; /* a request on the bus has made a hop */
    unicast_dropped(0, MIG_MSG_REQUEST, no_hop, 4);
    const uint8_t not_asked[4] = {LOCAL, 2, 2, 1}; /* first hop, not from its requester */
    unicast_dropped(0, MIG_MSG_REQUEST, not_asked, 4);
    const uint8_t no_pid[4] = {MT_PID_NONE, 2, 0, 1};
    unicast_dropped(0, MIG_MSG_REQUEST, no_pid, 4);
    const uint8_t ok_request[4] = {LOCAL, 2, 0, 1};
    expect_dropped(BUS_FRAME_MCAST, 0, MIG_MSG_REQUEST, ok_request, 4); /* never multicast */
    const uint8_t long_reply[7] = {LOCAL, 1, MT_OK, 0, 0, 0, 0};
    unicast_dropped(0, MIG_MSG_REPLY, long_reply, 7);
    const uint8_t odd_err[3] = {LOCAL, 1, MT_ERR_COUNT};
    unicast_dropped(0, MIG_MSG_REPLY, odd_err, 3);
    unicast_dropped(2, MIG_MSG_ATTACHED, odd_err, 3);
    const uint8_t refused_ok[2] = {LOCAL, MT_OK};
    unicast_dropped(0, MIG_MSG_REFUSED, refused_ok, 2);
    const uint8_t high_prio[5] = {REMOTE, 1, 0, 2, MOTET_PRIO_LEVELS};
    expect_dropped(BUS_FRAME_MCAST, 0, MIG_MSG_FREEZE, high_prio, 5);
    const uint8_t to_itself[5] = {REMOTE, 1, 0, 0, 2};
    expect_dropped(BUS_FRAME_MCAST, 0, MIG_MSG_FREEZE, to_itself, 5);
    const uint8_t result_far[5] = {REMOTE, 1, MT_OK, 0, 9};
    expect_dropped(BUS_FRAME_MCAST, 0, MIG_MSG_RESULT, result_far, 5);
    assert_true(migrate_live(LOCAL));
    assert_int_equal(migrate_active(), 0);
}

/* A REFUSED names only the task: a module takes one only for a task it
 * asked to move by a first hop of its own. Module 0's refusal of a
 * request this module never made, as a host refuses to whatever
 * requester a forwarded hop named, is dropped (before: taken, an error
 * and a MIG_REFUSED logged for a request nobody here made). */
static void test_a_refusal_of_a_request_never_made_here_is_dropped(void **state)
{
    (void) state;
    const uint8_t refused[2] = {REMOTE, MT_ERR_NOT_MOVABLE};
    unicast_dropped(0, MIG_MSG_REFUSED, refused, 2);
    assert_int_equal(refusals, 0);
}

/* Module 0's refusal of a request of ours for `pid`, taken or dropped. */
static void refused_by_0(mt_pid_t pid)
{
    const uint8_t refused[2] = {pid, MT_ERR_NOT_MOVABLE};
    from_migrator(0, MIG_MSG_REFUSED, refused, 2);
    sched_run_pending();
}

/* Module 0's refusal of a request of ours for `pid` that no longer awaits
 * its end (the task's migration ended it, or another refusal did): a late
 * answer, taken, not a bad frame. It is logged as the refusal it is, the
 * REFUSED event naming module 0 and its error, and changes nothing: the
 * observer, told the migration's end, is not told again. */
static void late_refusal_logged(mt_pid_t pid)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    uint32_t bad = bus_stats()->rx_bad;
    unsigned before = refusals;
    refused_by_0(pid);
    assert_int_equal(bus_stats()->rx_bad, bad);
    assert_int_equal(refusals, before);
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), events = 0, errors = 0;
    for (unsigned i = 0; i < n; i++) {
        assert_int_not_equal(rec[i].type, EV_BAD_FRAME);
        events += rec[i].type == EV_MIGRATE && rec[i].pid == pid &&
                  rec[i].arg == (uint16_t) (MIG_REFUSED << 8 | 0);
        errors += rec[i].type == EV_ERROR && rec[i].arg == MT_ERR_NOT_MOVABLE;
    }
    assert_int_equal(events, 1);
    assert_int_equal(errors, 1);
}

/* Our request for REMOTE goes to module 0, its first hop naming this
 * module; module 0's refusal of it is taken once (MIG_REFUSED with its
 * error), and a second one, a request no longer waiting, only logged. */
static void test_the_refusal_of_our_request_is_taken_once(void **state)
{
    (void) state;
    assert_int_equal(migrate_request(REMOTE, 2), MT_OK);
    sched_run_pending();
    bus_frame_t hop = sent_frame(n_sent - 1);
    assert_int_equal(hop.dst, 0);
    assert_int_equal(hop.port, MIG_MSG_REQUEST);
    const uint8_t first_hop[4] = {REMOTE, 2, SELF, 1};
    assert_memory_equal(hop.payload, first_hop, sizeof first_hop);
    finish_tx(PORT_BUS_SENT);
    const uint8_t refused[2] = {REMOTE, MT_ERR_NOT_MOVABLE};
    from_migrator(0, MIG_MSG_REFUSED, refused, 2);
    assert_int_equal(refusals, 1);
    assert_int_equal(refused_with, MT_ERR_NOT_MOVABLE);
    late_refusal_logged(REMOTE);
    assert_int_equal(refusals, 1);
}

/* Our request for `pid` to move to module 2 has left, its first hop
 * sent. */
static void request_sent(mt_pid_t pid)
{
    assert_int_equal(migrate_request(pid, 2), MT_OK);
    sched_run_pending();
    assert_int_equal(sent_frame(n_sent - 1).port, MIG_MSG_REQUEST);
    finish_tx(PORT_BUS_SENT);
}

/* Two requests of ours for one task, both refused by its host: each
 * refusal is taken (before: one entry per task, cleared by the first,
 * so the second was dropped as a bad frame). A third is only logged. */
static void test_two_requests_for_one_task_take_two_refusals(void **state)
{
    (void) state;
    request_sent(REMOTE);
    request_sent(REMOTE);
    uint32_t bad = bus_stats()->rx_bad;
    refused_by_0(REMOTE);
    refused_by_0(REMOTE);
    assert_int_equal(bus_stats()->rx_bad, bad);
    assert_int_equal(refusals, 2);
    late_refusal_logged(REMOTE);
    assert_int_equal(refusals, 2);
}

/* Three requests of ours at once, for three tasks on module 0 (a
 * replan): the refusal of the first is taken (before: only the latest
 * MOTET_MIGRATE_SLOTS were remembered, and it was dropped). */
static void test_a_refusal_is_taken_whatever_requests_came_after_it(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(0x33, 2, 0), MT_OK);
    assert_int_equal(sched_task_create_remote(0x34, 2, 0), MT_OK);
    request_sent(REMOTE);
    request_sent(0x33);
    request_sent(0x34);
    uint32_t bad = bus_stats()->rx_bad;
    refused_by_0(REMOTE);
    assert_int_equal(bus_stats()->rx_bad, bad);
    assert_int_equal(refusals, 1);
}

/* The task's migration ends (its source's CONFIRM: it runs on module
 * 2): every request for it from before has ended with it, so a refusal
 * of one after that is a late answer: logged as the refusal it is, not
 * told to the observer again (once it was dropped as a bad frame and
 * logged as one). A refusal for a task never asked for here still is. */
static void test_the_tasks_migration_ends_the_requests_for_it(void **state)
{
    (void) state;
    request_sent(REMOTE);
    request_sent(REMOTE);
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    assert_int_equal(dones, 1);
    late_refusal_logged(REMOTE);
    assert_int_equal(refusals, 0);
    assert_int_equal(sched_task_create_remote(0x33, 2, 0), MT_OK);
    const uint8_t never_asked[2] = {0x33, MT_ERR_NOT_MOVABLE};
    unicast_dropped(0, MIG_MSG_REFUSED, never_asked, 2);
}

/* At the bound, 255 requests of ours for one task awaiting their end,
 * one more does not leave: refused here, logged (MT_ERR_FULL) and told
 * to our observer, never silently untracked. A refusal frees a place. */
static void test_a_request_past_the_bound_is_refused_here(void **state)
{
    (void) state;
    for (unsigned i = 0; i < UINT8_MAX; i++) {
        n_sent = 0; /* the capture keeps the latest frames only */
        request_sent(REMOTE);
    }
    unsigned frames = n_sent;
    assert_int_equal(migrate_request(REMOTE, 2), MT_OK);
    sched_run_pending();
    assert_int_equal(n_sent, frames); /* nothing left */
    assert_int_equal(refusals, 1);
    assert_int_equal(refused_with, MT_ERR_FULL);
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 1);
    refused_by_0(REMOTE);
    assert_int_equal(refusals, 2);
    request_sent(REMOTE);
}

/* A REFUSED naming no task (MT_PID_NONE, what a free place of the
 * requests awaiting their end holds) is dropped, and never taken. */
static void test_a_refusal_naming_no_task_is_dropped(void **state)
{
    (void) state;
    const uint8_t refused[2] = {MT_PID_NONE, MT_ERR_NOT_MOVABLE};
    unicast_dropped(0, MIG_MSG_REFUSED, refused, 2);
    assert_int_equal(refusals, 0);
}

/* Only a migration's source freezes, decides and confirms it. */
static void test_source_parts_from_another_module_are_dropped(void **state)
{
    (void) state;
    const uint8_t freeze[5] = {REMOTE, 1, 0, 2, 2}; /* says source 0, comes from 2 */
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_FREEZE, freeze, 5);
    const uint8_t result[5] = {REMOTE, 1, MT_OK, 0, 2};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_RESULT, result, 5);
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_CONFIRM, confirm, 4);
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    /* A bystander now: the outcome of the migration from module 0 only. */
    from_migrator(0, MIG_MSG_FREEZE, freeze, 5);
    finish_tx(PORT_BUS_SENT); /* the reply */
    const uint8_t failed[5] = {REMOTE, 1, MT_ERR_NO_MEM, 0, 2};
    const uint8_t forged[5] = {REMOTE, 1, MT_ERR_NO_MEM, 2, 2};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_RESULT, forged, 5);
    assert_int_equal(migrate_active(), 1);
    from_migrator(0, MIG_MSG_RESULT, failed, 5);
    sched_run_pending();
    assert_int_equal(migrate_active(), 0);
}

/* An outcome with no migration here to match it speaks for the task's
 * host alone: module 2 saying it confirmed REMOTE (which lives on module
 * 0) to itself or to us once had every module route REMOTE there, and
 * its RESULT that REMOTE died had them forget REMOTE. From module 0 the
 * same frames are taken. */
static void test_an_outcome_from_a_module_the_task_is_not_on_is_dropped(void **state)
{
    (void) state;
    const uint8_t to_itself[4] = {REMOTE, 1, 2, 2};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_CONFIRM, to_itself, 4);
    const uint8_t to_us[4] = {REMOTE, 1, 2, SELF};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_CONFIRM, to_us, 4);
    const uint8_t died[5] = {REMOTE, 1, MIG_RESULT_KILLED, 2, 2};
    expect_dropped(BUS_FRAME_MCAST, 2, MIG_MSG_RESULT, died, 5);
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "r", 1, 0), MT_OK);
    expect_data(n_sent - 1, 0, 'r');
    finish_tx(PORT_BUS_SENT);
    const uint8_t confirmed[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirmed, 4);
    sched_run_pending();
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 2);
    const uint8_t died_there[5] = {REMOTE, 2, MIG_RESULT_KILLED, 2, 0};
    from_migrator(2, MIG_MSG_RESULT, died_there, 5);
    sched_run_pending();
    assert_false(sched_mig_remote(REMOTE, NULL, NULL));
    assert_int_equal(bus_stats()->rx_bad, 3);
}

/* EV_BAD_FRAME records logged since the last drain from module src's
 * multicasts; the log drained. */
static unsigned bad_casts_logged(mt_module_t src)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), bad = 0;
    for (unsigned i = 0; i < n; i++)
        bad += rec[i].type == EV_BAD_FRAME && rec[i].arg == (uint16_t) (src << 8 | BUS_FRAME_MCAST);
    return bad;
}

/* A FREEZE from module 2 naming itself REMOTE's source, while REMOTE lives
 * on module 0, is dropped when the migrator reads it, logged
 * (EV_BAD_FRAME): no slot, no reply, REMOTE's messages not held. Once, it opened a slot with module
 * 2 as the source, so the CONFIRM or RESULT from module 2 after it went by the slot, never asking
 * where REMOTE lives: module 2 had module 1 route REMOTE to it, or forget it. */
static void test_a_freeze_from_a_module_the_task_is_not_on_is_dropped(void **state)
{
    (void) state;
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    const uint8_t freeze[5] = {REMOTE, 9, 2, 0, 2}; /* module 2: "I am the source" */
    from_migrator(2, MIG_MSG_FREEZE, freeze, 5);
    sched_run_pending();
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(n_sent, 0);              /* no reply */
    assert_int_equal(bus_stats()->rx_bad, 0); /* the bus took it: counted once, in rx_frames */
    assert_int_equal(bad_casts_logged(2), 1);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "r", 1, 0), MT_OK); /* not held */
    assert_int_equal(n_sent, 1);
    expect_data(0, 0, 'r');
    finish_tx(PORT_BUS_SENT);
    const uint8_t confirm[4] = {REMOTE, 9, 2, 2};
    from_migrator(2, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    const uint8_t died[5] = {REMOTE, 9, MIG_RESULT_KILLED, 2, 0};
    from_migrator(2, MIG_MSG_RESULT, died, 5);
    sched_run_pending();
    mt_module_t where;
    assert_true(sched_mig_remote(REMOTE, &where, NULL));
    assert_int_equal(where, 0);
    assert_int_equal(bus_stats()->rx_bad, 2); /* dropped as they came */
    assert_int_equal(bad_casts_logged(2), 2);
    assert_int_equal(n_sent, 1);
}

/* REMOTE now lives on module 2: a FREEZE from module 0, its host no
 * longer, with a new number, is dropped and logged, and the line still
 * flushing stays as it was. It once took the slot over (forget_earlier()),
 * its sender the source that decides. */
static void test_a_forged_freeze_does_not_take_over_a_line_still_flushing(void **state)
{
    (void) state;
    slot_t *s = flushing_for_want_of_room();
    msg_t *line = s->out;
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    const uint8_t forged[5] = {REMOTE, 9, 0, 2, 2};
    from_migrator(0, MIG_MSG_FREEZE, forged, 5);
    sched_run_pending();
    assert_int_equal(bad_casts_logged(0), 1);
    assert_ptr_equal(mig_slot_of(REMOTE), s);
    assert_int_equal(s->id, 1);
    assert_int_equal(s->step, ST_FLUSHING);
    assert_int_equal(s->out_to, 2);
    assert_ptr_equal(s->out, line);
}

/* A task that, on PORT_0, takes module 0's CONFIRM moving REMOTE to
 * module 2 and then module 2's FREEZE of REMOTE: the migrator, below it,
 * reads both only once it has returned. */
#define CONFIRM_THEN_FREEZE 0x3E
static mt_err_t confirm_then_freeze(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st, (void) data, (void) len;
    if (port != PORT_0) return MT_OK;
    const uint8_t confirm[4] = {REMOTE, 1, 0, 2};
    from_migrator(0, MIG_MSG_CONFIRM, confirm, 4);
    const uint8_t freeze[5] = {REMOTE, 5, 2, 0, 2}; /* module 2's migration 5: back to 0 */
    from_migrator(2, MIG_MSG_FREEZE, freeze, 5);
    return MT_OK;
}

/* The FREEZE of the task's new host may reach the migrator behind the
 * CONFIRM that moved the task there, both in the ring: it is taken (a
 * check as the FREEZE arrives, REMOTE still routed to module 0, would
 * refuse this migration), REMOTE's messages are held, and they go to
 * module 0 once module 2 confirms. */
static void
test_a_freeze_behind_the_confirm_that_moved_the_task_to_its_sender_is_taken(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = CONFIRM_THEN_FREEZE, .prio = 3, .handler = confirm_then_freeze};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(CONFIRM_THEN_FREEZE, NULL, 0), MT_OK);
    assert_int_equal(sched_send_to(CONFIRM_THEN_FREEZE, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT);
    assert_int_equal(n_sent, 1);
    bus_frame_t reply = sent_frame(0);
    assert_int_equal(reply.port, MIG_MSG_REPLY);
    assert_int_equal(reply.dst, 2);
    const uint8_t ok[3] = {REMOTE, 5, MT_OK};
    assert_memory_equal(reply.payload, ok, 3);
    assert_int_equal(migrate_active(), 1);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, "h", 1, 0), MT_OK); /* held back */
    assert_int_equal(n_sent, 1);
    const uint8_t result[5] = {REMOTE, 5, MT_OK, 2, 0};
    from_migrator(2, MIG_MSG_RESULT, result, 5);
    const uint8_t confirm[4] = {REMOTE, 5, 2, 0};
    from_migrator(2, MIG_MSG_CONFIRM, confirm, 4);
    sched_run_pending();
    finish_tx(PORT_BUS_SENT);
    expect_data(n_sent - 1, 0, 'h');
    assert_int_equal(migrate_active(), 0);
    assert_int_equal(bus_stats()->rx_bad, 0);
}

/* As the source: ATTACHED counts from the destination only. */
static void test_attached_from_another_module_is_dropped(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    unicast_dropped(0, MIG_MSG_ATTACHED, attached, 3); /* module 0 is no destination */
    assert_int_equal(n_sent, 2);                       /* no RESULT */
    assert_false(migrate_live(LOCAL));
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    bus_frame_t result = sent_frame(2);
    assert_int_equal(result.port, MIG_MSG_RESULT);
    assert_int_equal(result.payload[2], MT_OK);
}

/* The ring's own records never come by bus: a forged 'image received'
 * once had the destination attach an image it never got, and answer. */
static void test_forged_image_received_is_dropped(void **state)
{
    (void) state;
    freeze_here(6);
    const uint8_t received[2] = {REMOTE, 6};
    unicast_dropped(0, MIG_REC_RECEIVED, received, 2);
    assert_false(sched_task_exists(REMOTE));
    assert_int_equal(image_here(6, 0), MT_OK); /* the real image still attaches */
    assert_true(sched_task_exists(REMOTE));
}

/* A forged end of our END once had the source give the task away while
 * END was still on the bus. */
static void test_forged_transmission_end_is_dropped(void **state)
{
    (void) state;
    uint8_t id;
    commit_and_forward(&id);
    const uint8_t tx_end[4] = {MIG_MSG_END, LOCAL, id, PORT_BUS_SENT};
    unicast_dropped(2, MIG_REC_TX_END, tx_end, 4);
    assert_true(sched_task_exists(LOCAL)); /* still here, frozen */
    assert_int_equal(n_sent, 5);           /* no CONFIRM */
    finish_tx(PORT_BUS_SENT);              /* the real end of END */
    assert_false(sched_task_exists(LOCAL));
    assert_int_equal(sent_frame(5).port, MIG_MSG_CONFIRM);
}

/* A forged 'our RESULT went out' once started forwarding before it had. */
static void test_forged_commit_is_dropped(void **state)
{
    (void) state;
    uint8_t id;
    freeze_and_reply(&id);
    finish_tx(PORT_BUS_SENT); /* the chunk */
    const uint8_t attached[3] = {LOCAL, id, MT_OK};
    from_migrator(2, MIG_MSG_ATTACHED, attached, 3);
    assert_int_equal(sent_frame(2).port, MIG_MSG_RESULT); /* on the bus */
    const uint8_t committed[2] = {LOCAL, id};
    unicast_dropped(2, MIG_REC_COMMITTED, committed, 2);
    unicast_dropped(2, MIG_MSG_KICK, committed, 2);
    assert_int_equal(bus_tx_pending(), 1); /* nothing forwarded behind it */
    finish_tx(PORT_BUS_SENT);              /* the RESULT went out */
    bus_frame_t fwd = sent_frame(3);
    assert_int_equal(fwd.port, MIG_MSG_FORWARD);
    assert_int_equal(fwd.payload[2 + MIG_FWD_ENTRY], 'h');
}

/* As the destination: the image, the forwarded messages and END come from
 * the source only, and a FORWARD whose messages do not fill it exactly, or
 * name no input port, is dropped whole. */
static void test_destination_takes_its_source_s_frames_only(void **state)
{
    (void) state;
    freeze_here(5);
    mig_image_t img = {.pid = REMOTE,
                       .prio = 2,
                       .flags = TASK_MOVABLE,
                       .program = 9,
                       .tick_hz = PORT_TICKS_PER_SECOND};
    uint8_t chunk[MIG_CHUNK_HDR + MIG_IMAGE_HEADER] = {REMOTE, 5, 0, 0};
    mig_image_encode(&img, chunk + MIG_CHUNK_HDR, MIG_IMAGE_HEADER);
    unicast_dropped(2, MIG_MSG_STATE, chunk, sizeof chunk);
    assert_int_equal(image_here(5, 0), MT_OK);
    const uint8_t ok[5] = {REMOTE, 5, MT_OK, 0, SELF};
    from_migrator(0, MIG_MSG_RESULT, ok, 5);
    const uint8_t no_port[6] = {REMOTE, 5, PORT_LIMIT, 1, 0, 'z'};
    unicast_dropped(0, MIG_MSG_FORWARD, no_port, 6);
    const uint8_t cut[6] = {REMOTE, 5, PORT_0, 2, 0, 'z'};
    unicast_dropped(0, MIG_MSG_FORWARD, cut, 6);
    const uint8_t trailing[8] = {REMOTE, 5, PORT_0, 1, 0, 'z', PORT_0, 1};
    unicast_dropped(0, MIG_MSG_FORWARD, trailing, 8);
    const uint8_t fwd[6] = {REMOTE, 5, PORT_0, 1, 0, 'p'};
    unicast_dropped(2, MIG_MSG_FORWARD, fwd, 6);
    const uint8_t end[8] = {REMOTE, 5, 1, 0};
    unicast_dropped(2, MIG_MSG_END, end, 8);
    const uint8_t abort[2] = {REMOTE, 5};
    unicast_dropped(2, MIG_MSG_ABORT, abort, 2);
    assert_false(migrate_live(REMOTE));
    from_migrator(0, MIG_MSG_FORWARD, fwd, 6);
    from_migrator(0, MIG_MSG_END, end, 8);
    sched_run_pending();
    assert_true(migrate_live(REMOTE));
    assert_string_equal(got, "p"); /* no 'z' */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_reply_goes_behind_queued_messages_later_ones_are_held, setup),
        cmocka_unit_test_setup(test_a_tasks_or_an_interrupts_tick_to_the_migrator_is_refused,
                               setup),
        cmocka_unit_test_setup(test_an_interrupts_tick_waiting_with_the_owed_one_is_taken_once,
                               setup),
        cmocka_unit_test_setup(test_an_interrupts_tick_after_the_migration_is_refused, setup),
        cmocka_unit_test_setup(test_the_first_tick_needs_no_free_timer_block, setup),
        cmocka_unit_test_setup(test_the_tick_survives_an_empty_timer_pool, setup),
        cmocka_unit_test_setup(test_a_counted_timer_has_a_block_of_its_own, setup),
        cmocka_unit_test_setup(test_a_counted_timers_block_is_never_retired, setup),
        cmocka_unit_test_setup(test_failed_migration_releases_to_the_source, setup),
        cmocka_unit_test_setup(test_requests_that_are_refused_at_once, setup),
        cmocka_unit_test_setup(test_a_state_in_another_tasks_block_is_refused, setup),
        cmocka_unit_test_setup(test_out_of_heap_for_the_routes_refuses_and_the_task_runs_on, setup),
        cmocka_unit_test_setup(test_out_of_heap_for_the_header_refuses_and_the_task_runs_on, setup),
        cmocka_unit_test_setup(test_out_of_heap_for_a_remote_request_tells_its_requester, setup),
        cmocka_unit_test_setup(test_a_task_replaced_after_serialise_is_not_migrated_nor_resumed,
                               setup),
        cmocka_unit_test_setup(test_unreachable_destination_leaves_the_task_here, setup),
        cmocka_unit_test_setup(test_source_abandons_a_transfer_that_does_not_end_in_time, setup),
        cmocka_unit_test_setup(test_a_migration_put_off_for_a_module_without_a_slot_goes_later,
                               setup),
        cmocka_unit_test_setup(test_a_migration_put_off_too_often_is_refused_and_the_task_stays,
                               setup),
        cmocka_unit_test_setup(test_a_newer_request_overtakes_one_put_off, setup),
        cmocka_unit_test_setup(test_a_request_put_off_dies_with_its_task, setup),
        cmocka_unit_test_setup(test_a_bystander_without_a_slot_answers_full, setup),
        cmocka_unit_test_setup(test_second_outcome_releases_to_the_source, setup),
        cmocka_unit_test_setup(test_freeze_of_a_newer_migration_with_the_same_number_is_put_off,
                               setup),
        cmocka_unit_test_setup(test_success_moves_the_task_once_end_is_through, setup),
        cmocka_unit_test_setup(test_a_result_ok_that_never_goes_out_has_the_task_taken_back, setup),
        cmocka_unit_test_setup(test_a_forward_that_never_ends_has_the_task_taken_back, setup),
        cmocka_unit_test_setup(test_frames_ending_ahead_of_a_forward_keep_the_migration_going,
                               setup),
        cmocka_unit_test_setup(test_a_result_ok_sent_again_commits_when_the_first_was_given_up,
                               setup),
        cmocka_unit_test_setup(test_result_ok_is_sent_again_once_a_round, setup),
        cmocka_unit_test_setup(test_result_ok_given_up_again_and_again_is_no_progress, setup),
        cmocka_unit_test_setup(test_end_still_in_the_send_queue_is_taken_out_and_the_task_back,
                               setup),
        cmocka_unit_test_setup(test_end_on_the_bus_is_waited_for_however_long, setup),
        cmocka_unit_test_setup(test_end_unreachable_takes_the_task_back, setup),
        cmocka_unit_test_setup(
            test_source_records_multicasts_from_the_freeze_and_forwards_their_frames, setup),
        cmocka_unit_test_setup(
            test_source_forwards_the_multicasts_recorded_since_the_commit_before_end, setup),
        cmocka_unit_test_setup(test_a_task_killed_before_a_failure_keeps_its_pid_until_the_end,
                               setup),
        cmocka_unit_test_setup(
            test_a_task_killed_before_a_put_off_keeps_its_pid_and_is_not_asked_again, setup),
        cmocka_unit_test_setup(test_a_task_killed_before_the_image_is_counted_as_holding_nothing,
                               setup),
        cmocka_unit_test_setup(test_a_task_killed_before_attached_is_not_decided, setup),
        cmocka_unit_test_setup(test_a_task_killed_before_the_commit_runs_on_at_the_destination,
                               setup),
        cmocka_unit_test_setup(test_a_task_killed_before_end_is_through_runs_on_at_the_destination,
                               setup),
        cmocka_unit_test_setup(test_a_task_killed_before_end_fails_ends_as_killed, setup),
        cmocka_unit_test_setup(
            test_a_task_killed_while_a_layout_chunk_is_encoded_sends_only_its_own_state, setup),
        cmocka_unit_test_setup(test_a_copy_killed_as_its_timers_are_set_again_keeps_no_timer,
                               setup),
        cmocka_unit_test_setup(test_a_task_killed_between_layout_chunks_sends_no_other_state,
                               setup),
        cmocka_unit_test_setup(test_a_task_that_cannot_resume_is_killed, setup),
        cmocka_unit_test_setup(
            test_a_task_with_no_remote_block_left_is_killed_and_its_messages_follow, setup),
        cmocka_unit_test_setup(test_frozen_task_at_the_reserve_refuses_and_answers_busy, setup),
        cmocka_unit_test_setup(test_source_reports_each_multicast_it_has_no_block_for, setup),
        cmocka_unit_test_setup(test_destination_refusing_for_lack_of_blocks_leaves_the_task_here,
                               setup),
        cmocka_unit_test_setup(test_destination_without_room_for_the_forwarded_messages_refuses,
                               setup),
        cmocka_unit_test_setup(test_destination_drops_the_image_of_a_migration_given_up, setup),
        cmocka_unit_test_setup(test_a_new_migration_in_a_slot_still_flushing_starts_clean, setup),
        cmocka_unit_test_setup(test_a_slot_taken_over_keeps_only_the_line_it_holds, setup),
        cmocka_unit_test_setup(test_a_bystander_flushing_to_its_source_keeps_its_line_whole, setup),
        cmocka_unit_test_setup(test_a_forged_freeze_does_not_take_over_a_line_still_flushing,
                               setup),
        cmocka_unit_test_setup(
            test_source_answers_for_an_outcome_it_no_longer_keeps_where_the_task_is, setup),
        cmocka_unit_test_setup(
            test_source_answers_for_an_outcome_it_no_longer_keeps_where_it_routes_the_task, setup),
        cmocka_unit_test_setup(test_destination_that_missed_result_ok_starts_at_end, setup),
        cmocka_unit_test_setup(test_a_copy_killed_at_the_destination_keeps_its_pid_until_the_end,
                               setup),
        cmocka_unit_test_setup(test_destination_told_the_task_is_its_own_starts_it, setup),
        cmocka_unit_test_setup(test_destination_told_the_task_is_elsewhere_drops_its_copy, setup),
        cmocka_unit_test_setup(test_destination_sets_blocks_aside_for_the_forwarded_messages,
                               setup),
        cmocka_unit_test_setup(test_destination_reports_a_forwarded_message_lost_for_heap_as_such,
                               setup),
        cmocka_unit_test_setup(
            test_destination_keeps_the_forwarded_multicasts_it_took_before_joining, setup),
        cmocka_unit_test_setup(test_destination_keeps_the_forwarded_multicasts_that_went_by_it,
                               setup),
        cmocka_unit_test_setup(test_destination_keeps_a_forwarded_multicast_ahead_of_its_frame,
                               setup),
        cmocka_unit_test_setup(
            test_destination_starts_once_the_frame_of_a_kept_multicast_cannot_come, setup),
        cmocka_unit_test_setup(test_destination_starts_after_the_frame_time_without_the_frame,
                               setup),
        cmocka_unit_test_setup(test_destination_that_missed_result_ok_joins_at_the_first_forward,
                               setup),
        cmocka_unit_test_setup(
            test_destination_taken_back_from_gives_back_only_what_the_source_lacks, setup),
        cmocka_unit_test_setup(test_destination_taken_back_from_on_a_clock_ignores_a_late_forward,
                               setup),
        cmocka_unit_test_setup(test_empty_migrator_frames_are_dropped, setup),
        cmocka_unit_test_setup(test_short_migrator_frames_are_dropped, setup),
        cmocka_unit_test_setup(test_migrator_frames_with_fields_out_of_range_are_dropped, setup),
        cmocka_unit_test_setup(test_a_refusal_of_a_request_never_made_here_is_dropped, setup),
        cmocka_unit_test_setup(test_the_refusal_of_our_request_is_taken_once, setup),
        cmocka_unit_test_setup(test_two_requests_for_one_task_take_two_refusals, setup),
        cmocka_unit_test_setup(test_a_refusal_is_taken_whatever_requests_came_after_it, setup),
        cmocka_unit_test_setup(test_the_tasks_migration_ends_the_requests_for_it, setup),
        cmocka_unit_test_setup(test_a_request_past_the_bound_is_refused_here, setup),
        cmocka_unit_test_setup(test_a_refusal_naming_no_task_is_dropped, setup),
        cmocka_unit_test_setup(test_source_parts_from_another_module_are_dropped, setup),
        cmocka_unit_test_setup(test_attached_from_another_module_is_dropped, setup),
        cmocka_unit_test_setup(test_an_outcome_from_a_module_the_task_is_not_on_is_dropped, setup),
        cmocka_unit_test_setup(test_a_freeze_from_a_module_the_task_is_not_on_is_dropped, setup),
        cmocka_unit_test_setup(
            test_a_freeze_behind_the_confirm_that_moved_the_task_to_its_sender_is_taken, setup),
        cmocka_unit_test_setup(test_forged_image_received_is_dropped, setup),
        cmocka_unit_test_setup(test_forged_transmission_end_is_dropped, setup),
        cmocka_unit_test_setup(test_forged_commit_is_dropped, setup),
        cmocka_unit_test_setup(test_destination_takes_its_source_s_frames_only, setup),
        cmocka_unit_test_setup(
            test_a_task_killed_at_the_freeze_leaves_a_new_task_of_no_program_alone, setup),
        cmocka_unit_test_setup(
            test_a_task_killed_at_the_freeze_leaves_a_new_task_of_a_program_alone, setup),
        cmocka_unit_test_setup(test_a_task_killed_after_the_decision_takes_no_remote_record, setup),
        cmocka_unit_test_setup(test_a_copy_killed_before_end_is_not_reported_live, setup),
        cmocka_unit_test_setup(test_a_copy_killed_before_result_ok_joins_no_group, setup),
        cmocka_unit_test_setup(test_a_copy_killed_before_its_first_forward_joins_no_group, setup),
        cmocka_unit_test_setup(test_a_copy_killed_then_told_it_is_its_own_joins_no_group, setup),
        cmocka_unit_test_setup(test_a_copy_of_a_task_killed_at_its_source_leaves_no_route, setup),
    };
    return cmocka_run_group_tests_name("task migrator", tests, NULL, NULL);
}
