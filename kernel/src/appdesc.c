/* SPDX-License-Identifier: MIT */
/*
 * The application description validator (appdesc.h, docs/app-format.md).
 *
 * Descriptions arrive from outside (radio, serial, another module), so
 * nothing in one is trusted: every field is read byte by byte (no unaligned
 * or endian-dependent casts) and every offset is checked against the buffer
 * before anything is dereferenced. The checks run in a fixed order and stop
 * at the first violation, whose field offset goes to out->bad_offset.
 */
#include "appdesc.h"

#include "motet/log.h"
#include "motet/port.h"

/* Header field offsets. */
enum {
    HDR_MAGIC = 0,
    HDR_VERSION = 4,
    HDR_NUM_TASKS = 5,
    HDR_NUM_GROUPS = 6,
    HDR_RESERVED = 7,
    HDR_TOTAL_LEN = 8,
    HDR_CRC = 10,
};

/* Task record field offsets. */
enum {
    TASK_PROG_ID = 0,
    TASK_REL_PID = 1,
    TASK_PRIO = 2,
    TASK_FLAGS = 3,
    TASK_MODULE = 4,
    TASK_NUM_ROUTES = 5,
    TASK_ROUTES_OFF = 6,
    TASK_INIT_OFF = 8,
    TASK_INIT_LEN = 10,
};

/* Group record field offsets. */
enum {
    GROUP_REL_GROUP = 0,
    GROUP_NUM_MEMBERS = 1,
    GROUP_MEMBERS_OFF = 2,
};

/* Most tasks in one description: one per application pid. */
#define APPDESC_TASKS_MAX (MT_PID_LAST_APP - MT_PID_FIRST_APP + 1u)

/* The highest priority a task may ask for: the top level is the manager's. */
#define APPDESC_PRIO_MAX ((uint8_t) (MOTET_PRIO_LEVELS - 2))

static uint16_t get16(const uint8_t *p)
{
    /* Cast before shifting: on AVR int is 16 bits and 0x80 << 8 overflows. */
    return (uint16_t) ((uint16_t) p[0] | (uint16_t) ((uint16_t) p[1] << 8));
}

#if MOTET_CRC_TABLE
/* CRC-16/CCITT (polynomial 0x1021, most significant bit first) a byte at
 * a time by table (MOTET_CRC_TABLE): entry i is the division's remainder
 * of i followed by eight zero bits. */
