/* SPDX-License-Identifier: MIT */
/*
 * Task migrator internals shared by its files: migrate_image.c (the image
 * format and the timer arithmetic: pure functions, unit-tested on their
 * own), sched_migrate.c (what the scheduler does for a migration) and
 * migrate.c (the protocol).
 *
 * The image is what travels from the source to the destination, little-
 * endian and byte by byte, so that an 8-bit and a 32-bit module read it
 * alike; the state block follows it on the wire:
 *
 *   0 version (3)  1 pid  2 prio  3 flags  4 program id
 *   5 routes  6 timers  7 groups
 *   8 u32 the source's ticks per second (timers are in its ticks)
 *   12 u16 state bytes
 *   14 u16 held messages (the destination sets aside a block for each)
 *   16 routes x (u8 pid, u8 port)
 *      timers x (u8 index, u32 remaining, u32 period; 0: one-shot)
 *      groups x (u8 group, u8 port)
 *
 * Time on the wire is the source's ticks and their rate, not a global
 * clock: END carries the source's ticks from the freeze to its sending,
 * the destination adds its own time since END arrived, converted, and
 * re-arms in its own ticks.
 */
#ifndef MOTET_MIGRATE_INTERNAL_H
#define MOTET_MIGRATE_INTERNAL_H

#include "migrate_bus.h"
#include "motet/migrate.h"
#include "sched_internal.h"
#include "timer_internal.h"

#define MIG_IMAGE_VERSION 3u
#define MIG_IMAGE_HEADER  16u
#define MIG_IMAGE_GROUPS  7u  /* offset of the group count */
#define MIG_IMAGE_HELD    14u /* offset of the held-message count */
#define MIG_ROUTE_BYTES   2u
#define MIG_TIMER_BYTES   9u
#define MIG_GROUP_BYTES   2u

/* A timer as it travels: remaining ticks when the image was stamped.
 * mig_rearm_plan() turns it into what this module arms: `remaining` its
 * first expiry here (0: none), `period` in this module's ticks, `due` set
 * if it fell due meanwhile. */
typedef struct mig_timer {
    uint8_t index;
    bool due;
    uint32_t remaining;
    uint32_t period; /* 0: one-shot */
} mig_timer_t;

/* The image without its state. Routes and groups are raw byte pairs
 * (pid, port) and (group, port): encoding copies them, decoding leaves the
 * pointers in the buffer; mig_image_route() and mig_image_group() read
 * them. */
typedef struct mig_image {
    mt_pid_t pid;
    mt_prio_t prio;
    uint8_t flags;
    uint8_t program;
    uint8_t n_routes;
    uint8_t n_timers;
    uint8_t n_groups;
    uint32_t tick_hz; /* the source's ticks per second */
    uint16_t state_len;
    uint16_t held; /* messages the source will forward, at most */
    const uint8_t *routes;
    const uint8_t *groups;
    mig_timer_t timers[TIMERS_PER_TASK];
} mig_image_t;

/* ---- migrate_image.c: pure ---- */

/* Bytes of the encoded image, state excluded. */
uint16_t mig_image_size(const mig_image_t *img);
/* Encode into out (cap bytes); returns the size, 0 if it does not fit. */
uint16_t mig_image_encode(const mig_image_t *img, uint8_t *out, uint16_t cap);
/* Decode the first n bytes; MT_ERR_INVALID for a short or bad image. */
mt_err_t mig_image_decode(const uint8_t *buf, uint16_t n, mig_image_t *img);
/* Route or group i of a decoded image. */
route_t mig_image_route(const mig_image_t *img, uint8_t i);
void mig_image_group(const mig_image_t *img, uint8_t i, uint8_t *group, mt_port_t *port);

/* `ticks` of a clock at from_hz in ticks of one at to_hz, rounded to the
 * nearest, at least 1 if ticks is not 0, at most the timers' limit. */
