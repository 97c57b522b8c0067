/* SPDX-License-Identifier: MIT */
/*
 * The application manager: relative ids mapped to device ids, two-stage
 * creation (every task exists before any is initialised), local multicast
 * membership, and all-or-nothing behaviour when a description is bad, a
 * task is placed on a module the device does not have or names a program
 * not registered, or resources run out (the message blocks stage two's
 * INITs need among them: set aside at stage one). Without a bus started the device is
 * this module alone; remote control blocks and the device-wide verdict are
 * test_native_bus's.
 */
#include <string.h>

#include "appdesc.h"
#include "bus_internal.h"
#include "sched_internal.h"
#include "test_support.h"

/* ---- a small description builder (format: appdesc.h) ---- */

typedef struct {
    uint8_t buf[256];
    uint16_t data; /* next free byte of the data region */
    uint8_t tasks, groups;
} builder_t;

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static void begin(builder_t *b, uint8_t tasks, uint8_t groups)
{
    memset(b, 0, sizeof *b);
    memcpy(b->buf, APPDESC_MAGIC, 4);
    b->buf[4] = APPDESC_VERSION;
    b->buf[5] = tasks;
    b->buf[6] = groups;
    b->data =
        (uint16_t) (APPDESC_HEADER_SIZE + tasks * APPDESC_TASK_SIZE + groups * APPDESC_GROUP_SIZE);
}

static uint16_t add_data(builder_t *b, const uint8_t *bytes, uint16_t n)
{
    uint16_t off = b->data;
    memcpy(&b->buf[off], bytes, n);
    b->data = (uint16_t) (b->data + n);
    return off;
}

/* routes: n pairs (dst, port) */
static void add_task(builder_t *b, uint8_t prog, uint8_t prio, uint8_t module,
                     const uint8_t *routes, uint8_t n_routes, const uint8_t *init,
                     uint16_t init_len)
{
    uint8_t *t = &b->buf[APPDESC_HEADER_SIZE + b->tasks * APPDESC_TASK_SIZE];
    t[0] = prog;
    t[1] = b->tasks++;
    t[2] = prio;
    t[3] = 0;
    t[4] = module;
    t[5] = n_routes;
    if (n_routes) put16(&t[6], add_data(b, routes, (uint16_t) (n_routes * 2)));
    if (init_len) {
        put16(&t[8], add_data(b, init, init_len));
        put16(&t[10], init_len);
    }
}

static void add_group(builder_t *b, const uint8_t *members, uint8_t n)
{
    uint8_t *g = &b->buf[APPDESC_HEADER_SIZE + b->buf[5] * APPDESC_TASK_SIZE +
                         b->groups * APPDESC_GROUP_SIZE];
    g[0] = b->groups++;
    g[1] = n;
    put16(&g[2], add_data(b, members, (uint16_t) (n * 2)));
}

static uint16_t finish(builder_t *b)
{
    put16(&b->buf[8], b->data);
    put16(&b->buf[10], 0);
    put16(&b->buf[10], appdesc_crc16(b->buf, b->data));
    return b->data;
}

/* ---- programs that record what happens to them ---- */

static char events[128];

static void note(char what)
{
    size_t n = strlen(events);
    events[n] = what;
    events[n + 1] = 0;
}

static mt_err_t prog_a(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) {
        note('I');
        /* Every task of the application exists before any initialises. */
        assert_true(sched_task_exists(appmgr_last_result()->pid_base + 1));
        if (len) note((char) ((const uint8_t *) data)[0]);
        return sched_send(0, NULL, 0, 0);
    }
    note('a');
    return MT_OK;
}

static mt_err_t prog_b(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    note(port == PORT_INIT ? 'J' : 'b');
    return MT_OK;
}

/* Notes its relative id and its init string. */
static mt_err_t prog_c(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    note((char) ('0' + sched_current_pid() - appmgr_last_result()->pid_base));
    size_t n = strlen(events);
    assert_true(n + len < sizeof events);
    if (len) memcpy(&events[n], data, len); /* a task without an init string gets none */
    events[n + len] = 0;
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 1, .name = "a", .handler = prog_a, .state_size = 4},
    {.id = 2, .name = "b", .handler = prog_b, .state_size = 0},
    {.id = 3, .name = "c", .handler = prog_c, .state_size = 0},
};

static int setup(void **state)
{
    test_boot(state);
    program_register(programs, 3);
    events[0] = 0;
    return 0;
}

