/* SPDX-License-Identifier: MIT */
/*
 * Binary application descriptions: the strict parser and validator.
 *
 * The byte format (little-endian, documented in docs/app-format.md):
 *
 *   header  12 B  magic "MTAD", version 1, num_tasks, num_groups, 0,
 *                 total_len u16, crc16 u16 (CRC-16/CCITT-FALSE of the whole
 *                 description with this field taken as zero)
 *   tasks   12 B each: prog_id, rel_pid, priority, flags, module,
 *                 num_routes, routes_off u16, init_off u16, init_len u16
 *   groups   4 B each: rel_group, num_members, members_off u16
 *   data    routes (dst_pid, dst_port) and members (rel_pid, port), 2 B
 *           each, and init strings, anywhere after the records
 *
 * Task i's record is at 12 + 12 i, group j's at 12 + 12 num_tasks + 4 j;
 * record order is free, relative ids (rel_pid, rel_group) are what routes
 * and members name, and each must be a permutation of 0 .. n-1. Offsets
 * count from the start of the description; an empty routes table or init
 * string has offset 0. A route's dst_pid is a relative pid (< num_tasks),
 * MT_PID_MULTICAST (port = relative group), or a global pid above
 * MT_PID_SYSTEM other than MT_PID_INVALID, used as it is; the port of a
 * route to a task, like a member's port, is an application port, PORT_0 ..
 * PORT_LIMIT-1 (system ports are the kernel's).
 *
 * appdesc_parse() checks every length, offset and id before anything is
 * created; on error it names the byte offset of the offending field.
 *
 * Example:
 *
 *     appdesc_t d;
 *     if (appdesc_parse(buf, len, &d) == MT_OK)
 *         for (uint8_t i = 0; i < d.num_tasks; i++) appdesc_task(&d, i, &t);
 */
#ifndef MOTET_APPDESC_H
#define MOTET_APPDESC_H

#include "motet/sched.h"

#define APPDESC_MAGIC       "MTAD"
#define APPDESC_VERSION     1u
#define APPDESC_HEADER_SIZE 12u
#define APPDESC_TASK_SIZE   12u
#define APPDESC_GROUP_SIZE  4u
#define APPDESC_ENTRY_SIZE  2u

typedef struct appdesc {
    const uint8_t *buf;
    uint16_t len;
    uint8_t num_tasks;
    uint8_t num_groups;
    uint16_t bad_offset; /* after a failed parse: offset of the bad field */
} appdesc_t;

typedef struct appdesc_task {
    uint8_t prog_id;
    uint8_t rel_pid;
    mt_prio_t prio;
    uint8_t flags;
    mt_module_t module;
    uint8_t num_routes;
    const uint8_t *routes; /* num_routes (dst_pid, dst_port) pairs */
    const uint8_t *init;   /* init string, NULL when init_len == 0 */
    uint16_t init_len;
} appdesc_task_t;

typedef struct appdesc_group {
    uint8_t rel_group;
    uint8_t num_members;
    const uint8_t *members; /* num_members (rel_pid, port) pairs */
} appdesc_group_t;

/* Validate `len` bytes at `buf` and fill *out (which keeps pointing into
 * buf). MT_ERR_DESC_* on the first violation, with out->bad_offset set. */
mt_err_t appdesc_parse(const uint8_t *buf, size_t len, appdesc_t *out);
/* Task record i (< num_tasks) of a parsed description. */
void appdesc_task(const appdesc_t *d, uint8_t i, appdesc_task_t *out);
/* Group record i (< num_groups) of a parsed description. */
void appdesc_group(const appdesc_t *d, uint8_t i, appdesc_group_t *out);
/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of n bytes. */
uint16_t appdesc_crc16(const uint8_t *data, size_t n);

#endif /* MOTET_APPDESC_H */