uint32_t mig_ticks_convert(uint32_t ticks, uint32_t from_hz, uint32_t to_hz);

/* A timer re-armed `elapsed` ticks after its image was stamped. */
typedef struct mig_rearm {
    bool fire_now;  /* it fell due meanwhile: post its timeout once, now */
    uint32_t first; /* ticks to its next expiry, 0: none (a one-shot that fired) */
} mig_rearm_t;
/* Remaining time minus the elapsed time; a periodic timer keeps its phase
 * and a timer that fell due meanwhile fires once, however late. */
mig_rearm_t mig_timer_rearm(uint32_t remaining, uint32_t period, uint32_t elapsed);

/* Little-endian helpers for the frames. */
static inline void mig_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}
static inline uint16_t mig_get16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (uint16_t) (p[1] << 8));
}
static inline void mig_put32(uint8_t *p, uint32_t v)
{
    for (uint8_t i = 0; i < 4; i++) p[i] = (uint8_t) (v >> (8u * i));
}
static inline uint32_t mig_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (uint8_t i = 0; i < 4; i++) v |= (uint32_t) p[i] << (8u * i);
    return v;
}

/* ---- sched_migrate.c: the scheduler's part ---- */

/* Hold every message for t from now on, queued ones included, in order:
 * the task stops (it counts as not initialised; TASK_FROZEN marks why). */
void sched_mig_freeze(task_t *t);
/* Start a frozen task again: its held messages join the queue in the order
 * they were held, behind everything already queued. */
void sched_mig_thaw(task_t *t);
/* Unlink and return the held messages of t, oldest first. */
msg_t *sched_mig_take_held(task_t *t);
/* How many messages t holds. */
uint16_t sched_mig_held_count(const task_t *t);
/* Insert list (oldest first) into t's held messages after the first
 * `index` of them (all of them if fewer). Any context. */
void sched_mig_hold_at(task_t *t, msg_t *list, uint16_t index);
/* True if t holds the delivery of multicast frame `mark` (MSG_CAST, its
 * mark: mig_cast_mark()). Any context. */
bool sched_mig_holds_cast(const task_t *t, uint16_t mark);
/* Hold the multicast m (MSG_CAST, marked) in its frame's place: ahead of
 * the first held multicast of the same origin numbered after it, else
 * last. Any context. */
void sched_mig_hold_cast(task_t *t, msg_t *m);
/* A held message for dst: a heap copy of the payload. NULL with *why,
 * logged: MT_ERR_NO_MEM (the heap), MT_ERR_QUEUE_FULL (only MIG_RESERVE
 * message blocks left). Any context. */
msg_t *sched_mig_msg(mt_pid_t dst, mt_port_t port, const void *data, uint16_t len, mt_err_t *why);
/* Set `count` message blocks aside into *pool, leaving MIG_RESERVE free:
 * MT_ERR_QUEUE_FULL (logged, nothing set aside) if the pool cannot. */
mt_err_t sched_mig_reserve(msg_t **pool, uint16_t count);
/* As sched_mig_msg(), in a block taken from *pool while it has one. */
msg_t *sched_mig_msg_from(msg_t **pool, mt_pid_t dst, mt_port_t port, const void *data,
                          uint16_t len, mt_err_t *why);
/* Free a message taken from a held list and its payload. */
void sched_mig_msg_free(msg_t *m);
/* Run task pid's handler for `port` now (payload: a kernel heap block or
 * NULL, freed if no task pid is here), on top of the caller; returns the
 * handler's result, MT_ERR_NO_TASK if the task is gone or its kill was
 * asked for while it ran (sched_task_call(): MT_OK does not say it still
 * exists). The task must not be on the stack. Task context. */
mt_err_t sched_mig_call(mt_pid_t pid, mt_port_t port, void *block, uint16_t len);
/* The frozen task pid leaves: its control block becomes a remote one on
 * `module`; everything it owned here is freed, and *held gets its held
 * messages (found and taken in the same step, so that none can slip in
 * between). MT_ERR_NO_TASK if no frozen task of pid is here (killed),
 * MT_ERR_NO_SLAB if no remote block is free; nothing changed then. */