static const uint16_t crc16_table[256] PORT_CONST_TABLE = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7, 0x8108, 0x9129, 0xA14A, 0xB16B,
    0xC18C, 0xD1AD, 0xE1CE, 0xF1EF, 0x1231, 0x0210, 0x3273, 0x2252, 0x52B5, 0x4294, 0x72F7, 0x62D6,
    0x9339, 0x8318, 0xB37B, 0xA35A, 0xD3BD, 0xC39C, 0xF3FF, 0xE3DE, 0x2462, 0x3443, 0x0420, 0x1401,
    0x64E6, 0x74C7, 0x44A4, 0x5485, 0xA56A, 0xB54B, 0x8528, 0x9509, 0xE5EE, 0xF5CF, 0xC5AC, 0xD58D,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76D7, 0x66F6, 0x5695, 0x46B4, 0xB75B, 0xA77A, 0x9719, 0x8738,
    0xF7DF, 0xE7FE, 0xD79D, 0xC7BC, 0x48C4, 0x58E5, 0x6886, 0x78A7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xC9CC, 0xD9ED, 0xE98E, 0xF9AF, 0x8948, 0x9969, 0xA90A, 0xB92B, 0x5AF5, 0x4AD4, 0x7AB7, 0x6A96,
    0x1A71, 0x0A50, 0x3A33, 0x2A12, 0xDBFD, 0xCBDC, 0xFBBF, 0xEB9E, 0x9B79, 0x8B58, 0xBB3B, 0xAB1A,
    0x6CA6, 0x7C87, 0x4CE4, 0x5CC5, 0x2C22, 0x3C03, 0x0C60, 0x1C41, 0xEDAE, 0xFD8F, 0xCDEC, 0xDDCD,
    0xAD2A, 0xBD0B, 0x8D68, 0x9D49, 0x7E97, 0x6EB6, 0x5ED5, 0x4EF4, 0x3E13, 0x2E32, 0x1E51, 0x0E70,
    0xFF9F, 0xEFBE, 0xDFDD, 0xCFFC, 0xBF1B, 0xAF3A, 0x9F59, 0x8F78, 0x9188, 0x81A9, 0xB1CA, 0xA1EB,
    0xD10C, 0xC12D, 0xF14E, 0xE16F, 0x1080, 0x00A1, 0x30C2, 0x20E3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83B9, 0x9398, 0xA3FB, 0xB3DA, 0xC33D, 0xD31C, 0xE37F, 0xF35E, 0x02B1, 0x1290, 0x22F3, 0x32D2,
    0x4235, 0x5214, 0x6277, 0x7256, 0xB5EA, 0xA5CB, 0x95A8, 0x8589, 0xF56E, 0xE54F, 0xD52C, 0xC50D,
    0x34E2, 0x24C3, 0x14A0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405, 0xA7DB, 0xB7FA, 0x8799, 0x97B8,
    0xE75F, 0xF77E, 0xC71D, 0xD73C, 0x26D3, 0x36F2, 0x0691, 0x16B0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xD94C, 0xC96D, 0xF90E, 0xE92F, 0x99C8, 0x89E9, 0xB98A, 0xA9AB, 0x5844, 0x4865, 0x7806, 0x6827,
    0x18C0, 0x08E1, 0x3882, 0x28A3, 0xCB7D, 0xDB5C, 0xEB3F, 0xFB1E, 0x8BF9, 0x9BD8, 0xABBB, 0xBB9A,
    0x4A75, 0x5A54, 0x6A37, 0x7A16, 0x0AF1, 0x1AD0, 0x2AB3, 0x3A92, 0xFD2E, 0xED0F, 0xDD6C, 0xCD4D,
    0xBDAA, 0xAD8B, 0x9DE8, 0x8DC9, 0x7C26, 0x6C07, 0x5C64, 0x4C45, 0x3CA2, 0x2C83, 0x1CE0, 0x0CC1,
    0xEF1F, 0xFF3E, 0xCF5D, 0xDF7C, 0xAF9B, 0xBFBA, 0x8FD9, 0x9FF8, 0x6E17, 0x7E36, 0x4E55, 0x5E74,
    0x2E93, 0x3EB2, 0x0ED1, 0x1EF0,
};

static uint16_t crc16_update(uint16_t crc, uint8_t byte)
{
    uint8_t i = (uint8_t) ((crc >> 8) ^ byte);
    return (uint16_t) ((uint16_t) (crc << 8) ^ port_const_u16(&crc16_table[i]));
}
#else
/* CRC-16/CCITT (polynomial 0x1021, most significant bit first) a byte at
 * a time without a table: the byte's eight steps of the bit-serial
 * division folded into three shifts. On an ATmega128 about 53 cycles a
 * byte against the bit loop's 105. */
static uint16_t crc16_update(uint16_t crc, uint8_t byte)
{
    uint8_t x = (uint8_t) ((crc >> 8) ^ byte);
    x ^= (uint8_t) (x >> 4);
    return (uint16_t) ((uint16_t) (crc << 8) ^ (uint16_t) ((uint16_t) x << 12) ^
                       (uint16_t) ((uint16_t) x << 5) ^ x);
}
#endif

uint16_t appdesc_crc16(const uint8_t *data, size_t n)
{
    uint16_t crc = 0xFFFFu;
    for (size_t i = 0; i < n; i++) crc = crc16_update(crc, data[i]);
    return crc;
}

/* CRC of the whole description with the checksum field read as zero, so the
 * sender can compute it before filling the field in. */
static uint16_t desc_crc(const uint8_t *buf, uint16_t len)
{
    uint16_t crc = 0xFFFFu;
    for (uint16_t i = 0; i < len; i++) {
        bool in_field = i == HDR_CRC || i == HDR_CRC + 1;
        crc = crc16_update(crc, in_field ? 0u : buf[i]);
    }
    return crc;
}