/* a (rel 0) routes its port 0 to group 0, whose member is b (rel 1) PORT_0 */
static uint16_t two_task_app(builder_t *b, uint8_t b_module)
{
    begin(b, 2, 1);
    const uint8_t a_routes[] = {MT_PID_MULTICAST, 0};
    const uint8_t init[] = {'x'};
    add_task(b, 1, 1, 0, a_routes, 1, init, 1);
    add_task(b, 2, 2, b_module, NULL, 0, NULL, 0);
    const uint8_t members[] = {1, PORT_0};
    add_group(b, members, 1);
    return finish(b);
}

static void test_load_creates_maps_and_initialises_in_two_stages(void **state)
{
    (void) state;
    builder_t b;
    uint16_t len = two_task_app(&b, 0);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    const appmgr_result_t *r = appmgr_last_result();
    assert_int_equal(r->err, MT_OK);
    assert_int_equal(r->created, 2);
    assert_int_equal(r->pid_base, MT_PID_FIRST_APP);
    assert_true(sched_task_exists(MT_PID_FIRST_APP));
    assert_true(sched_task_exists(MT_PID_FIRST_APP + 1));
    assert_int_equal(mcast_member_count(r->group_base), 1);
    /* b (prio 2) initialises first; a's init string 'x' arrives; a's
     * multicast then reaches b. */
    assert_string_equal(events, "JIxb");
}

static void test_second_load_gets_fresh_ids(void **state)
{
    (void) state;
    builder_t b;
    uint16_t len = two_task_app(&b, 0);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    const appmgr_result_t *r = appmgr_last_result();
    assert_int_equal(r->err, MT_OK);
    assert_int_equal(r->pid_base, MT_PID_FIRST_APP + 2);
    assert_int_equal(r->group_base, 1);
    assert_true(sched_task_exists(MT_PID_FIRST_APP + 3));
}

/* The manager's ports past PORT_0 are the bus's: a description there
 * from an application's interrupt (sched_post_isr(): no sender, as the
 * bus's posts had) is refused (MT_ERR_NO_PORT, logged), and no multicast
 * can bring one, as the manager cannot join a group (mcast_join() takes
 * application tasks only: MT_ERR_INVALID, logged); nothing is loaded, the
 * record untouched (before: each was loaded as a description the bus had
 * brought). */
static void test_an_interrupts_or_a_multicasts_description_on_the_bus_port_is_refused(void **state)
{
    (void) state;
    builder_t b;
    uint16_t len = two_task_app(&b, 0);
    appmgr_result_t before = *appmgr_last_result();
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_post_isr(MT_PID_APPMGR, BUS_APPMGR_PORT_DESC, b.buf, len, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_int_equal(mcast_join(7, MT_PID_APPMGR, BUS_APPMGR_PORT_DESC), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_int_equal(mcast_member_count(7), 0);
    assert_false(sched_task_exists(MT_PID_FIRST_APP));
    assert_memory_equal(appmgr_last_result(), &before, sizeof before);
    assert_string_equal(events, "");
}

/* The one EV_APPFAIL record among the undrained ones (drains the log):
 * its task (pid) and its argument (error << 8 | module). */
static void expect_appfail(uint8_t task, mt_err_t err, mt_module_t module)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned found = 0, errors = 0;
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].type == EV_ERROR && rec[i].arg == (uint16_t) err) errors++;
        if (rec[i].type != EV_APPFAIL) continue;
        found++;
        assert_int_equal(rec[i].pid, task);
        assert_int_equal(rec[i].arg, (uint16_t) (err << 8 | module));
    }
    assert_int_equal(found, 1);
    assert_int_equal(errors, 1);
}