mt_err_t sched_mig_move_out(mt_pid_t pid, mt_module_t module, msg_t **held);
/* The task arrives: a local, frozen control block replaces its remote one
 * (if any), holding the list *held first and clearing *held, atomically
 * for senders and kills. Its error, nothing changed and *held still the
 * caller's, if it cannot. */
mt_err_t sched_mig_move_in(const task_spec_t *spec, msg_t **held);
/* Where the remote task pid lives; false if it has no remote block. */
bool sched_mig_remote(mt_pid_t pid, mt_module_t *module, mt_prio_t *prio);
/* Route remote task pid to `module` from now on. */
mt_err_t sched_mig_reroute(mt_pid_t pid, mt_module_t module);

/* How far a link's frame number a comes after b: a link numbers its frames
 * in the order of the wire (bus.c), eight bits, and a migration sees far
 * fewer than 128 frames of a link, so the difference within half the range
 * orders them (docs/migration.md, "Multicasts"). */
static inline int8_t mig_seq_after(uint8_t a, uint8_t b)
{
    return (int8_t) (uint8_t) (a - b);
}

/* ---- the protocol: migrate.c, migrate_source.c, migrate_peer.c ---- */

#if MOTET_BUS

#include "program_internal.h"

/* ---- migrate_layout.c: a program with a layout, moved by the kernel ---- */

/* The encoded size of the state of prog (which has a layout) in *len;
 * MT_ERR_INVALID for a layout that does not fit the state. */
mt_err_t mig_layout_check(const program_t *prog, uint16_t *len);
/* Bytes [offset, offset + n) of the encoded state of local task pid into
 * out, with interrupts on; false if it has no layout or is gone by the
 * copy's end (out may then hold another's bytes: dropped). */
bool mig_layout_part(mt_pid_t pid, uint16_t offset, uint8_t *out, uint16_t n);
/* The destination's block for the state of prog (a zeroed state_size)
 * that an image announces `len` bytes of encoding for; NULL with *err:
 * MT_ERR_INVALID (another layout), MT_ERR_NO_MEM. Any context. */
uint8_t *mig_layout_rx_start(const program_t *prog, uint16_t len, mt_err_t *err);
/* Encoded bytes [offset, offset + n), a chunk, decoded into that block. */
void mig_layout_rx_part(const program_t *prog, uint8_t *state, uint16_t offset, const uint8_t *in,
                        uint16_t n);
/* Give task pid (created without a state) that block as its state, then
 * run its PORT_DESERIALIZE with no payload: the handler's result;
 * MT_ERR_NO_TASK, the block freed, if it is gone. Task context. */
mt_err_t mig_layout_attach(mt_pid_t pid, uint8_t *state);

#include "motet/bus.h"

#define MIG_TIMEOUT_TICKS TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS) /* a wait before asking again */
#define MIG_TASK_PRIO     0  /* the migrator task: the lowest level */
#define MIG_TICK_TIMER    0u /* the migrator's timer for its timeout tick (TIMER_SLOT_TICK) */
#define MIG_CTRL_PRIO     ((mt_prio_t) (MOTET_PRIO_LEVELS - 1)) /* control frames */
#define MIG_CTRL_MAX      6u /* payload bytes of a control frame */
#define MIG_CTRL_QUEUE    8u /* control frames waiting for room on the bus */
#define MIG_CHUNK_HDR     4u /* STATE: pid, id, u16 offset */
#define MIG_FWD_HDR       2u /* FORWARD: pid, id */
#define MIG_FWD_ENTRY     3u /* FORWARD: per message u8 port, u16 len */
#define MIG_MAX_HOPS      4u /* a request follows at most this many stale routes */
#define MIG_END_HDR       8u /* END: pid, id, u16 count, u32 age; then FORWARD's entries */
#define MIG_END_RING      4u /* END's bytes the task half reads: pid, id, u16 count */
#define MIG_NO_MODULE     0xFFu
/* FORWARD: a multicast's entry has this bit in its port and carries its
 * bus frame after the length: u8 origin module, u8 sequence number. */
