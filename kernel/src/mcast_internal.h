/* SPDX-License-Identifier: MIT */
/*
 * The multicast manager's calls for the kernel's own components (mcast.h
 * is the public side): start-up, a group's local delivery, and a task's
 * memberships, which a kill drops and a migration carries.
 */
#ifndef MOTET_MCAST_INTERNAL_H
#define MOTET_MCAST_INTERNAL_H

#include "motet/log.h"
#include "motet/mcast.h"

#if MOTET_MULTICAST
/* Forget every membership; boot only. */
void mcast_init(void);
/* Remove every membership of `pid` (kill, migration); returns how many. */
unsigned mcast_leave_all(mt_pid_t pid);
/* Migration: write up to `max` memberships of `pid` as (group, port) byte
 * pairs; returns how many. */
uint8_t mcast_memberships(mt_pid_t pid, uint8_t *pairs, uint8_t max);
/* Deliver to the local members of `group`; returns the first error or MT_OK. */
mt_err_t mcast_deliver(uint8_t group, void *data, uint16_t len, uint8_t flags, bool from_isr);

#else
/* MOTET_MULTICAST=0: no groups (mcast.h), so that the rest of the kernel
 * calls these without tests of its own; a send to a group is refused
 * (MT_ERR_NO_ROUTE, logged). */
static inline void mcast_init(void)
{
}
static inline unsigned mcast_leave_all(mt_pid_t pid)
{
    (void) pid;
    return 0;
}
static inline uint8_t mcast_memberships(mt_pid_t pid, uint8_t *pairs, uint8_t max)
{
    (void) pid;
    (void) pairs;
    (void) max;
    return 0;
}
static inline mt_err_t mcast_deliver(uint8_t group, void *data, uint16_t len, uint8_t flags,
                                     bool from_isr)
{
    (void) group;
    (void) data;
    (void) len;
    (void) flags;
    (void) from_isr;
    return log_error(MT_ERR_NO_ROUTE);
}
#endif /* MOTET_MULTICAST */

#endif /* MOTET_MCAST_INTERNAL_H */