static void test_task_on_a_module_the_device_lacks_fails_the_load(void **state)
{
    const mt_module_t missing[] = {MOTET_MODULE_ID + 1, MOTET_BUS_MODULES, 0xFF};
    for (unsigned k = 0; k < sizeof missing; k++) {
        setup(state);
        builder_t b;
        uint16_t len = two_task_app(&b, missing[k]);
        test_count_logged_errors(MT_OK);                  /* drain */
        assert_int_equal(appmgr_load(b.buf, len), MT_OK); /* the message was delivered */
        const appmgr_result_t *r = appmgr_last_result();
        assert_int_equal(r->err, MT_ERR_NO_MODULE);
        assert_int_equal(r->bad_task, 1);
        assert_int_equal(r->bad_module, missing[k]);
        assert_int_equal(r->created, 0);
        expect_appfail(1, MT_ERR_NO_MODULE, missing[k]);
        /* Nothing was created, here or as a remote block (a send to one
         * would fail as unroutable, not as addressed to no task). */
        assert_false(sched_task_exists(MT_PID_FIRST_APP));
        assert_int_equal(sched_send_to(MT_PID_FIRST_APP + 1, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
        assert_int_equal(mcast_member_count(0), 0);
        assert_string_equal(events, "");
        /* The pids were not consumed. */
        uint16_t good = two_task_app(&b, MOTET_MODULE_ID);
        assert_int_equal(appmgr_load(b.buf, good), MT_OK);
        assert_int_equal(appmgr_last_result()->err, MT_OK);
        assert_int_equal(appmgr_last_result()->bad_task, APPMGR_NO_TASK);
        assert_int_equal(appmgr_last_result()->pid_base, MT_PID_FIRST_APP);
    }
}

static void test_malformed_description_creates_nothing(void **state)
{
    (void) state;
    builder_t b;
    uint16_t len = two_task_app(&b, 0);
    b.buf[APPDESC_HEADER_SIZE + APPDESC_TASK_SIZE + 2] = MOTET_PRIO_LEVELS; /* b's prio */
    put16(&b.buf[10], 0);
    put16(&b.buf[10], appdesc_crc16(b.buf, len));
    test_count_logged_errors(MT_OK);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK); /* the message was delivered */
    const appmgr_result_t *r = appmgr_last_result();
    assert_int_equal(r->err, MT_ERR_DESC_TASK);
    assert_int_equal(r->bad_offset, APPDESC_HEADER_SIZE + APPDESC_TASK_SIZE + 2);
    assert_false(sched_task_exists(MT_PID_FIRST_APP));
    assert_int_equal(test_count_logged_errors(MT_ERR_DESC_TASK), 1);
    assert_string_equal(events, "");
}

static void test_unknown_program_creates_nothing(void **state)
{
    (void) state;
    builder_t b;
    begin(&b, 2, 0);
    add_task(&b, 1, 1, 0, NULL, 0, NULL, 0);
    add_task(&b, 9, 1, 0, NULL, 0, NULL, 0);
    uint16_t len = finish(&b);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_ERR_NO_PROGRAM);
    assert_int_equal(appmgr_last_result()->bad_task, 1);
    assert_int_equal(appmgr_last_result()->bad_module, MOTET_MODULE_ID);
    expect_appfail(1, MT_ERR_NO_PROGRAM, MOTET_MODULE_ID);
    assert_false(sched_task_exists(MT_PID_FIRST_APP));
}

static void test_resource_exhaustion_mid_creation_rolls_back(void **state)
{
    (void) state;
    builder_t b;
    uint8_t n = MOTET_MAX_TASKS; /* one more than the slab has left */
    begin(&b, n, 0);
    for (uint8_t i = 0; i < n; i++) add_task(&b, 2, 1, 0, NULL, 0, NULL, 0);
    uint16_t len = finish(&b);
    mem_stats_t before, after;
    mem_get_stats(&before);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_ERR_NO_SLAB);
    for (uint8_t i = 0; i < n; i++) assert_false(sched_task_exists(MT_PID_FIRST_APP + i));
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
    assert_string_equal(events, ""); /* nobody was initialised */
    /* The pids were not consumed: a good description gets the first ones. */
    uint16_t good = two_task_app(&b, 0);
    assert_int_equal(appmgr_load(b.buf, good), MT_OK);
    assert_int_equal(appmgr_last_result()->pid_base, MT_PID_FIRST_APP);
}

/* Stage two's INITs need message blocks: stage one sets one aside for each
 * local task, so that a pool that cannot give them fails the load whole,
 * logged and naming the task (before: both tasks created, MT_OK, and the
 * task that found no block never got its INIT). Nothing is kept: the pool
 * and the heap are as they were before the load. */
static void test_load_without_blocks_for_its_inits_fails_whole(void **state)
{
    (void) state;
    const mt_pid_t filler = MT_PID_LAST_APP; /* uninitialised: what is sent to it is held */
    assert_int_equal(sched_task_create(&(task_spec_t){.pid = filler, .prio = 1, .handler = prog_b}),
                     MT_OK);
    uint8_t spare = sched_msg_spare();
    for (uint8_t i = 1; i < spare; i++)
        assert_int_equal(sched_send_to(filler, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_msg_spare(), 1); /* a block for one INIT of the two */
    builder_t b;
    uint16_t len = two_task_app(&b, 0);
    mem_stats_t before, after;
    mem_get_stats(&before);
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    const appmgr_result_t *r = appmgr_last_result();
    assert_int_equal(r->err, MT_ERR_QUEUE_FULL);
    assert_int_equal(r->created, 0);
    expect_appfail(1, MT_ERR_QUEUE_FULL, MOTET_MODULE_ID);
    assert_false(sched_task_exists(MT_PID_FIRST_APP));
    assert_false(sched_task_exists(MT_PID_FIRST_APP + 1));
    assert_string_equal(events, "");
    assert_int_equal(sched_msg_spare(), 1);
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
    /* With the blocks back, the same description loads, with the same ids. */
    assert_int_equal(sched_task_kill(filler), MT_OK);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_OK);
    assert_int_equal(appmgr_last_result()->pid_base, MT_PID_FIRST_APP);
    assert_string_equal(events, "JIxb");
}