#define MIG_FWD_CAST       0x80u
#define MIG_FWD_CAST_ENTRY (MIG_FWD_ENTRY + 2u)
_Static_assert(PORT_LIMIT <= MIG_FWD_CAST, "MIG_FWD_CAST must stay above every input port");

/* Records of the ring that never travel, after the frame kinds. */
enum {
    MIG_REC_TX_END = MIG_MSG_END_KIND,
    MIG_REC_RECEIVED,
    MIG_REC_COMMITTED,
    MIG_REC_CUTS_ENDED,
    MIG_REC_LOST /* pid, count, err; from: the module that sent them (mig_lost()) */
};

typedef enum { ROLE_FREE, ROLE_SOURCE, ROLE_DEST, ROLE_PEER } mig_role_t;

typedef enum {
    ST_REPLIES,    /* source: FREEZE sent, waiting for every reply */
    ST_SENDING,    /* source: the image goes to the destination */
    ST_ATTACHING,  /* source: image sent, waiting for ATTACHED */
    ST_DECIDED,    /* source: RESULT ok queued, waiting for it to go out */
    ST_FORWARDING, /* source: copies of the held messages, then END, to the destination;
                      the task stays here, frozen, until END is through */
    ST_HOLDING,    /* peer, dest: holding back sends; dest: receiving */
    ST_FAILED,     /* dest: could not attach, waiting for the outcome */
    ST_ATTACHED,   /* dest: task created, frozen, waiting for the outcome */
    ST_COMMITTED,  /* dest: success, waiting for END; peer: still holding, waiting for CONFIRM */
    ST_STARTING,   /* dest: END taken; starts the copy once no frame of a forwarded multicast
                      it kept past its cut is still on its way here (migrate_peer_cast.c) */
    ST_FLUSHING    /* every role: sending what was held back, then done */
} mig_step_t;

/* One migration this module takes part in. */
typedef struct slot {
    uint8_t role; /* mig_role_t: ROLE_FREE marks an empty slot */
    uint8_t step; /* mig_step_t */
    mt_pid_t pid;
    uint8_t id; /* the source's number for this migration */
    mt_module_t source, dest, requester;
    mt_prio_t prio;     /* the task's: replies and bulk frames go at it */
    uint8_t rounds;     /* source: timeouts so far */
    uint8_t tx_ends;    /* source, decided: MIG.tx_ends at its last timeout */
    uint8_t tries;      /* source: times this request was put off before (MT_ERR_FULL) */
    bool in_flight;     /* source: a FORWARD or END of this migration is on the bus */
    bool end_out;       /* source: END is queued: once the interface has it, only its verdict
                           says where the task is */
    uint8_t chunks_out; /* source: image chunks on the bus (MOTET_MIGRATE_WINDOW at most) */
    bool hold;          /* local sends to the task are held back here */
    bool rx_done;       /* dest: no more image bytes expected */
    mt_err_t err;       /* dest: why the image cannot be attached */
    uint32_t waiting;   /* source: modules whose reply is missing */
    uint32_t since;     /* kernel time the current wait began */
    uint32_t clock;     /* kernel time of the freeze (source), of END's arrival (dest) */
    uint32_t age;       /* dest: source ticks from the freeze to END's sending */
    bool end_seen;      /* dest: END's frame was taken (age and clock hold) */
    msg_t *out;         /* held back here, oldest first */
    mt_module_t out_to; /* where they go once the outcome is known */
    uint8_t *head;      /* the image without the state */
    uint16_t head_len;
    uint8_t *state;     /* the state block: serialised, or (dest, `decoding`) the new state */
    uint16_t state_len; /* bytes of the state on the wire */
    const program_t *decoding; /* dest: a program with a layout, its state decoded as it comes */
    uint16_t offset;           /* image bytes sent (source) or received (dest) */
    msg_t *fwd;                /* source: held messages at the commit, kept until END is through */
    msg_t *fwd_next;           /* source: the first of them not forwarded yet */
    uint16_t fwd_count;        /* messages forwarded (source) or received (dest) */
    uint16_t fwd_kept;         /* dest: of those, kept: the first in the task's held list */
    msg_t *reserved;           /* dest: blocks set aside for the forwarded messages */
    msg_t *casts;              /* source: multicasts to the task's groups since the freeze */
    msg_t *casts_sent;         /* source: the last of them forwarded (NULL: none yet) */
    msg_t *casts_last;         /* source: the last to forward, recorded by the commit or, once the
                                  tail is read, by then (NULL: none) */
    bool forwarded;            /* source: a FORWARD of this migration has gone since the commit */
    bool tail_read;            /* source: the multicasts recorded since the commit are counted in */
    bool recording;            /* source: multicasts to its groups go to `casts` (interrupt) */
    bool joined;               /* dest: the copy is in the task's groups, its cut noted */
    uint32_t cut_seen;         /* dest: modules with a cut */
    uint32_t cut_raised;       /* dest: those whose cut rose to a forwarded multicast kept, its
                                  frame not taken, nor a later one of that link */
    uint8_t cut[MOTET_BUS_MODULES]; /* dest: each one's last multicast taken before the join, or
                                       the last forwarded past it and kept, by sequence number */
    bool dest_lost;                 /* source: the destination was unreachable before the commit */
} slot_t;

