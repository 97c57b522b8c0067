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

/* Control blocks of tasks that live on other modules; 0 leaves remote
 * tasks out (their table, cache and routing code): a single module. */
#ifndef MOTET_MAX_REMOTE_TASKS
#define MOTET_MAX_REMOTE_TASKS 16
#endif

/* Queued messages (slab cache size); immediate dispatch uses none. */
#ifndef MOTET_MAX_QUEUED_MSGS
#define MOTET_MAX_QUEUED_MSGS 32
#endif

/* Priority levels 0 (lowest) .. MOTET_PRIO_LEVELS-1 (application manager),
 * shared by tasks and threads: 2..32. Each level costs a queue head and
 * tail (and, with threads, a ready FIFO); the level bitmaps grow from a
 * byte to 16 and 32 bits past 8 and 16 levels. */
#ifndef MOTET_PRIO_LEVELS
#define MOTET_PRIO_LEVELS 8
#endif

/* Application input ports 0 .. MOTET_APP_PORTS-1 per task. */
#ifndef MOTET_APP_PORTS
#define MOTET_APP_PORTS 16
#endif

/* Virtual timers (one slab cache for the whole module): the tasks' and
 * the threads' kernel timers. The system tasks' own (with MOTET_BUS: the
 * application manager's verdict deadline and the migrator's tick) have
 * blocks of their own besides these, so that they never fail for want of
 * one, and the applications get every one of these while a load or a
 * migration runs. */
#ifndef MOTET_MAX_TIMERS
#define MOTET_MAX_TIMERS 16
#endif

/* Multicast (mcast.h): 1 compiles in groups and MT_PID_MULTICAST; 0 leaves
 * their table and code out, and a send to the multicast pid or a join is
 * refused (MT_ERR_NO_ROUTE, logged). */
#ifndef MOTET_MULTICAST
#define MOTET_MULTICAST 1
#endif

/* Local multicast memberships (pid, port, group). */
#ifndef MOTET_MAX_GROUP_MEMBERS
#define MOTET_MAX_GROUP_MEMBERS 16
#endif

/* Bytes of the task/payload heap. */
#ifndef MOTET_HEAP_SIZE
#define MOTET_HEAP_SIZE 4096
#endif

/* Heap payloads (sched.h, MSG_HEAP): 1 lets a sender hand a heap block it
 * owns to the receiver with the message, zero copy; 0 leaves out every path
 * that moves a block's owner on a send (the sender's block becomes the
 * kernel's, then the handler's), and a send with MSG_HEAP is refused
 * (MT_ERR_INVALID, logged) with the block still the sender's. Borrowed
 * payloads work either way: one that must wait is copied, to the heap when
 * it is larger than a message block holds, and sched_take() keeps it. */
#ifndef MOTET_HEAP_PAYLOADS
#define MOTET_HEAP_PAYLOADS 1
#endif

/* Heap pointer checks in O(1) through a bitmap of live block starts (one bit
 * per alignment granule: heap/64 bytes on 8-byte alignment); 0 saves that
 * RAM and checks by walking the heap instead. */
#ifndef MOTET_MEM_START_MAP
#define MOTET_MEM_START_MAP 1
#endif

/* Event log: 1 compiles it in, 0 compiles it out entirely. */
#ifndef MOTET_EVENT_LOG
#define MOTET_EVENT_LOG 1
#endif

/* Statistics kept for benchmarks and tests beside the event log: the
 * count of compare interrupts (timer_interrupt_count()), the slab caches'
 * names for reports (kernel/src/slab.h) and, with threads, the count of context
 * switches (thread_switch_count(): a 32-bit increment on every switch).
 * 0 leaves the counters and their updates out, and the names (NULL). They
 * follow the event log by default: a build that observes its kernel keeps
 * both, a deployed one (log off) pays for neither on its interrupt and
 * switch paths; set it to 1 to count without the log. */
#ifndef MOTET_STATS
#define MOTET_STATS MOTET_EVENT_LOG
#endif

/* Event log ring entries (a power of two). */
#ifndef MOTET_LOG_ENTRIES
#define MOTET_LOG_ENTRIES 64
#endif