static mt_err_t reject(appdesc_t *out, mt_err_t err, uint16_t offset)
{
    out->bad_offset = offset;
    return log_error(err);
}

/* Offset of task record i and of group record i. */
static uint16_t task_rec(uint8_t i)
{
    return (uint16_t) (APPDESC_HEADER_SIZE + (uint16_t) i * APPDESC_TASK_SIZE);
}

static uint16_t group_rec(const appdesc_t *d, uint8_t i)
{
    return (uint16_t) (task_rec(d->num_tasks) + (uint16_t) i * APPDESC_GROUP_SIZE);
}

/* First byte after the records: where routes, members and init data live. */
static uint16_t data_start(const appdesc_t *d)
{
    return group_rec(d, d->num_groups);
}

/* True if [off, off + size) lies in the data region. Written so that no sum
 * can wrap in 16-bit arithmetic. */
static bool region_ok(const appdesc_t *d, uint16_t off, uint16_t size)
{
    return off >= data_start(d) && size <= d->len && off <= d->len - size;
}

/* Header: lengths first (nothing else may be read before they are known
 * good), then the identifying bytes, then the checksum over everything. */
static mt_err_t check_header(const uint8_t *buf, size_t len, appdesc_t *out)
{
    if (len < APPDESC_HEADER_SIZE) return reject(out, MT_ERR_DESC_LENGTH, HDR_MAGIC);
    if (len > MOTET_APP_DESC_MAX || get16(buf + HDR_TOTAL_LEN) != len)
        return reject(out, MT_ERR_DESC_LENGTH, HDR_TOTAL_LEN);
    for (uint8_t i = 0; i < 4; i++)
        if (buf[HDR_MAGIC + i] != (uint8_t) APPDESC_MAGIC[i])
            return reject(out, MT_ERR_DESC_HEADER, HDR_MAGIC);
    if (buf[HDR_VERSION] != APPDESC_VERSION) return reject(out, MT_ERR_DESC_HEADER, HDR_VERSION);
    if (buf[HDR_RESERVED] != 0) return reject(out, MT_ERR_DESC_HEADER, HDR_RESERVED);
    /* More tasks than application pids could never load, and relative
     * pids must stay below the global ones. */
    if (buf[HDR_NUM_TASKS] == 0 || buf[HDR_NUM_TASKS] > APPDESC_TASKS_MAX)
        return reject(out, MT_ERR_DESC_HEADER, HDR_NUM_TASKS);
    if (desc_crc(buf, (uint16_t) len) != get16(buf + HDR_CRC))
        return reject(out, MT_ERR_DESC_CHECKSUM, HDR_CRC);
    return MT_OK;
}

/* The fixed-size records must fit before any of them is read. */
static mt_err_t check_records_fit(appdesc_t *d)
{
    if (task_rec(d->num_tasks) > d->len) return reject(d, MT_ERR_DESC_LENGTH, HDR_NUM_TASKS);
    if (data_start(d) > d->len) return reject(d, MT_ERR_DESC_LENGTH, HDR_NUM_GROUPS);
    return MT_OK;
}

/* A route goes to an application port of one of the application's own
 * tasks (relative pid) or of a global system task (pids from MT_PID_SYSTEM
 * up, used as they are), or to one of its groups. The ranges cannot overlap
 * because num_tasks is capped below MT_PID_SYSTEM. System ports are the
 * kernel's, as for group members: a route to one would let a task fake
 * PORT_INIT or a timeout, and one to its sender's own timeout port would
 * loop for ever. The application manager's ports past PORT_0 are the
 * bus's (bus.h), which it takes from the kernel only: a route to one
 * would only ever be refused there. */