/* Image bytes, header and state, of a source's slot. */
static inline uint16_t mig_image_total(const slot_t *s)
{
    return (uint16_t) (s->head_len + s->state_len);
}

/* A protocol record for the task half: a frame's kind, sender, payload. */
typedef struct mig_record {
    uint8_t kind;
    mt_module_t from;
    uint8_t len;
    uint8_t data[MIG_CTRL_MAX];
} mig_record_t;

/* The outcome of a migration this module was the source of, kept for a
 * module that missed the RESULT multicast and asks (PING). */
typedef struct mig_outcome {
    mt_pid_t pid;
    uint8_t id;
    uint8_t err; /* MT_OK (confirmed: the destination took END), an error, or MIG_RESULT_KILLED */
    mt_module_t dest;
} mig_outcome_t;

#define MIG_OUTCOMES 2u
/* The failed outcome a source gives for a migration whose outcome it no
 * longer keeps while the task is there. */
#define MIG_RESULT_FORGOTTEN MT_ERR_STATE

/* A request put off because a module of the device had no slot free for
 * it (it answered FREEZE MT_ERR_FULL, or this one has none): asked again
 * here at `due`, up to MOTET_MIGRATE_ROUNDS times. pid 0: free. */
typedef struct mig_retry {
    mt_pid_t pid;
    mt_module_t dest, requester;
    uint8_t tries;
    uint32_t due;
} mig_retry_t;

#define MIG_RETRIES 4u

/* A control frame waiting for room in the bus queue. */
typedef struct mig_ctrl {
    uint8_t kind;
    mt_module_t to; /* BUS_BROADCAST: multicast */
    mt_prio_t prio;
    uint8_t len;
    uint8_t data[MIG_CTRL_MAX];
} mig_ctrl_t;

/* A task our first hops asked to move, and how many such requests of
 * ours await their end (0: a free place). A first hop leaves only for a
 * task this module routes elsewhere, of which it knows at most
 * MOTET_MAX_REMOTE_TASKS: so many places. */
typedef struct mig_asked {
    mt_pid_t pid;
    uint8_t count;
} mig_asked_t;
#define MIG_ASKED MOTET_MAX_REMOTE_TASKS