/* The application manager and its description loader (appmgr.h,
 * kernel/src/appdesc.h, module.h's module_main()): 1 starts the manager
 * task at boot; 0 leaves them out, for firmware that creates its tasks
 * itself (sched_task_create()). */
#ifndef MOTET_APPMGR
#define MOTET_APPMGR 1
#endif

/* Largest application description the manager accepts, in bytes. */
#ifndef MOTET_APP_DESC_MAX
#define MOTET_APP_DESC_MAX 1024
#endif

/* This module's bus address (set per module by the build or at boot). */
#ifndef MOTET_MODULE_ID
#define MOTET_MODULE_ID 0
#endif

/* Multi-module bus: 1 compiles in the bus manager (remote routing, multicast
 * over the bus, time sync, application loading across modules); the port must
 * then define PORT_HAS_BUS and implement the bus hooks of port.h. 0 leaves it
 * all out: single-module builds, ports without a bus driver yet. */
#ifndef MOTET_BUS
#define MOTET_BUS 0
#endif

/* The CRC-16 of frames and descriptions by a 256-entry table (512 bytes
 * of constants, in program memory where the port keeps them apart:
 * PORT_CONST_TABLE) rather than by folded shifts: on an ATmega128 about
 * 20 cycles a byte against 53. A bus build seals and checks every byte
 * it sends and receives; without the bus only descriptions are checked. */
#ifndef MOTET_CRC_TABLE
#define MOTET_CRC_TABLE MOTET_BUS
#endif

/* Frames the bus manager can hold for sending (its priority queue). */
#ifndef MOTET_BUS_TX_QUEUE
#define MOTET_BUS_TX_QUEUE 8
#endif

/* Largest payload of one bus frame: a description travels in one frame. */
#ifndef MOTET_BUS_PAYLOAD_MAX
#define MOTET_BUS_PAYLOAD_MAX MOTET_APP_DESC_MAX
#endif

/* Times a frame is sent while receivers reject it as corrupt; then it is
 * given up and logged (MT_ERR_BUS_CORRUPT). */
#ifndef MOTET_BUS_RETRIES
#define MOTET_BUS_RETRIES 8
#endif

/* The verdict deadline (bus.h, bus_app_deadline()): milliseconds a module
 * taking part in an application's load waits for the outcomes it lacks
 * before it asks for them again; after MOTET_BUS_RETRIES such asks the
 * load fails there (MT_ERR_TIMEOUT). Ten TDMA rounds of the example
 * devices' bus. */
#ifndef MOTET_BUS_VERDICT_TIMEOUT_MS
#define MOTET_BUS_VERDICT_TIMEOUT_MS 200
#endif

/* Tasks whose given-up messages (bus.h, bus_link()) the bus manager can
 * remember until each is told, by its next send over the same link. */
#ifndef MOTET_BUS_LOST_NOTES
#define MOTET_BUS_LOST_NOTES 4
#endif

/* Earlier failures of application loads (docs/bus.md, Lost frames) whose
 * copies are still in the transmit queue that the bus manager follows to
 * their end, once a newer failure has taken their place, so that each is
 * logged unsent (EV_UNSENT) exactly when no copy reached the modules; one
 * more is followed no more, logged (EV_UNTRACKED). Each one followed has a
 * copy in the transmit queue, so MOTET_BUS_TX_QUEUE places never run out;
 * a module short of RAM may keep fewer (4 B each; the AVR port keeps 2). */
#ifndef MOTET_BUS_FOLLOWED
#define MOTET_BUS_FOLLOWED MOTET_BUS_TX_QUEUE
#endif

/* Module addresses are 0 .. MOTET_BUS_MODULES-1 (membership is a bit mask). */
#ifndef MOTET_BUS_MODULES
#define MOTET_BUS_MODULES 16
#endif

/* Task migration (MOTET_BUS builds, migrate.h): migrations one module
 * takes part in at once (as source, destination or bystander). */
#ifndef MOTET_MIGRATE_SLOTS
#define MOTET_MIGRATE_SLOTS 2
#endif

/* Protocol records waiting for the migrator task (its input ring). */
#ifndef MOTET_MIGRATE_RING
#define MOTET_MIGRATE_RING 16
#endif

