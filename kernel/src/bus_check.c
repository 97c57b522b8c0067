/* SPDX-License-Identifier: MIT */
/*
 * What a frame from another module may carry (bus_isr_rx() asks before
 * anything acts on it): each kind's destination, pid and port, and the
 * fields of the application manager's frames that name modules; the
 * migrator checks its own payloads (migrate_bus_valid()).
 */
#include "bus_internal.h"
#include "migrate_internal.h"

#if MOTET_BUS

static bool member(mt_module_t m)
{
    return m < MOTET_BUS_MODULES && (bus_modules() & ((uint32_t) 1u << m));
}

/* A task that may send: no virtual pid and not the invalid one. */
static bool sender_pid_ok(mt_pid_t pid)
{
    return pid != MT_PID_MULTICAST && pid != MT_PID_TIMESYNC && pid != MT_PID_INVALID;
}

/* An ASK's mask (u32 little-endian): at least one module, and only
 * modules of the device. */
static bool asked_ok(const uint8_t *mask)
{
    uint32_t asked = (uint32_t) mask[0] | (uint32_t) mask[1] << 8 | (uint32_t) mask[2] << 16 |
                     (uint32_t) mask[3] << 24;
    return asked && !(asked & ~bus_modules());
}

/* What every frame of a kind carries, as this kernel sends it: a frame
 * from another module that differs is no frame of ours, and nothing may
 * act on it. DATA goes to one module and to a task's input port (or to
 * the migrator, which knows its own payloads); a DATA frame for a virtual
 * pid or the application manager would have this module multicast, take
 * over the global clock or load a description on another's behalf. The
 * rest go to every module, each to the one virtual pid that takes it. The
 * priority byte orders the sender's queue only and is never read here. */
bool bus_frame_allowed(const bus_frame_t *f)
{
    bool broadcast = f->dst == BUS_BROADCAST;
    if (!sender_pid_ok(f->src_pid)) return false;
    switch (f->type) {
    case BUS_FRAME_DATA:
        if (broadcast) return false;
        if (f->pid == MT_PID_MIGRATOR) return migrate_bus_valid(f);
        return f->pid != MT_PID_NONE && f->pid < MT_PID_SYSTEM && f->port < PORT_LIMIT;
    case BUS_FRAME_MCAST:
        if (f->pid == MT_PID_MIGRATOR) return broadcast && migrate_bus_valid(f);
        return broadcast && f->pid == MT_PID_MULTICAST;
    case BUS_FRAME_SYNC:
        return broadcast && f->pid == MT_PID_TIMESYNC && f->port == PORT_0;
    case BUS_FRAME_DESC: /* its port byte is the loader's number for the load */
        return broadcast && f->pid == MT_PID_APPMGR;
    case BUS_FRAME_CREATED: /* its outcome (bus_frame_decode() checked the length):
                             * an mt_err_t, a relative task and its module, then
                             * the load's loader and number */
        return broadcast && f->pid == MT_PID_APPMGR && f->port == BUS_APPMGR_PORT_VERDICT &&
               f->payload[0] < MT_ERR_COUNT && f->payload[2] < MOTET_BUS_MODULES &&
               member(f->payload[BUS_APP_OUTCOME_SIZE]);
    case BUS_FRAME_ASK: /* the load (its loader and number), the modules asked:
                         * some, all of the device's */
        return broadcast && f->pid == MT_PID_APPMGR && f->port == BUS_APPMGR_PORT_VERDICT &&
               member(f->payload[0]) && asked_ok(f->payload + 2);
    default:
        return false;
    }
}

#endif /* MOTET_BUS */