typedef struct mig {
    slot_t slots[MOTET_MIGRATE_SLOTS];
    mig_record_t ring[MOTET_MIGRATE_RING];
    uint8_t ring_head, ring_count;
    mig_ctrl_t ctrl[MIG_CTRL_QUEUE];
    uint8_t ctrl_head, ctrl_count;
    volatile bool kick_pending; /* a KICK message waits for the task */
    volatile bool want_room;    /* output waits for a frame to end */
    volatile bool kick_lost;    /* a KICK found no message block: try again */
    volatile uint8_t tx_ends;   /* frames of this module, not the migrator's, that ended (a
                                   count that wraps; interrupt) */
    uint8_t ticks_owed;         /* the timeout tick's (timer_counted_start()) */
    bool ticking;               /* the tick's timer runs, as last seen (update_tick()) */
    uint8_t next_id;
    uint32_t silent; /* modules a frame of ours could not reach, until they speak */
    mig_outcome_t outcomes[MIG_OUTCOMES]; /* the latest decided here, a ring */
    uint8_t next_outcome;
    mig_retry_t retries[MIG_RETRIES];
    slot_t *serialising;          /* the source slot whose task is in PORT_SERIALIZE */
    mig_asked_t asked[MIG_ASKED]; /* our requests awaiting their end, or ended */
} mig_t;

extern mig_t MIG; /* the one migrator of this module */

/* Whether module m may decide a migration of pid that this module took
 * no part in, or freeze it: where this module routes pid, if it knows the
 * task elsewhere. A task here, or unknown, is not rerouted or forgotten by
 * an outcome; one routed to another module, by a frame from m, would be. */
static MT_INLINE bool may_decide(mt_pid_t pid, mt_module_t m)
{
    const remote_task_t *r = sched_remote_find(pid);
    return !r || r->module == m;
}

/* migrate.c */
uint32_t mig_bit(mt_module_t m);
/* Whether a request of ours for pid to move was made, awaiting its end
 * or ended (its place not yet taken by another task's): a refusal of it
 * is taken. Any context. */
bool mig_asked(mt_pid_t pid);
/* A refusal of one of our requests for pid has come: one request fewer
 * awaits its end; false if none did (a late answer: the task's migration
 * ended them). Interrupt context or interrupts off. */
bool mig_asked_refused(mt_pid_t pid);
/* Keep a request put off to ask it again later (MIG.retries), its tries
 * so far counted; false once it was put off MOTET_MIGRATE_ROUNDS times or
 * with no place free: the caller refuses it (MT_ERR_FULL). */
bool mig_put_off_request(mt_pid_t pid, mt_module_t dest, mt_module_t requester, uint8_t tries);
/* Requests put off that are due are asked again. */
void mig_source_retry(void);
slot_t *mig_slot_new(void);
void mig_slot_free(slot_t *s);
/* Free what slot s holds but its line of held messages (out): its image,
 * state and lists; the fields are left as they are. Task context. */
void mig_slot_release_blocks(const slot_t *s);
/* Free a list of held messages. */
void mig_free_list(msg_t *m);
/* The slot of migration (pid, id) in `role` (ROLE_FREE: any role). */
slot_t *mig_slot_find(uint8_t role, mt_pid_t pid, uint8_t id);
/* Any slot of pid. */
slot_t *mig_slot_of(mt_pid_t pid);
void mig_kick(void);
bool mig_ring_push(uint8_t kind, mt_module_t from, const uint8_t *data, uint8_t len);
/* A held message for task pid from module `from` could not be made, for
 * `why` (sched_mig_msg()'s, logged there): the migrator reports it as
 * MIG_LOST, once per message, to the log and the observer. A loss like the
 * one recorded last and not yet reported only counts there, so that a
 * burst takes one place of the ring. Any context. */
