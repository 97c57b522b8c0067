/* SPDX-License-Identifier: MIT */
/*
 * The application description validator: a valid description built here
 * parses with the right fields; every malformed field, changed alone in an
 * otherwise valid description (checksum recomputed), is rejected with its
 * own error code, the offset of that field, and a logged EV_ERROR.
 */
#include "appdesc.h"
#include "test_support.h"

#include <string.h>

/* The valid description: 3 tasks, 2 groups (records in reverse group order,
 * which the format allows). Offsets of its parts: */
enum {
    T0 = 12, /* task records */
    T1 = 24,
    T2 = 36,
    G0 = 48, /* group records: rel_group 1, then rel_group 0 */
    G1 = 52,
    R0 = 56, /* task 0 routes: (MULTICAST, group 1) */
    I0 = 58, /* task 0 init: u32 125000 */
    R1 = 62, /* task 1 routes: (2, PORT_0), (MT_PID_TIMESYNC, 9) */
    I2 = 66, /* task 2 init: "abc" */
    M0 = 69, /* group record 0 members: (1, PORT_0) */
    M1 = 71, /* group record 1 members: (2, PORT_0 + 1), (1, PORT_LIMIT - 1) */
    END = 75,
};

static struct {
    uint8_t b[MOTET_APP_DESC_MAX + 1];
    uint16_t len;
} desc;

/* ---- builder ---- */

static void put16(uint16_t at, uint16_t v)
{
    desc.b[at] = (uint8_t) v;
    desc.b[at + 1] = (uint8_t) (v >> 8);
}

static void put_task(uint16_t at, const uint8_t head[6], uint16_t routes_off, uint16_t init_off,
                     uint16_t init_len)
{
    memcpy(desc.b + at, head, 6);
    put16(at + 6, routes_off);
    put16(at + 8, init_off);
    put16(at + 10, init_len);
}

static void put_group(uint16_t at, uint8_t rel_group, uint8_t n, uint16_t members_off)
{
    desc.b[at] = rel_group;
    desc.b[at + 1] = n;
    put16(at + 2, members_off);
}

static void put_bytes(uint16_t at, const uint8_t *bytes, uint16_t n)
{
    memcpy(desc.b + at, bytes, n);
}

/* Recompute the checksum (defined with its own field taken as zero). */
static void fix_crc(void)
{
    put16(10, 0);
    put16(10, appdesc_crc16(desc.b, desc.len));
}

/* Fill in total_len and the checksum. */
static void seal(void)
{
    put16(8, desc.len);
    fix_crc();
}

static void build_valid(void)
{
    static const uint8_t header[8] = {'M', 'T', 'A', 'D', APPDESC_VERSION, 3, 2, 0};
    /* prog_id, rel_pid, priority, flags, module, num_routes */
    static const uint8_t t0[6] = {1, 0, 1, TASK_MOVABLE, 0, 1};
    static const uint8_t t1[6] = {2, 1, 0, 0, 1, 2};
    static const uint8_t t2[6] = {3, 2, MOTET_PRIO_LEVELS - 2, 0, 2, 0};
    static const uint8_t r0[2] = {MT_PID_MULTICAST, 1};
    static const uint8_t i0[4] = {0x48, 0xE8, 0x01, 0x00};
    static const uint8_t r1[4] = {2, PORT_0, MT_PID_TIMESYNC, 9};
    static const uint8_t m0[2] = {1, PORT_0};
    static const uint8_t m1[4] = {2, PORT_0 + 1, 1, PORT_LIMIT - 1};

    memset(&desc, 0, sizeof desc);
    put_bytes(0, header, sizeof header);
    put_task(T0, t0, R0, I0, sizeof i0);
    put_task(T1, t1, R1, 0, 0);
    put_task(T2, t2, 0, I2, 3);
    put_group(G0, 1, 1, M0);
    put_group(G1, 0, 2, M1);
    put_bytes(R0, r0, sizeof r0);
    put_bytes(I0, i0, sizeof i0);
    put_bytes(R1, r1, sizeof r1);
    put_bytes(I2, (const uint8_t *) "abc", 3);
    put_bytes(M0, m0, sizeof m0);
    put_bytes(M1, m1, sizeof m1);
    desc.len = END;
    seal();
}

/* ---- checks ---- */

