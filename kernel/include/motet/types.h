/* SPDX-License-Identifier: MIT */
/*
 * Motet's common types and error codes, shared by every kernel component.
 */
#ifndef MOTET_TYPES_H
#define MOTET_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Inline even under -Os, for the kernel's hot-path helpers whose call
 * would cost more than their body (every supported compiler is GCC). */
#define MT_INLINE inline __attribute__((always_inline))
/* Never inline: keeps a slow path's register saves out of its fast caller. */
#define MT_NOINLINE __attribute__((noinline))

typedef uint8_t mt_pid_t;    /* device-wide task id */
typedef uint8_t mt_port_t;   /* input port of a task */
typedef int8_t mt_prio_t;    /* 0 lowest .. MOTET_PRIO_LEVELS-1 highest */
typedef uint8_t mt_module_t; /* bus address of a module */

/* Error codes: every failing call returns one and logs an EV_ERROR event. */
enum {
    MT_OK = 0,
    MT_ERR_INVALID,       /* argument out of range */
    MT_ERR_NO_TASK,       /* no task with that pid */
    MT_ERR_NO_PORT,       /* no such input or output port */
    MT_ERR_QUEUE_FULL,    /* message pool exhausted */
    MT_ERR_NO_MEM,        /* heap exhausted */
    MT_ERR_NO_SLAB,       /* a metadata slab cache is exhausted */
    MT_ERR_NO_TIMER,      /* timer index beyond the four per task */
    MT_ERR_DOUBLE_FREE,   /* block or object already free */
    MT_ERR_BAD_POINTER,   /* pointer not from this allocator */
    MT_ERR_EXISTS,        /* pid already in use */
    MT_ERR_STATE,         /* operation not valid in the current state */
    MT_ERR_NO_PROGRAM,    /* unknown program id */
    MT_ERR_NO_ROUTE,      /* destination unreachable (remote, no bus) */
    MT_ERR_DESC_HEADER,   /* application description: bad header */
    MT_ERR_DESC_LENGTH,   /* ... a length or offset outside the buffer */
    MT_ERR_DESC_TASK,     /* ... a bad task description */
    MT_ERR_DESC_ROUTE,    /* ... a bad output route */
    MT_ERR_DESC_GROUP,    /* ... a bad multicast group */
    MT_ERR_DESC_CHECKSUM, /* ... checksum mismatch */
    MT_ERR_BUS_CORRUPT,   /* a bus frame failed its length or checksum check */
    MT_ERR_BUS_DOWN,      /* the destination module did not take a frame */
    MT_ERR_NOT_MOVABLE,   /* migration asked for a task without TASK_MOVABLE */
    MT_ERR_NOT_OWNER,     /* a task freed or resized a heap block it does not own, or a
                           * thread unlocked a mutex it does not hold */
    MT_ERR_NO_MODULE,     /* a task placed on a module the device does not have */
    MT_ERR_BUS_LOST,      /* an earlier message of this task's over this bus link was given
                           * up (bus.h, bus_link()); this send was not made */
    MT_ERR_TIMEOUT,       /* a wait ended before what it waited for came (at once when
                           * asked not to wait) */
    MT_ERR_FULL,          /* a message queue or semaphore is at its limit */
    MT_ERR_OWNER_DEAD,    /* a mutex was handed over because its holder exited holding it:
                           * the caller holds it now, but what it guards may be half-done */
    MT_ERR_STACK,         /* a thread overran its stack (its guard caught it) */
    MT_ERR_COUNT
};
/* An error code is a byte, as it is in a bus frame and in the event log: an
 * enum is an int, two registers on an 8-bit core for every handler's result
 * and every send's (docs/costs.md, "The immediate dispatch and the routes"). */
typedef uint8_t mt_err_t;

/* Pids. Application tasks get 0x01 .. 0xEF. The system range 0xF0 .. 0xFE
 * is global and the kernel's (0xF4 .. 0xFE reserved): no application task
 * is created, recorded as remote or killed under one (sched.h), and a
 * system task's timeout port (the migrator's tick, the manager's verdict
 * deadline) takes no task's send, and an interrupt's post only in place
 * of its own timer's expiry owed (migrate.h); an application description
 * uses those values as they are, while it numbers its own tasks
 * relatively (0, 1, ...). */
#define MT_PID_NONE      0x00u /* no task: the kernel itself */
#define MT_PID_FIRST_APP 0x10u /* first pid the application manager hands out */
#define MT_PID_LAST_APP  0xEFu
#define MT_PID_SYSTEM    0xF0u /* first global pid */
#define MT_PID_MULTICAST 0xF0u /* virtual: multicast manager, port = group */
#define MT_PID_TIMESYNC  0xF1u /* virtual: time synchronisation */
#define MT_PID_MIGRATOR  0xF2u /* the local task migrator's task (migrate.h) */
#define MT_PID_APPMGR    0xF3u /* the application manager task */
#define MT_PID_INVALID   0xFFu

/* Short, stable name of an error code ("MT_ERR_NO_MEM"). */
const char *mt_strerror(mt_err_t err);

#endif /* MOTET_TYPES_H */
