/* SPDX-License-Identifier: MIT */
/*
 * Multicast: local group membership and delivery in priority order.
 *
 * Only this module's members are recorded (the other modules record theirs),
 * which keeps the table small; the bus manager sends a multicast once and
 * every module calls mcast_deliver() for its own members.
 */
#include <string.h>

#include "bus_internal.h"
#include "mcast_internal.h"
#include "migrate_bus.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/migrate.h"
#include "sched_internal.h"

#if MOTET_MULTICAST

typedef struct member {
    mt_pid_t pid; /* MT_PID_NONE marks a free entry */
    mt_port_t port;
    uint8_t group;
} member_t;

static member_t members[MOTET_MAX_GROUP_MEMBERS];
/* One past the last entry in use: scans stop there, so a delivery reads
 * as many entries as the module has memberships, not the whole table.
 * Entries keep their place while in use: members of one level are
 * delivered in the order they joined. */
static uint8_t members_end;

void mcast_init(void)
{
    memset(members, 0, sizeof members);
    members_end = 0;
}

mt_err_t mcast_join(uint8_t group, mt_pid_t pid, mt_port_t port)
{
    /* Members are application tasks: a virtual or reserved pid has no task
     * to deliver to, and a system task's ports take no group's message. */
    if (!task_pid_is_app(pid) || !member_port_ok(port)) return log_error(MT_ERR_INVALID);
    for (uint8_t i = 0; i < MOTET_MAX_GROUP_MEMBERS; i++) {
        if (members[i].pid != MT_PID_NONE) continue;
        members[i] = (member_t){.pid = pid, .port = port, .group = group};
        if (i >= members_end) members_end = (uint8_t) (i + 1u);
        return MT_OK;
    }
    return log_error(MT_ERR_NO_SLAB);
}

unsigned mcast_leave_all(mt_pid_t pid)
{
    unsigned n = 0;
    for (uint8_t i = 0; i < members_end; i++) {
        if (members[i].pid != pid || pid == MT_PID_NONE) continue;
        members[i].pid = MT_PID_NONE;
        n++;
    }
    while (members_end > 0 && members[members_end - 1u].pid == MT_PID_NONE) members_end--;
    return n;
}

uint8_t mcast_member_count(uint8_t group)
{
    uint8_t n = 0;
    for (uint8_t i = 0; i < members_end; i++)
        if (members[i].pid != MT_PID_NONE && members[i].group == group) n++;
    return n;
}

/* Under the lock: the probe sees the table before or after a kill at an
 * interrupt's exit, never halfway (task_find_locked()). */
static mt_prio_t prio_of(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    const task_t *t = sched_find_task(pid);
    mt_prio_t prio = t ? t->prio : -1;
    port_irq_restore(s);
    return prio;
}

/* Whom a delivery addresses: the members as they were when it began, so
 * that an entry freed and taken by another task under an earlier member's
 * handler does not redirect it. */
typedef struct target {
    mt_pid_t pid;
    mt_port_t port;
} target_t;

/* The group's members, highest priority first (insertion sort: groups are
 * a handful of entries). A member not above the last one so far (all of
 * them, when the group shares one level) is appended without looking up
 * the others again. */
static uint8_t collect_sorted(uint8_t group, target_t *order)
{
    uint8_t n = 0;
    mt_prio_t last_prio = 0; /* of order[n - 1] */
    for (uint8_t i = 0; i < members_end; i++) {
        if (members[i].pid == MT_PID_NONE || members[i].group != group) continue;
        target_t m = {members[i].pid, members[i].port};
        uint8_t j = n++;
        mt_prio_t prio = prio_of(m.pid);
        if (j == 0 || prio <= last_prio) {
            order[j] = m;
            last_prio = prio;
            continue;
        }
        while (j > 0 && prio_of(order[j - 1].pid) < prio) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = m;
    }
    return n;
}

mt_err_t mcast_deliver(uint8_t group, void *data, uint16_t len, uint8_t flags, bool from_isr)
{
    mt_pid_t sender = from_isr ? MT_PID_NONE : sched_current_pid();
    mt_err_t first = payload_check(data, len, flags, sender);
    if (first) return first;
    target_t order[MOTET_MAX_GROUP_MEMBERS];
    uint8_t n = collect_sorted(group, order);
    /* Each member gets the payload borrowed; one that must wait copies it.
     * A heap payload handed to the group is freed once all have it. */
    uint8_t borrowed = (uint8_t) (flags & (uint8_t) ~MSG_HEAP);
    for (uint8_t k = 0; k < n; k++) {
        mt_pid_t pid = order[k].pid;
        mt_port_t port = order[k].port;
        mt_err_t err;
        if (!from_isr) {
            err = sched_send_local(pid, port, data, len, borrowed);
        } else {
            task_t *t = sched_find_task(pid);
            err = t ? sched_deliver(t, pid, port, data, len, borrowed, true)
                    : log_error(MT_ERR_NO_TASK);
        }
        if (err && !first) first = err;
    }
    payload_consumed(data, flags, sender);
    return first;
}

mt_err_t mcast_deliver_from(mt_pid_t src, uint8_t group, const void *data, uint16_t len)
{
    target_t order[MOTET_MAX_GROUP_MEMBERS];
    uint8_t n = collect_sorted(group, order);
    mt_err_t first = MT_OK;
    for (uint8_t k = 0; k < n; k++) {
        if (migrate_bus_cast_taken(order[k].pid)) continue; /* a migration's copy: recorded */
        mt_err_t err = sched_post_cast(src, order[k].pid, order[k].port, data, len);
        if (err && !first) first = err;
    }
    return first;
}

uint8_t mcast_memberships(mt_pid_t pid, uint8_t *pairs, uint8_t max)
{
    uint8_t n = 0;
    for (uint8_t i = 0; i < members_end && n < max; i++) {
        if (members[i].pid != pid || pid == MT_PID_NONE) continue;
        pairs[2 * n] = members[i].group;
        pairs[2 * n + 1] = members[i].port;
        n++;
    }
    return n;
}

#endif /* MOTET_MULTICAST */
