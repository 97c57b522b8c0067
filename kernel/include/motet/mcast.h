/* SPDX-License-Identifier: MIT */
/*
 * The multicast manager: messages to (MT_PID_MULTICAST, group) go to every
 * member of the group. Each module keeps only its local members; with a bus
 * the message goes out once and every module delivers it locally. Members
 * are served in priority order (highest first), each by the normal dispatch
 * rules.
 */
#ifndef MOTET_MCAST_H
#define MOTET_MCAST_H

#include "motet/log.h"
#include "motet/sched.h"

#if MOTET_MULTICAST
/* Add local task `pid`'s input `port` to `group`. MT_ERR_INVALID for a pid
 * that is not an application task's (0x01 .. MT_PID_LAST_APP) or a port
 * not an application's; MT_ERR_NO_SLAB when full. */
mt_err_t mcast_join(uint8_t group, mt_pid_t pid, mt_port_t port);
/* Local members of `group`. */
uint8_t mcast_member_count(uint8_t group);

#else
/* MOTET_MULTICAST=0: no groups. Joins and sends to a group are refused
 * (MT_ERR_NO_ROUTE, logged; a heap payload stays the sender's). */
static inline mt_err_t mcast_join(uint8_t group, mt_pid_t pid, mt_port_t port)
{
    (void) group;
    (void) pid;
    (void) port;
    return log_error(MT_ERR_NO_ROUTE);
}
static inline uint8_t mcast_member_count(uint8_t group)
{
    (void) group;
    return 0;
}
#endif /* MOTET_MULTICAST */

#endif /* MOTET_MCAST_H */