static void expect_reject_len(size_t len, mt_err_t err, uint16_t bad_offset)
{
    appdesc_t d;
    assert_int_equal(appdesc_parse(desc.b, len, &d), err);
    assert_int_equal(d.bad_offset, bad_offset);
    assert_null(d.buf); /* nothing to walk after a failure */
    assert_int_equal(test_count_logged_errors(err), 1);
}

static void expect_reject(mt_err_t err, uint16_t bad_offset)
{
    expect_reject_len(desc.len, err, bad_offset);
}

static void expect_no_error_logged(void)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    for (unsigned i = 0; i < n; i++) assert_int_not_equal(rec[i].type, EV_ERROR);
}

static void expect_valid(appdesc_t *d)
{
    assert_int_equal(appdesc_parse(desc.b, desc.len, d), MT_OK);
    expect_no_error_logged();
}

static void test_valid_fields(void **state)
{
    (void) state;
    appdesc_t d;
    appdesc_task_t t;
    appdesc_group_t g;
    build_valid();
    expect_valid(&d);
    assert_ptr_equal(d.buf, desc.b);
    assert_int_equal(d.len, END);
    assert_int_equal(d.num_tasks, 3);
    assert_int_equal(d.num_groups, 2);

    appdesc_task(&d, 0, &t);
    assert_int_equal(t.prog_id, 1);
    assert_int_equal(t.rel_pid, 0);
    assert_int_equal(t.prio, 1);
    assert_int_equal(t.flags, TASK_MOVABLE);
    assert_int_equal(t.module, 0);
    assert_int_equal(t.num_routes, 1);
    assert_ptr_equal(t.routes, desc.b + R0);
    assert_ptr_equal(t.init, desc.b + I0);
    assert_int_equal(t.init_len, 4);

    appdesc_task(&d, 1, &t);
    assert_int_equal(t.prog_id, 2);
    assert_int_equal(t.module, 1);
    assert_int_equal(t.num_routes, 2);
    assert_int_equal(t.routes[2], MT_PID_TIMESYNC);
    assert_int_equal(t.routes[3], 9);
    assert_null(t.init);
    assert_int_equal(t.init_len, 0);

    appdesc_task(&d, 2, &t);
    assert_int_equal(t.prio, MOTET_PRIO_LEVELS - 2);
    assert_int_equal(t.num_routes, 0);
    assert_null(t.routes);
    assert_memory_equal(t.init, "abc", 3);

    appdesc_group(&d, 0, &g);
    assert_int_equal(g.rel_group, 1);
    assert_int_equal(g.num_members, 1);
    assert_ptr_equal(g.members, desc.b + M0);
    appdesc_group(&d, 1, &g);
    assert_int_equal(g.rel_group, 0);
    assert_int_equal(g.num_members, 2);
    assert_int_equal(g.members[3], PORT_LIMIT - 1);
}

static void test_crc16_check_value(void **state)
{
    (void) state;
    /* The catalogue check value of CRC-16/CCITT-FALSE. */
    assert_int_equal(appdesc_crc16((const uint8_t *) "123456789", 9), 0x29B1);
    assert_int_equal(appdesc_crc16(NULL, 0), 0xFFFF);
}

static void test_short_buffer(void **state)
{
    (void) state;
    build_valid();
    expect_reject_len(APPDESC_HEADER_SIZE - 1, MT_ERR_DESC_LENGTH, 0);
    expect_reject_len(0, MT_ERR_DESC_LENGTH, 0);
}

static void test_length_mismatch(void **state)
{
    (void) state;
    build_valid();
    expect_reject_len(END - 1, MT_ERR_DESC_LENGTH, 8); /* buffer shorter */
    expect_reject_len(END + 1, MT_ERR_DESC_LENGTH, 8); /* buffer longer */
    put16(8, END - 1);                                 /* the field differs */
    fix_crc();
    expect_reject(MT_ERR_DESC_LENGTH, 8);
}

static void test_oversize(void **state)
{
    (void) state;
    appdesc_t d;
    build_valid();
    /* Unreferenced bytes after the data are allowed: pad to the limit. */
    desc.len = MOTET_APP_DESC_MAX;
    seal();
    expect_valid(&d);
    desc.len = MOTET_APP_DESC_MAX + 1;
    seal();
    expect_reject(MT_ERR_DESC_LENGTH, 8);
}