void mig_lost(mt_pid_t pid, mt_module_t from, mt_err_t why);
mt_err_t mig_frame(uint8_t kind, mt_module_t to, mt_prio_t prio, const void *data, uint16_t len);
/* A frame of len payload bytes to the migrator, for the caller to write
 * its payload into (bus_open_frame()), then mig_queue_frame() it. NULL
 * with *err: MT_ERR_QUEUE_FULL or MT_ERR_NO_MEM (not logged; asked again
 * once a frame has ended), or the bus's error (logged). */
uint8_t *mig_open_frame(uint16_t len, mt_err_t *err);
/* mig_frame() of a frame opened by mig_open_frame(), its payload written. */
mt_err_t mig_queue_frame(uint8_t *payload, uint8_t kind, mt_module_t to, mt_prio_t prio,
                         uint16_t len);
void mig_ctrl(uint8_t kind, mt_module_t to, mt_prio_t prio, const uint8_t *data, uint8_t len);
void mig_notify(mt_pid_t pid, uint8_t phase, mt_module_t other, mt_err_t err);
void mig_refuse(mt_pid_t pid, mt_err_t err, mt_module_t requester);
bool mig_movable(const task_t *t);
/* Decode the image head into *img, its timers planned as this module
 * re-arms them, less the time since the freeze: `age` ticks of the
 * source, then `since` of this module's (the source: 0, then its time
 * since the freeze; the destination: the age END carries, then its time
 * since END arrived). The arithmetic (a 64-bit division between clocks of
 * two rates) is done here, with interrupts on. */
mt_err_t mig_rearm_plan(const uint8_t *head, uint16_t head_len, uint32_t age, uint32_t since,
                        mig_image_t *img);
/* Arm the planned timers of *img for the frozen task pid; those due post
 * their timeout once (held). The caller holds interrupts off from finding
 * the task to thawing it: a handler's kill at an interrupt's exit comes
 * before (nothing is armed for a task gone) or after (the kill stops what
 * was armed with its task). */
mt_err_t mig_rearm(mt_pid_t pid, const mig_image_t *img);
/* Join pid to the image's groups on this module (their membership tables
 * hold local members only); the decoder's error if the head is malformed. */
mt_err_t mig_rejoin(mt_pid_t pid, const uint8_t *head, uint16_t head_len);

/* A multicast the source records for a task on the move carries its bus
 * frame (origin module, sequence number) in its mark, which shares the
 * room of the control block a queued message names: nothing reads that
 * while it is recorded, and queueing it writes it (sched_mig_thaw()). */
static inline void mig_cast_mark(msg_t *m, mt_module_t origin, uint8_t seq)
{
    m->mark = (uint16_t) (origin << 8 | seq);
}
static inline mt_module_t mig_cast_origin(const msg_t *m)
{
    return (mt_module_t) (m->mark >> 8);
}
static inline uint8_t mig_cast_seq(const msg_t *m)
{
    return (uint8_t) m->mark;
}

/* migrate_source.c */
/* A request for local task t; `tries`: times it was put off before. */
void mig_source_begin(mt_pid_t pid, mt_module_t dest, mt_module_t requester, uint8_t tries);
void mig_source_record(const mig_record_t *r);
/* Before the decision: the task resumes here (or is killed if it cannot),
 * and every module is told the outcome `err`; the slot is freed. */
void mig_source_fail(slot_t *s, mt_err_t err);
/* The ticks a source waits from the freeze for its decision before it
 * abandons the migration (MT_ERR_TIMEOUT): the rounds of replies and of
 * ATTACHED, and MOTET_MIGRATE_FRAME_MS for each chunk of the image. */
uint32_t mig_source_budget(const slot_t *s);
void mig_source_tick(slot_t *s);
bool mig_source_waiting(const slot_t *s);
/* migrate_source_tx.c: the image's chunks, then FORWARDs and END */
void mig_source_pump(slot_t *s);
/* A module asks about a migration (PING): if it is one decided here and
 * over, send it the outcome again. */