/* Milliseconds a source waits for replies before it asks again; after
 * MOTET_MIGRATE_ROUNDS such waits the migration fails. */
#ifndef MOTET_MIGRATE_TIMEOUT_MS
#define MOTET_MIGRATE_TIMEOUT_MS 20
#endif
#ifndef MOTET_MIGRATE_ROUNDS
#define MOTET_MIGRATE_ROUNDS 4
#endif

/* Milliseconds the bus may take to carry one frame of a migration to its
 * end (sent, or unreachable: a TDMA round and the acknowledgement timeout,
 * 20 ms on the example devices). A source that has not decided within
 * 2 x MOTET_MIGRATE_ROUNDS x MOTET_MIGRATE_TIMEOUT_MS plus this much per
 * chunk of the image since the freeze abandons the migration
 * (MT_ERR_TIMEOUT): the task resumes there. */
#ifndef MOTET_MIGRATE_FRAME_MS
#define MOTET_MIGRATE_FRAME_MS 20
#endif

/* Image bytes per bus frame of a migration (at most the frame payload
 * less 4 bytes of header); smaller chunks need less heap on the way. */
#ifndef MOTET_MIGRATE_CHUNK
#define MOTET_MIGRATE_CHUNK (MOTET_BUS_PAYLOAD_MAX - 4)
#endif

/* Chunks of a migration's image on the bus at once: the next is encoded
 * while the one before crosses and is checked at the destination (each
 * takes a frame's heap until it ends). 1: one at a time. */
#ifndef MOTET_MIGRATE_WINDOW
#define MOTET_MIGRATE_WINDOW 2
#endif

/* Time sync: samples kept for the offset and drift fit (1: offset only). */
#ifndef MOTET_TIMESYNC_WINDOW
#define MOTET_TIMESYNC_WINDOW 8
#endif

/* Threads (thread.h, docs/threads.md): 1 compiles in blocking contexts with
 * their own stacks, scheduled in the tasks' priority space; the port must
 * define PORT_HAS_THREADS and the context hooks of port.h. 0 leaves no
 * thread code or data at all. */
#ifndef MOTET_THREADS
#define MOTET_THREADS 0
#endif

/* Thread control blocks, 1..200: each costs one control block of RAM
 * (its stack is the application's). */
#ifndef MOTET_MAX_THREADS
#define MOTET_MAX_THREADS 4
#endif

/* Thread scheduling policies (MOTET_THREAD_POLICY), one per build. */
#define MOTET_POLICY_FIFO   1 /* run to completion in arrival order (event-driven baseline) */
#define MOTET_POLICY_PRIO   2 /* fixed priority; round robin among equals if MOTET_THREAD_RR */
#define MOTET_POLICY_MANTIS 3 /* the original MANTIS kernel, as a measured baseline */
#define MOTET_POLICY_RETOS  4 /* event-boosting dynamic priorities beside FIFO/RR classes */
#define MOTET_POLICY_VOP    5 /* value of preemption: preemption-free periods */

#ifndef MOTET_THREAD_POLICY
#define MOTET_THREAD_POLICY MOTET_POLICY_PRIO
#endif

/* Fixed-priority policy: 1 compiles in the slice timer, so that threads of
 * class THREAD_CLASS_RR share the CPU with equals in slices. */
#ifndef MOTET_THREAD_RR
#define MOTET_THREAD_RR 0
#endif

/* 1 if the policy charges the running thread for its CPU time (it reads the
 * clock at every switch) and re-arms a kernel timer for its slice or
 * quantum, at interrupt exits too: round robin, event boosting, value of
 * preemption. The ports size a thread's interrupt allowance by it. */
#define MOTET_THREAD_TIMED                                                                         \
    ((MOTET_THREAD_POLICY == MOTET_POLICY_PRIO && MOTET_THREAD_RR) ||                              \
     MOTET_THREAD_POLICY == MOTET_POLICY_RETOS || MOTET_THREAD_POLICY == MOTET_POLICY_VOP)

/* Time slice (round robin), default quantum (event boosting, value of
 * preemption), in microseconds. */