static mt_err_t check_route(appdesc_t *d, uint16_t at)
{
    uint8_t pid = d->buf[at];
    uint8_t port = d->buf[at + 1];
    bool ok_port;
    if (pid == MT_PID_APPMGR)
        ok_port = port == PORT_0;
    else if (pid < d->num_tasks || (pid > MT_PID_SYSTEM && pid != MT_PID_INVALID))
        ok_port = port >= PORT_0 && port < PORT_LIMIT;
    else if (pid == MT_PID_MULTICAST)
        ok_port = port < d->num_groups;
    else
        return reject(d, MT_ERR_DESC_ROUTE, at);
    return ok_port ? MT_OK : reject(d, MT_ERR_DESC_ROUTE, (uint16_t) (at + 1));
}

static mt_err_t check_routes(appdesc_t *d, uint16_t rec)
{
    uint8_t n = d->buf[rec + TASK_NUM_ROUTES];
    uint16_t off = get16(d->buf + rec + TASK_ROUTES_OFF);
    /* An empty table must say so with offset 0: one canonical encoding. */
    bool placed = n == 0 ? off == 0 : region_ok(d, off, (uint16_t) (n * APPDESC_ENTRY_SIZE));
    if (!placed) return reject(d, MT_ERR_DESC_LENGTH, (uint16_t) (rec + TASK_ROUTES_OFF));
    for (uint8_t i = 0; i < n; i++) {
        mt_err_t err = check_route(d, (uint16_t) (off + i * APPDESC_ENTRY_SIZE));
        if (err != MT_OK) return err;
    }
    return MT_OK;
}

static mt_err_t check_init(appdesc_t *d, uint16_t rec)
{
    uint16_t off = get16(d->buf + rec + TASK_INIT_OFF);
    uint16_t len = get16(d->buf + rec + TASK_INIT_LEN);
    bool placed = len == 0 ? off == 0 : region_ok(d, off, len);
    return placed ? MT_OK : reject(d, MT_ERR_DESC_LENGTH, (uint16_t) (rec + TASK_INIT_OFF));
}

/* Relative pids must be a permutation of 0..num_tasks-1 so that the manager
 * can map them to device pids by adding a base. O(n^2) but needs no RAM. */
static bool rel_pid_seen(const appdesc_t *d, uint8_t before, uint8_t rel_pid)
{
    for (uint8_t j = 0; j < before; j++)
        if (d->buf[task_rec(j) + TASK_REL_PID] == rel_pid) return true;
    return false;
}

static mt_err_t check_task(appdesc_t *d, uint8_t i)
{
    uint16_t rec = task_rec(i);
    const uint8_t *r = d->buf + rec;
    if (r[TASK_PROG_ID] == 0) return reject(d, MT_ERR_DESC_TASK, rec + TASK_PROG_ID);
    if (r[TASK_REL_PID] >= d->num_tasks || rel_pid_seen(d, i, r[TASK_REL_PID]))
        return reject(d, MT_ERR_DESC_TASK, (uint16_t) (rec + TASK_REL_PID));
    if (r[TASK_PRIO] > APPDESC_PRIO_MAX)
        return reject(d, MT_ERR_DESC_TASK, (uint16_t) (rec + TASK_PRIO));
    if ((r[TASK_FLAGS] & (uint8_t) ~TASK_MOVABLE) != 0)
        return reject(d, MT_ERR_DESC_TASK, (uint16_t) (rec + TASK_FLAGS));
    /* Any module address is acceptable here: only the bus knows which exist. */
    mt_err_t err = check_routes(d, rec);
    return err != MT_OK ? err : check_init(d, rec);
}

static bool rel_group_seen(const appdesc_t *d, uint8_t before, uint8_t rel_group)
{
    for (uint8_t j = 0; j < before; j++)
        if (d->buf[group_rec(d, j) + GROUP_REL_GROUP] == rel_group) return true;
    return false;
}

/* True if member entry `at` repeats an earlier entry of the same group:
 * the task would receive every message of the group twice. */
static bool member_seen(const appdesc_t *d, uint16_t first, uint16_t at)
{
    for (uint16_t p = first; p < at; p = (uint16_t) (p + APPDESC_ENTRY_SIZE))
        if (d->buf[p] == d->buf[at] && d->buf[p + 1] == d->buf[at + 1]) return true;
    return false;
}