/* An INIT whose data the block cannot hold needs heap room as well: set
 * aside at stage one too, so a heap that has none fails the load whole. */
static void test_load_without_heap_for_an_init_fails_whole(void **state)
{
    (void) state;
    builder_t b;
    begin(&b, 2, 0);
    const uint8_t init[MSG_INLINE_BYTES + 3] = {'y'};
    add_task(&b, 2, 1, 0, NULL, 0, NULL, 0);
    add_task(&b, 2, 1, 0, NULL, 0, init, sizeof init);
    uint16_t len = finish(&b);
    /* The heap keeps room for both tasks' creation but not for the copy. */
    void **fill = NULL, **block; /* a chain through the blocks themselves */
    while ((block = mem_alloc(sizeof init)) != NULL) {
        *block = fill;
        fill = block;
    }
    mem_stats_t before, after;
    mem_get_stats(&before);
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    uint8_t spare = sched_msg_spare();
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_ERR_NO_MEM);
    expect_appfail(1, MT_ERR_NO_MEM, MOTET_MODULE_ID);
    assert_false(sched_task_exists(MT_PID_FIRST_APP));
    assert_false(sched_task_exists(MT_PID_FIRST_APP + 1));
    assert_string_equal(events, "");
    assert_int_equal(sched_msg_spare(), spare);
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
    while (fill) {
        block = *fill;
        mem_free(fill);
        fill = block;
    }
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_OK);
    assert_string_equal(events, "JJ");
}

/* The INITs a load made at stage one reach their own tasks, in task
 * order: a string on the heap, none, one a block holds. */
static void test_each_task_gets_its_own_init_in_task_order(void **state)
{
    (void) state;
    builder_t b;
    begin(&b, 3, 0);
    const uint8_t heap_init[] = "on-the-heap", inline_init[] = "qQ";
    add_task(&b, 3, 1, 0, NULL, 0, heap_init, sizeof heap_init - 1);
    add_task(&b, 3, 1, 0, NULL, 0, NULL, 0);
    add_task(&b, 3, 1, 0, NULL, 0, inline_init, sizeof inline_init - 1);
    uint16_t len = finish(&b);
    assert_int_equal(appmgr_load(b.buf, len), MT_OK);
    sched_run_pending();
    assert_int_equal(appmgr_last_result()->err, MT_OK);
    assert_string_equal(events, "0on-the-heap12qQ");
}

/* ---- stage two's entry: an INIT posted in the block prepared for it ---- */

static msg_t *prepared;
static mt_err_t posted;
static uint8_t init_got[16];
static uint16_t init_len_got;

static mt_err_t keeps_init(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT && len <= sizeof init_got) {
        memcpy(init_got, data, len);
        init_len_got = len;
    }
    return MT_OK;
}

static mt_err_t posts_prepared(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0)
        posted = sched_post_block(sched_current_pid(), MT_PID_FIRST_APP, PORT_INIT, prepared);
    return MT_OK;
}

static msg_t *prepared_again;
static mt_err_t posted_again;

/* Posts the prepared INIT, then the second one while the first waits. */
static mt_err_t posts_prepared_twice(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    posted = sched_post_block(sched_current_pid(), MT_PID_FIRST_APP, PORT_INIT, prepared);
    posted_again =
        sched_post_block(sched_current_pid(), MT_PID_FIRST_APP, PORT_INIT, prepared_again);
    return MT_OK;
}

static msg_t *prepare(const void *init, uint16_t len)
{
    msg_t *m = sched_msg_alloc();
    assert_non_null(m);
    assert_int_equal(sched_msg_copy_payload(m, init, len), MT_OK);
    return m;
}

/* The block and the heap copy made beforehand are the INIT itself: with
 * neither a block nor heap left it still arrives, whole, once the poster
 * (which outranks its task) has returned. A second INIT is refused,
 * logged, and its block and copy go back. Before, stage two freed the
 * block and its room and had sched_task_init() take them again, with
 * interrupts off around the heap allocation and the copy. */