#ifndef MOTET_THREAD_SLICE_US
#define MOTET_THREAD_SLICE_US 10000
#endif

/* 1 compiles in thread_sleep() (one virtual timer per sleeping thread). */
#ifndef MOTET_THREAD_SLEEP
#define MOTET_THREAD_SLEEP 1
#endif

/* 1 counts the context switches by cause (thread_switch_stats()) and, per
 * thread, the involuntary switches that gave it the CPU (thread_cuts_to()):
 * 16 B of RAM, 4 B per thread and a few counters on every switch, for
 * benchmarks that tell switches apart by cause; needs MOTET_STATS. 0: only
 * the total (thread_switch_count(), with MOTET_STATS) is counted. */
#ifndef MOTET_THREAD_CUT_STATS
#define MOTET_THREAD_CUT_STATS 0
#endif

/* Value of preemption: quanta of thread work between the changes of mode
 * (normal round robin <-> preemption-free period). */
#ifndef MOTET_VOP_DELTA_QUANTA
#define MOTET_VOP_DELTA_QUANTA 100
#endif

/* Value of preemption: 0 runs the algorithm as written; N > 0 the variant
 * that defers short jobs until the long ones have done N quanta of work
 * while a short one waited (kernel/src/thread_policy_vop.c). */
#ifndef MOTET_VOP_DEFER_QUANTA
#define MOTET_VOP_DEFER_QUANTA 0
#endif

/* Timer mode: 0 tickless (the compare is armed for the nearest deadline),
 * 1 periodic (a tick every MOTET_TICK_US serves the timers due). */
#ifndef MOTET_TIMER_PERIODIC
#define MOTET_TIMER_PERIODIC 0
#endif

/* Run budgets (timer_set_budget()): 1 lets a task be given a budget, and
 * the compare interrupt then checks, every MOTET_BUDGET_CHECK_US while a
 * task runs, how long the task on top of the stack has been there, and logs
 * EV_BUDGET once when it overran. 0 (default): no code, no check; the
 * dispatch paths never change either way. */
#ifndef MOTET_TASK_BUDGET
#define MOTET_TASK_BUDGET 0
#endif

/* Run budgets: tasks that may have one at a time. */
#ifndef MOTET_BUDGET_TASKS
#define MOTET_BUDGET_TASKS 4
#endif

/* Run budgets: the period of the check, in microseconds. */
#ifndef MOTET_BUDGET_CHECK_US
#define MOTET_BUDGET_CHECK_US 1000
#endif

/* Periodic timer: the tick, in microseconds. */
#ifndef MOTET_TICK_US
#define MOTET_TICK_US 10000
#endif

/* Debug assertions of the kernel's own invariants, ones no input can
 * break (MT_DEBUG_ASSERT(), kernel/src/debug_assert.h): on in a debug
 * build (CMake's Debug type, kernel/CMakeLists.txt), off otherwise, so
 * that release and benchmark images hold none of them. */
#ifndef MOTET_DEBUG_ASSERTS
#define MOTET_DEBUG_ASSERTS 0
#endif