static mt_err_t check_members(appdesc_t *d, uint16_t rec)
{
    uint8_t n = d->buf[rec + GROUP_NUM_MEMBERS];
    uint16_t off = get16(d->buf + rec + GROUP_MEMBERS_OFF);
    if (!region_ok(d, off, (uint16_t) (n * APPDESC_ENTRY_SIZE)))
        return reject(d, MT_ERR_DESC_LENGTH, (uint16_t) (rec + GROUP_MEMBERS_OFF));
    for (uint8_t i = 0; i < n; i++) {
        uint16_t at = (uint16_t) (off + i * APPDESC_ENTRY_SIZE);
        uint8_t port = d->buf[at + 1];
        if (d->buf[at] >= d->num_tasks || member_seen(d, off, at))
            return reject(d, MT_ERR_DESC_GROUP, at);
        /* Members receive on application ports only: a system port would
         * let the group fake PORT_INIT or a timeout. */
        if (port < PORT_0 || port >= PORT_LIMIT)
            return reject(d, MT_ERR_DESC_GROUP, (uint16_t) (at + 1));
    }
    return MT_OK;
}

static mt_err_t check_group(appdesc_t *d, uint8_t i)
{
    uint16_t rec = group_rec(d, i);
    uint8_t rel_group = d->buf[rec + GROUP_REL_GROUP];
    if (rel_group >= d->num_groups || rel_group_seen(d, i, rel_group))
        return reject(d, MT_ERR_DESC_GROUP, (uint16_t) (rec + GROUP_REL_GROUP));
    if (d->buf[rec + GROUP_NUM_MEMBERS] == 0)
        return reject(d, MT_ERR_DESC_GROUP, (uint16_t) (rec + GROUP_NUM_MEMBERS));
    return check_members(d, rec);
}

static mt_err_t check_body(appdesc_t *d)
{
    mt_err_t err = check_records_fit(d);
    for (uint8_t i = 0; err == MT_OK && i < d->num_tasks; i++) err = check_task(d, i);
    for (uint8_t i = 0; err == MT_OK && i < d->num_groups; i++) err = check_group(d, i);
    return err;
}

mt_err_t appdesc_parse(const uint8_t *buf, size_t len, appdesc_t *out)
{
    if (out == NULL) return log_error(MT_ERR_INVALID);
    *out = (appdesc_t){0};
    if (buf == NULL) return log_error(MT_ERR_INVALID);
    mt_err_t err = check_header(buf, len, out);
    if (err != MT_OK) return err;
    out->buf = buf;
    out->len = (uint16_t) len;
    out->num_tasks = buf[HDR_NUM_TASKS];
    out->num_groups = buf[HDR_NUM_GROUPS];
    err = check_body(out);
    if (err != MT_OK) {
        /* Leave nothing a careless caller could walk after a failure. */
        uint16_t bad = out->bad_offset;
        *out = (appdesc_t){.bad_offset = bad};
    }
    return err;
}

void appdesc_task(const appdesc_t *d, uint8_t i, appdesc_task_t *out)
{
    const uint8_t *r = d->buf + task_rec(i);
    uint16_t init_len = get16(r + TASK_INIT_LEN);
    out->prog_id = r[TASK_PROG_ID];
    out->rel_pid = r[TASK_REL_PID];
    out->prio = (mt_prio_t) r[TASK_PRIO];
    out->flags = r[TASK_FLAGS];
    out->module = r[TASK_MODULE];
    out->num_routes = r[TASK_NUM_ROUTES];
    out->routes = out->num_routes ? d->buf + get16(r + TASK_ROUTES_OFF) : NULL;
    out->init = init_len ? d->buf + get16(r + TASK_INIT_OFF) : NULL;
    out->init_len = init_len;
}

void appdesc_group(const appdesc_t *d, uint8_t i, appdesc_group_t *out)
{
    const uint8_t *r = d->buf + group_rec(d, i);
    out->rel_group = r[GROUP_REL_GROUP];
    out->num_members = r[GROUP_NUM_MEMBERS];
    out->members = d->buf + get16(r + GROUP_MEMBERS_OFF);
}