static void test_an_init_is_posted_in_the_block_prepared_for_it(void **state)
{
    (void) state;
    const mt_pid_t target = MT_PID_FIRST_APP, poster = MT_PID_FIRST_APP + 1,
                   filler = MT_PID_LAST_APP;
    assert_int_equal(
        sched_task_create(&(task_spec_t){.pid = target, .prio = 1, .handler = keeps_init}), MT_OK);
    assert_int_equal(
        sched_task_create(&(task_spec_t){.pid = poster, .prio = 3, .handler = posts_prepared}),
        MT_OK);
    assert_int_equal(sched_task_init(poster, NULL, 0), MT_OK);
    assert_int_equal(sched_task_create(&(task_spec_t){.pid = filler, .prio = 1, .handler = prog_b}),
                     MT_OK);
    static const char init[] = "prepared"; /* longer than a block holds */
    prepared = prepare(init, sizeof init);
    while (sched_send_to(filler, PORT_0, NULL, 0, 0) == MT_OK) continue; /* held: rule 7 */
    assert_int_equal(sched_msg_spare(), 0);
    void **fill = NULL, **block;
    while ((block = mem_alloc(sizeof(void *))) != NULL) {
        *block = fill;
        fill = block;
    }
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_signal_to(poster, PORT_0), MT_OK);
    sched_run_pending();
    assert_int_equal(posted, MT_OK);
    assert_int_equal(init_len_got, sizeof init);
    assert_memory_equal(init_got, init, sizeof init);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 0);
    while (fill) {
        block = *fill;
        mem_free(fill);
        fill = block;
    }
    assert_int_equal(sched_task_kill(filler), MT_OK);
    uint8_t spare = sched_msg_spare();
    mem_stats_t before, after;
    mem_get_stats(&before);
    prepared = prepare(init, sizeof init);
    assert_int_equal(sched_signal_to(poster, PORT_0), MT_OK);
    sched_run_pending();
    assert_int_equal(posted, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(sched_msg_spare(), spare);
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
}

/* One INIT per task even while the first still waits (TASK_INIT_SENT):
 * a second prepared INIT is refused, logged, its block and heap copy
 * given back, and the task gets the first's bytes only. */
static void test_a_second_init_block_while_the_first_waits_is_refused(void **state)
{
    (void) state;
    const mt_pid_t target = MT_PID_FIRST_APP, poster = MT_PID_FIRST_APP + 1;
    assert_int_equal(
        sched_task_create(&(task_spec_t){.pid = target, .prio = 1, .handler = keeps_init}), MT_OK);
    assert_int_equal(sched_task_create(
                         &(task_spec_t){.pid = poster, .prio = 3, .handler = posts_prepared_twice}),
                     MT_OK);
    assert_int_equal(sched_task_init(poster, NULL, 0), MT_OK);
    static const char first[] = "first", second[] = "second, on the heap";
    uint8_t spare = sched_msg_spare();
    mem_stats_t before, after;
    mem_get_stats(&before);
    prepared = prepare(first, sizeof first);
    prepared_again = prepare(second, sizeof second);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_signal_to(poster, PORT_0), MT_OK);
    sched_run_pending();
    assert_int_equal(posted, MT_OK);
    assert_int_equal(posted_again, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(init_len_got, sizeof first);
    assert_memory_equal(init_got, first, sizeof first);
    assert_int_equal(sched_msg_spare(), spare);
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_load_creates_maps_and_initialises_in_two_stages, setup),
        cmocka_unit_test_setup(test_second_load_gets_fresh_ids, setup),
        cmocka_unit_test_setup(
            test_an_interrupts_or_a_multicasts_description_on_the_bus_port_is_refused, setup),
        cmocka_unit_test_setup(test_task_on_a_module_the_device_lacks_fails_the_load, setup),
        cmocka_unit_test_setup(test_malformed_description_creates_nothing, setup),
        cmocka_unit_test_setup(test_unknown_program_creates_nothing, setup),
        cmocka_unit_test_setup(test_resource_exhaustion_mid_creation_rolls_back, setup),
        cmocka_unit_test_setup(test_load_without_blocks_for_its_inits_fails_whole, setup),
        cmocka_unit_test_setup(test_load_without_heap_for_an_init_fails_whole, setup),
        cmocka_unit_test_setup(test_each_task_gets_its_own_init_in_task_order, setup),
        cmocka_unit_test_setup(test_an_init_is_posted_in_the_block_prepared_for_it, setup),
        cmocka_unit_test_setup(test_a_second_init_block_while_the_first_waits_is_refused, setup),
    };
    return cmocka_run_group_tests_name("application manager", tests, NULL, NULL);
}