/* ---- validation ---- */
#if MOTET_MAX_TASKS < 2 || MOTET_MAX_TASKS > 200
#error "MOTET_MAX_TASKS must be 2..200 (pids are 8-bit, 0xF0.. are virtual)"
#endif
#if MOTET_MAX_REMOTE_TASKS < 0 || MOTET_MAX_REMOTE_TASKS > 200
#error "MOTET_MAX_REMOTE_TASKS must be 0..200"
#endif
#if MOTET_PRIO_LEVELS < 2 || MOTET_PRIO_LEVELS > 32
#error "MOTET_PRIO_LEVELS must be 2..32 (the level bitmaps are at most 32 bits)"
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
#if MOTET_HEAP_PAYLOADS != 0 && MOTET_HEAP_PAYLOADS != 1
#error "MOTET_HEAP_PAYLOADS must be 0 or 1"
#endif
#if MOTET_MEM_START_MAP != 0 && MOTET_MEM_START_MAP != 1
#error "MOTET_MEM_START_MAP must be 0 or 1"
#endif
#if MOTET_EVENT_LOG != 0 && MOTET_EVENT_LOG != 1
#error "MOTET_EVENT_LOG must be 0 or 1"
#endif
#if (MOTET_LOG_ENTRIES & (MOTET_LOG_ENTRIES - 1)) != 0 || MOTET_LOG_ENTRIES < 4
#error "MOTET_LOG_ENTRIES must be a power of two, at least 4"
#endif
#if MOTET_BUS != 0 && MOTET_BUS != 1
#error "MOTET_BUS must be 0 or 1"
#endif
#if MOTET_MULTICAST != 0 && MOTET_MULTICAST != 1
#error "MOTET_MULTICAST must be 0 or 1"
#endif
#if MOTET_APPMGR != 0 && MOTET_APPMGR != 1
#error "MOTET_APPMGR must be 0 or 1"
#endif
#if MOTET_STATS != 0 && MOTET_STATS != 1
#error "MOTET_STATS must be 0 or 1"
#endif
#if MOTET_BUS && (!MOTET_MULTICAST || !MOTET_APPMGR || MOTET_MAX_REMOTE_TASKS < 1)
#error "MOTET_BUS needs MOTET_MULTICAST, MOTET_APPMGR and MOTET_MAX_REMOTE_TASKS >= 1"
#endif
#if MOTET_BUS_TX_QUEUE < 1 || MOTET_BUS_TX_QUEUE > 64
#error "MOTET_BUS_TX_QUEUE must be 1..64"
#endif
#if MOTET_BUS_PAYLOAD_MAX < MOTET_APP_DESC_MAX || MOTET_BUS_PAYLOAD_MAX > 60000
#error "MOTET_BUS_PAYLOAD_MAX must be MOTET_APP_DESC_MAX..60000 (a description is one frame)"
#endif
#if MOTET_BUS_RETRIES < 1 || MOTET_BUS_RETRIES > 255
#error "MOTET_BUS_RETRIES must be 1..255"
#endif
#if MOTET_BUS_VERDICT_TIMEOUT_MS < 1 || MOTET_BUS_VERDICT_TIMEOUT_MS > 60000
#error "MOTET_BUS_VERDICT_TIMEOUT_MS must be 1..60000"
#endif
#if MOTET_BUS_LOST_NOTES < 1 || MOTET_BUS_LOST_NOTES > 32
#error "MOTET_BUS_LOST_NOTES must be 1..32"
#endif
#if MOTET_BUS_FOLLOWED < 1 || MOTET_BUS_FOLLOWED > MOTET_BUS_TX_QUEUE
#error "MOTET_BUS_FOLLOWED must be 1..MOTET_BUS_TX_QUEUE (each one followed has a copy queued)"
#endif
#if MOTET_BUS_MODULES < 2 || MOTET_BUS_MODULES > 32
#error "MOTET_BUS_MODULES must be 2..32 (membership is a 32-bit mask)"
#endif
#if MOTET_MODULE_ID >= MOTET_BUS_MODULES
#error "MOTET_MODULE_ID must be below MOTET_BUS_MODULES"
#endif
#if MOTET_MIGRATE_SLOTS < 1 || MOTET_MIGRATE_SLOTS > 16
#error "MOTET_MIGRATE_SLOTS must be 1..16"
#endif
#if MOTET_MIGRATE_RING < 4 || MOTET_MIGRATE_RING > 255
#error "MOTET_MIGRATE_RING must be 4..255"
#endif
#if MOTET_MIGRATE_TIMEOUT_MS < 1 || MOTET_MIGRATE_ROUNDS < 1 || MOTET_MIGRATE_ROUNDS > 255
#error "MOTET_MIGRATE_TIMEOUT_MS must be at least 1, MOTET_MIGRATE_ROUNDS 1..255"
#endif
#if MOTET_MIGRATE_FRAME_MS < 1 || MOTET_MIGRATE_FRAME_MS > 1000
#error "MOTET_MIGRATE_FRAME_MS must be 1..1000"
#endif
#if MOTET_MIGRATE_CHUNK < 64 || MOTET_MIGRATE_CHUNK > MOTET_BUS_PAYLOAD_MAX - 4
#error "MOTET_MIGRATE_CHUNK must be 64..MOTET_BUS_PAYLOAD_MAX-4"
#endif
#if MOTET_MIGRATE_WINDOW < 1 || MOTET_MIGRATE_WINDOW > MOTET_BUS_TX_QUEUE
#error "MOTET_MIGRATE_WINDOW must be 1..MOTET_BUS_TX_QUEUE"
#endif
#if MOTET_TIMESYNC_WINDOW < 1 || MOTET_TIMESYNC_WINDOW > 32
#error "MOTET_TIMESYNC_WINDOW must be 1..32"
#endif