static void test_checksum(void **state)
{
    (void) state;
    build_valid();
    desc.b[10] ^= 0x01;
    expect_reject(MT_ERR_DESC_CHECKSUM, 10);
    build_valid();
    desc.b[I2 + 1] ^= 0x20; /* a data byte changed in transit */
    expect_reject(MT_ERR_DESC_CHECKSUM, 10);
}

static void test_null_arguments(void **state)
{
    (void) state;
    appdesc_t d;
    build_valid();
    assert_int_equal(appdesc_parse(NULL, END, &d), MT_ERR_INVALID);
    assert_int_equal(appdesc_parse(desc.b, END, NULL), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
}

/* ---- one field changed: a table ---- */

typedef struct mutation {
    const char *name;
    uint16_t at;    /* offset of the change */
    uint16_t value; /* new byte, or little-endian u16 when wide */
    bool wide;
    mt_err_t err; /* MT_OK: the change is still valid */
    uint16_t bad; /* expected bad_offset */
} mutation_t;

#define BYTE(n, a, v, e, b)                                                                        \
    {                                                                                              \
        .name = n, .at = a, .value = v, .err = e, .bad = b                                         \
    }
#define WORD(n, a, v, e, b)                                                                        \
    {                                                                                              \
        .name = n, .at = a, .value = v, .wide = true, .err = e, .bad = b                           \
    }
#define PAIR(pid, port) ((uint16_t) ((port) << 8 | (pid)))

static const mutation_t mutations[] = {
    /* header */
    BYTE("magic", 0, 'X', MT_ERR_DESC_HEADER, 0),
    BYTE("magic_last_byte", 3, 'd', MT_ERR_DESC_HEADER, 0),
    BYTE("version", 4, APPDESC_VERSION + 1, MT_ERR_DESC_HEADER, 4),
    BYTE("reserved", 7, 1, MT_ERR_DESC_HEADER, 7),
    BYTE("zero_tasks", 5, 0, MT_ERR_DESC_HEADER, 5),
    BYTE("more_tasks_than_pids", 5, MT_PID_LAST_APP - MT_PID_FIRST_APP + 2, MT_ERR_DESC_HEADER, 5),
    BYTE("task_records_past_end", 5, 6, MT_ERR_DESC_LENGTH, 5),
    BYTE("group_records_past_end", 6, 10, MT_ERR_DESC_LENGTH, 6),
    /* task records */
    BYTE("prog_id_zero", T1 + 0, 0, MT_ERR_DESC_TASK, T1 + 0),
    BYTE("rel_pid_duplicate", T1 + 1, 0, MT_ERR_DESC_TASK, T1 + 1),
    BYTE("rel_pid_out_of_range", T2 + 1, 3, MT_ERR_DESC_TASK, T2 + 1),
    BYTE("priority_of_manager", T0 + 2, MOTET_PRIO_LEVELS - 1, MT_ERR_DESC_TASK, T0 + 2),
    BYTE("priority_negative", T0 + 2, 0x80, MT_ERR_DESC_TASK, T0 + 2),
    BYTE("priority_zero_ok", T0 + 2, 0, MT_OK, 0),
    BYTE("unknown_flag", T0 + 3, TASK_MOVABLE | 0x02, MT_ERR_DESC_TASK, T0 + 3),
    BYTE("any_module_ok", T2 + 4, 0xFF, MT_OK, 0),
    /* route regions */
    WORD("routes_into_header", T1 + 6, 10, MT_ERR_DESC_LENGTH, T1 + 6),
    WORD("routes_into_records", T1 + 6, G1, MT_ERR_DESC_LENGTH, T1 + 6),
    WORD("routes_past_end", T1 + 6, END - 2, MT_ERR_DESC_LENGTH, T1 + 6),
    WORD("routes_offset_huge", T1 + 6, 0xFFFF, MT_ERR_DESC_LENGTH, T1 + 6),
    BYTE("num_routes_past_end", T1 + 5, 7, MT_ERR_DESC_LENGTH, T1 + 6),
    WORD("no_routes_with_offset", T2 + 6, R0, MT_ERR_DESC_LENGTH, T2 + 6),
    /* route entries */
    BYTE("route_unknown_rel_pid", R1 + 0, 3, MT_ERR_DESC_ROUTE, R1 + 0),
    BYTE("route_device_pid", R1 + 0, MT_PID_FIRST_APP, MT_ERR_DESC_ROUTE, R1 + 0),
    BYTE("route_last_device_pid", R1 + 2, MT_PID_LAST_APP, MT_ERR_DESC_ROUTE, R1 + 2),
    BYTE("route_invalid_pid", R1 + 2, MT_PID_INVALID, MT_ERR_DESC_ROUTE, R1 + 2),
    BYTE("route_port_out_of_range", R1 + 1, PORT_LIMIT, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("system_route_port_out_of_range", R1 + 3, PORT_LIMIT, MT_ERR_DESC_ROUTE, R1 + 3),
    BYTE("route_to_init", R1 + 1, PORT_INIT, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("route_to_final", R1 + 1, PORT_FINAL, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("route_to_serialize", R1 + 1, PORT_SERIALIZE, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("route_to_timeout0", R1 + 1, PORT_TIMEOUT0, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("route_port_below_app", R1 + 1, PORT_0 - 1, MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("route_last_app_port_ok", R1 + 1, PORT_LIMIT - 1, MT_OK, 0),
    /* task 1's first route back to itself, on its own timeout port */
    WORD("route_to_own_timeout", R1, PAIR(1, PORT_TIMEOUT3), MT_ERR_DESC_ROUTE, R1 + 1),
    BYTE("system_route_to_init", R1 + 3, PORT_INIT, MT_ERR_DESC_ROUTE, R1 + 3),
    BYTE("system_route_to_timeout3", R1 + 3, PORT_TIMEOUT3, MT_ERR_DESC_ROUTE, R1 + 3),
    BYTE("system_route_first_app_port_ok", R1 + 3, PORT_0, MT_OK, 0),
    WORD("system_route_appmgr_ok", R1 + 2, PAIR(MT_PID_APPMGR, PORT_0), MT_OK, 0),
    /* the manager's other ports are the bus's: it takes nothing from a task there */
    WORD("route_to_appmgr_verdict", R1 + 2, PAIR(MT_PID_APPMGR, PORT_0 + 1), MT_ERR_DESC_ROUTE,
         R1 + 3),
    WORD("route_to_appmgr_disagreed", R1 + 2, PAIR(MT_PID_APPMGR, PORT_0 + 2), MT_ERR_DESC_ROUTE,
         R1 + 3),
    WORD("route_to_appmgr_desc", R1 + 2, PAIR(MT_PID_APPMGR, PORT_0 + 3), MT_ERR_DESC_ROUTE,
         R1 + 3),
    WORD("route_to_appmgr_last_port", R1 + 2, PAIR(MT_PID_APPMGR, PORT_LIMIT - 1),
         MT_ERR_DESC_ROUTE, R1 + 3),
    BYTE("system_route_last_global_pid_ok", R1 + 2, MT_PID_INVALID - 1, MT_OK, 0),
    BYTE("multicast_unknown_group", R0 + 1, 2, MT_ERR_DESC_ROUTE, R0 + 1),
    /* init strings */
    WORD("init_into_records", T0 + 8, T2, MT_ERR_DESC_LENGTH, T0 + 8),
    WORD("init_past_end", T2 + 10, 10, MT_ERR_DESC_LENGTH, T2 + 8),
    WORD("init_offset_past_end", T2 + 8, END - 2, MT_ERR_DESC_LENGTH, T2 + 8),
    WORD("init_len_zero_with_offset", T1 + 8, I0, MT_ERR_DESC_LENGTH, T1 + 8),
    /* group records */
    BYTE("group_duplicate", G1 + 0, 1, MT_ERR_DESC_GROUP, G1 + 0),
    BYTE("group_out_of_range", G0 + 0, 2, MT_ERR_DESC_GROUP, G0 + 0),
    BYTE("group_empty", G0 + 1, 0, MT_ERR_DESC_GROUP, G0 + 1),
    WORD("members_past_end", G1 + 2, END - 2, MT_ERR_DESC_LENGTH, G1 + 2),
    WORD("members_into_records", G0 + 2, G0, MT_ERR_DESC_LENGTH, G0 + 2),
    BYTE("num_members_past_end", G1 + 1, 3, MT_ERR_DESC_LENGTH, G1 + 2),
    /* group members */
    BYTE("member_unknown_pid", M1 + 0, 3, MT_ERR_DESC_GROUP, M1 + 0),
    WORD("member_duplicate", M1 + 2, PAIR(2, PORT_0 + 1), MT_ERR_DESC_GROUP, M1 + 2),
    BYTE("member_system_port", M0 + 1, PORT_INIT, MT_ERR_DESC_GROUP, M0 + 1),
    BYTE("member_port_below_app", M0 + 1, PORT_0 - 1, MT_ERR_DESC_GROUP, M0 + 1),
    BYTE("member_port_past_limit", M1 + 3, PORT_LIMIT, MT_ERR_DESC_GROUP, M1 + 3),
};

static void test_mutation(void **state)
{
    const mutation_t *m = *state;
    appdesc_t d;
    build_valid();
    if (m->wide)
        put16(m->at, m->value);
    else
        desc.b[m->at] = (uint8_t) m->value;
    seal();
    if (m->err == MT_OK)
        expect_valid(&d);
    else
        expect_reject(m->err, m->bad);
}

/* ---- the compiled hello application ---- */

/* tests/tools/test_appc.py checks that appc still compiles
 * apps/hello/hello.toml to exactly these bytes. */
static const uint8_t hello_golden[] = {
#include "../tools/hello_golden.hex"
};

static void test_hello_golden(void **state)
{
    (void) state;
    appdesc_t d;
    appdesc_task_t t;
    appdesc_group_t g;
    assert_int_equal(appdesc_parse(hello_golden, sizeof hello_golden, &d), MT_OK);
    assert_int_equal(d.num_tasks, 3);
    assert_int_equal(d.num_groups, 1);

    appdesc_task(&d, 0, &t); /* timer: multicasts to group 0 */
    assert_int_equal(t.prog_id, 1);
    assert_int_equal(t.prio, 1);
    assert_int_equal(t.flags, TASK_MOVABLE);
    assert_int_equal(t.num_routes, 1);
    assert_int_equal(t.routes[0], MT_PID_MULTICAST);
    assert_int_equal(t.routes[1], 0);
    assert_int_equal(t.init_len, 4);
    assert_memory_equal(t.init, ((const uint8_t[]){0x48, 0xE8, 0x01, 0x00}), 4); /* 125000 */

    appdesc_task(&d, 1, &t); /* hello: to the radio's application port 0 */
    assert_int_equal(t.prog_id, 2);
    assert_int_equal(t.num_routes, 1);
    assert_int_equal(t.routes[0], 2);
    assert_int_equal(t.routes[1], PORT_0);
    assert_null(t.init);

    appdesc_task(&d, 2, &t); /* radio: fixed, higher priority */
    assert_int_equal(t.prog_id, 3);
    assert_int_equal(t.prio, 2);
    assert_int_equal(t.flags, 0);
    assert_int_equal(t.num_routes, 0);

    appdesc_group(&d, 0, &g); /* ticks: hello's application port 0 */
    assert_int_equal(g.rel_group, 0);
    assert_int_equal(g.num_members, 1);
    assert_int_equal(g.members[0], 1);
    assert_int_equal(g.members[1], PORT_0);
}

#define N_MUTATIONS (sizeof mutations / sizeof mutations[0])

int main(void)
{
    static struct CMUnitTest tests[6 + N_MUTATIONS + 2] = {
        cmocka_unit_test_setup(test_valid_fields, test_boot),
        cmocka_unit_test_setup(test_crc16_check_value, test_boot),
        cmocka_unit_test_setup(test_short_buffer, test_boot),
        cmocka_unit_test_setup(test_length_mismatch, test_boot),
        cmocka_unit_test_setup(test_oversize, test_boot),
        cmocka_unit_test_setup(test_checksum, test_boot),
    };
    size_t n = 6;
    /* One named test per table row, so a failure names the field. */
    for (size_t i = 0; i < N_MUTATIONS; i++, n++) {
        tests[n] = (struct CMUnitTest){.name = mutations[i].name,
                                       .test_func = test_mutation,
                                       .setup_func = test_boot,
                                       .initial_state = (void *) &mutations[i]};
    }
    tests[n++] = (struct CMUnitTest) cmocka_unit_test_setup(test_null_arguments, test_boot);
    tests[n++] = (struct CMUnitTest) cmocka_unit_test_setup(test_hello_golden, test_boot);
    return _cmocka_run_group_tests("appdesc", tests, n, NULL, NULL);
}
