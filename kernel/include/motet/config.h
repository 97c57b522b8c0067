/* SPDX-License-Identifier: MIT */
/*
 * Motet build configuration: every tunable with its default, then validation.
 *
 * Override any value with a compiler definition (-DMOTET_HEAP_SIZE=2048) or by
 * defining MOTET_USER_CONFIG as the name of a header that is included first.
 * Features are tested with `if (MOTET_X)` in C so that every variant compiles.
 */
#ifndef MOTET_CONFIG_H
#define MOTET_CONFIG_H

#ifdef MOTET_USER_CONFIG
#include MOTET_USER_CONFIG
#endif

/* Local task control blocks (slab cache size). */
#ifndef MOTET_MAX_TASKS
#define MOTET_MAX_TASKS 16
#endif

/* Control blocks of tasks that live on other modules. */
#ifndef MOTET_MAX_REMOTE_TASKS
#define MOTET_MAX_REMOTE_TASKS 16
#endif

/* Queued messages (slab cache size); immediate dispatch uses none. */
#ifndef MOTET_MAX_QUEUED_MSGS
#define MOTET_MAX_QUEUED_MSGS 32
#endif

/* Priority levels 0 (lowest) .. MOTET_PRIO_LEVELS-1 (application manager). */
#ifndef MOTET_PRIO_LEVELS
#define MOTET_PRIO_LEVELS 8
#endif

/* Application input ports 0 .. MOTET_APP_PORTS-1 per task. */
#ifndef MOTET_APP_PORTS
#define MOTET_APP_PORTS 16
#endif

/* Virtual timers (one slab cache for the whole module). */
#ifndef MOTET_MAX_TIMERS
#define MOTET_MAX_TIMERS 16
#endif

/* Local multicast memberships (pid, port, group). */
#ifndef MOTET_MAX_GROUP_MEMBERS
#define MOTET_MAX_GROUP_MEMBERS 16
#endif

/* Bytes of the task/payload heap. */
#ifndef MOTET_HEAP_SIZE
#define MOTET_HEAP_SIZE 4096
#endif

/* Event log: 1 compiles it in, 0 compiles it out entirely. */
#ifndef MOTET_EVENT_LOG
#define MOTET_EVENT_LOG 1
#endif

/* Event log ring entries (a power of two). */
#ifndef MOTET_LOG_ENTRIES
#define MOTET_LOG_ENTRIES 64
#endif

/* Largest application description the manager accepts, in bytes. */
#ifndef MOTET_APP_DESC_MAX
#define MOTET_APP_DESC_MAX 1024
#endif

/* This module's bus address (set per module by the build or at boot). */
#ifndef MOTET_MODULE_ID
#define MOTET_MODULE_ID 0
#endif

/* ---- validation ---- */
#if MOTET_MAX_TASKS < 2 || MOTET_MAX_TASKS > 200
#error "MOTET_MAX_TASKS must be 2..200 (pids are 8-bit, 0xF0.. are virtual)"
#endif
#if MOTET_PRIO_LEVELS < 2 || MOTET_PRIO_LEVELS > 16
#error "MOTET_PRIO_LEVELS must be 2..16 (the ready bitmap is 16 bits)"
#endif
#if MOTET_APP_PORTS < 1 || MOTET_APP_PORTS > 128
#error "MOTET_APP_PORTS must be 1..128"
#endif
#if MOTET_MAX_QUEUED_MSGS < 1 || MOTET_MAX_QUEUED_MSGS > 255
#error "MOTET_MAX_QUEUED_MSGS must be 1..255"
#endif
#if MOTET_MAX_TIMERS < 1 || MOTET_MAX_TIMERS > 255
#error "MOTET_MAX_TIMERS must be 1..255"
#endif
#if MOTET_HEAP_SIZE < 64 || MOTET_HEAP_SIZE > 32767
#error "MOTET_HEAP_SIZE must be 64..32767 bytes (block sizes are 15-bit)"
#endif
#if MOTET_EVENT_LOG != 0 && MOTET_EVENT_LOG != 1
#error "MOTET_EVENT_LOG must be 0 or 1"
#endif
#if (MOTET_LOG_ENTRIES & (MOTET_LOG_ENTRIES - 1)) != 0 || MOTET_LOG_ENTRIES < 4
#error "MOTET_LOG_ENTRIES must be a power of two, at least 4"
#endif

#endif /* MOTET_CONFIG_H */