#if MOTET_THREADS != 0 && MOTET_THREADS != 1
#error "MOTET_THREADS must be 0 or 1"
#endif
#if MOTET_MAX_THREADS < 1 || MOTET_MAX_THREADS > 200
#error "MOTET_MAX_THREADS must be 1..200 (a thread's id is its kernel timer id, below 0xF0)"
#endif
#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_RETOS && MOTET_PRIO_LEVELS > 28
#error "MOTET_POLICY_RETOS keys a level's 9 sub-levels in a byte: MOTET_PRIO_LEVELS must be <= 28"
#endif
#if MOTET_THREAD_POLICY < MOTET_POLICY_FIFO || MOTET_THREAD_POLICY > MOTET_POLICY_VOP
#error "MOTET_THREAD_POLICY must be one of MOTET_POLICY_FIFO .. MOTET_POLICY_VOP"
#endif
#if MOTET_THREAD_RR != 0 && MOTET_THREAD_RR != 1
#error "MOTET_THREAD_RR must be 0 or 1"
#endif
#if MOTET_THREAD_RR && MOTET_THREAD_POLICY != MOTET_POLICY_PRIO
#error "MOTET_THREAD_RR belongs to MOTET_POLICY_PRIO (the other policies slice on their own)"
#endif
#if MOTET_THREAD_SLICE_US < 100 || MOTET_THREAD_SLICE_US > 1000000
#error "MOTET_THREAD_SLICE_US must be 100..1000000"
#endif
#if MOTET_THREAD_SLEEP != 0 && MOTET_THREAD_SLEEP != 1
#error "MOTET_THREAD_SLEEP must be 0 or 1"
#endif
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS && !MOTET_THREAD_SLEEP
#error "the MANTIS baseline keeps its sleep queue: MOTET_THREAD_SLEEP must be 1"
#endif
#if MOTET_THREAD_CUT_STATS != 0 && MOTET_THREAD_CUT_STATS != 1
#error "MOTET_THREAD_CUT_STATS must be 0 or 1"
#endif
#if MOTET_THREAD_CUT_STATS && !MOTET_STATS
#error "MOTET_THREAD_CUT_STATS splits thread_switch_count(): it needs MOTET_STATS=1"
#endif
#if MOTET_VOP_DELTA_QUANTA < 1 || MOTET_VOP_DELTA_QUANTA > 10000
#error "MOTET_VOP_DELTA_QUANTA must be 1..10000"
#endif
#if MOTET_VOP_DEFER_QUANTA < 0 || MOTET_VOP_DEFER_QUANTA > 10000
#error "MOTET_VOP_DEFER_QUANTA must be 0..10000"
#endif
#if MOTET_TIMER_PERIODIC != 0 && MOTET_TIMER_PERIODIC != 1
#error "MOTET_TIMER_PERIODIC must be 0 or 1"
#endif
#if MOTET_TASK_BUDGET != 0 && MOTET_TASK_BUDGET != 1
#error "MOTET_TASK_BUDGET must be 0 or 1"
#endif
#if MOTET_TASK_BUDGET && MOTET_TIMER_PERIODIC
#error "MOTET_TASK_BUDGET needs the tickless timer (MOTET_TIMER_PERIODIC=0)"
#endif
#if MOTET_BUDGET_CHECK_US < 100 || MOTET_BUDGET_CHECK_US > 1000000
#error "MOTET_BUDGET_CHECK_US must be 100..1000000"
#endif
#if MOTET_TICK_US < 100 || MOTET_TICK_US > 1000000
#error "MOTET_TICK_US must be 100..1000000"
#endif

#endif /* MOTET_CONFIG_H */