void mig_source_ping(const mig_record_t *r);
void mig_source_own_result(const bus_frame_t *f); /* interrupt */
/* A multicast frame is delivered here; interrupt. */
void mig_source_record_cast(const bus_frame_t *f);

/* migrate.c: the messages a multicast frame makes for the task of slot s,
 * one for each of the image's groups it is for, each marked with the
 * frame (mig_cast_mark()); NULL if none. One it has no room for is
 * lost: logged and reported (mig_lost()). Interrupt. */
msg_t *mig_cast_messages(const slot_t *s, const bus_frame_t *f);

/* migrate_peer_cast.c: the destination's multicasts */
/* The outcome is OK: the copy, if not killed, joins the task's groups,
 * noting its cut; once. Interrupt or task context (it locks). */
void mig_peer_join(slot_t *s);
/* A multicast frame is about to be delivered here: a joined copy not yet
 * started takes it from here, if past its cut. Interrupt. */
void mig_peer_record_cast(const bus_frame_t *f);
/* True if pid is such a copy: the groups' delivery leaves it out. */
bool mig_peer_takes_casts(mt_pid_t pid);
/* A forwarded multicast of its frame (origin, number) for the copy t of
 * slot s, to `port`: kept in its place in t's held list, or dropped if the
 * copy took that frame itself. Interrupt. */
void mig_peer_forwarded_cast(slot_t *s, task_t *t, mt_port_t port, const uint8_t *frame,
                             const uint8_t *body, uint16_t n);
/* True while a frame some cut rose to may still come here. */
bool mig_peer_cuts_ahead(const slot_t *s);
/* ST_STARTING: the copy starts unless mig_peer_cuts_ahead(), for at most
 * MOTET_MIGRATE_FRAME_MS from END (migrate_peer.c). */
void mig_peer_start(slot_t *s);

/* migrate_peer.c */
void mig_peer_record(const mig_record_t *r);
void mig_peer_pump(slot_t *s);
void mig_peer_tick(slot_t *s);
bool mig_peer_waiting(const slot_t *s);
/* Send what s holds back to s->out_to, in order; the slot is freed once
 * the last has gone (any role). */
void mig_flush(slot_t *s);
void mig_peer_tx_end(slot_t *s, mt_module_t to, uint8_t kind, uint8_t result);
slot_t *mig_peer_holding(mt_pid_t pid);
/* Hold a message for s's task, to go with the rest: MT_ERR_QUEUE_FULL
 * (only MIG_RESERVE blocks left, or none) or MT_ERR_NO_MEM (no heap for
 * the payload's copy), logged, the message not taken. Any context. */
mt_err_t mig_peer_hold(slot_t *s, mt_port_t port, const void *data, uint16_t len);
void mig_peer_rx_state(const bus_frame_t *f);   /* interrupt */
void mig_peer_rx_forward(const bus_frame_t *f); /* interrupt */
void mig_peer_rx_result(const bus_frame_t *f);  /* interrupt */
void mig_peer_rx_end(const bus_frame_t *f);     /* interrupt */

#endif /* MOTET_BUS */

#if MOTET_BUS
/* Forget every migration: no slot, no pinned pid, no request (boot and
 * the bus's start; a module booted again must not keep a pin). */
void migrate_reset(void);
/* True while a migration slot holds pid (migrate.c): no task of that pid
 * may be created here but the arriving copy; any context. */
bool mig_pid_pinned(mt_pid_t pid);
/* Drop the requests put off for task `pid` (MIG.retries): it was killed,
 * has left this module or is asked for anew, and its pid may be given to
 * another task; any context. */
void mig_task_gone(mt_pid_t pid);
#else
static inline bool mig_pid_pinned(mt_pid_t pid)
{
    (void) pid;
    return false;
}
static inline void mig_task_gone(mt_pid_t pid)
{
    (void) pid;
}
#endif

#endif /* MOTET_MIGRATE_INTERNAL_H */
