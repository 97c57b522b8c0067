/* SPDX-License-Identifier: MIT */
/*
 * The task migrator, the source's frames (migrate_source.c has its steps):
 * the image, chunk by chunk, each encoded straight into its bus frame, up
 * to MOTET_MIGRATE_WINDOW of them on the bus at once; after the commit the
 * copies of the held messages and the recorded multicasts, packed into
 * FORWARD frames one at a time, then the tail (the multicasts recorded
 * since the commit), its last part with END.
 */
#include <string.h>

#include "bus_internal.h"
#include "migrate_internal.h"

#if MOTET_BUS

/* Copy image bytes [off, off+n) from the header, then the state. */
static bool copy_image(const slot_t *s, uint16_t off, uint8_t *out, uint16_t n)
{
    uint16_t from_head = off < s->head_len ? (uint16_t) (s->head_len - off) : 0u;
    if (from_head > n) from_head = n;
    if (from_head) memcpy(out, s->head + off, from_head);
    if (n == from_head) return true;
    uint16_t at = (uint16_t) (off + from_head - s->head_len);
    if (!s->state) /* a layout's: encoded from the frozen task's state */
        return mig_layout_part(s->pid, at, out + from_head, (uint16_t) (n - from_head));
    memcpy(out + from_head, s->state + at, (size_t) (n - from_head));
    return true;
}

/* The next chunk, encoded straight into its frame; false if it cannot
 * go now (asked again once a frame has ended) or the migration failed. */
static bool send_chunk(slot_t *s)
{
    /* The rest in equal chunks of at most MOTET_MIGRATE_CHUNK, not full
     * ones and a short last: the first chunk's encoding and the last one's
     * check are the transfer's only times neither end overlaps the other.
     * The first holds the whole header (the destination reads it there). */
    uint16_t left = (uint16_t) (mig_image_total(s) - s->offset);
    uint16_t n = left;
    if (left > MOTET_MIGRATE_CHUNK) {
        uint16_t chunks =
            (uint16_t) (left / MOTET_MIGRATE_CHUNK + (left % MOTET_MIGRATE_CHUNK ? 1u : 0u));
        n = (uint16_t) (left / chunks + (left % chunks ? 1u : 0u));
    }
    if (s->offset == 0 && n < s->head_len) n = s->head_len;
    mt_err_t err;
    uint8_t *buf = mig_open_frame((uint16_t) (MIG_CHUNK_HDR + n), &err);
    if (buf) {
        buf[0] = s->pid;
        buf[1] = s->id;
        mig_put16(buf + 2, s->offset);
        if (copy_image(s, s->offset, buf + MIG_CHUNK_HDR, n)) {
            err = mig_queue_frame(buf, MIG_MSG_STATE, s->dest, s->prio,
                                  (uint16_t) (MIG_CHUNK_HDR + n));
        } else {
            bus_drop_frame(buf);
            err = MT_ERR_NO_TASK; /* it went meanwhile: nothing to move */
        }
    }
    if (!err) {
        s->chunks_out++;
        s->offset = (uint16_t) (s->offset + n);
        return true;
    }
    if (err != MT_ERR_QUEUE_FULL && err != MT_ERR_NO_MEM) mig_source_fail(s, err);
    return false;
}

/* What goes next: the held messages (s->fwd_next on), then the multicasts
 * recorded from the freeze to the commit, each with its bus frame (*cast),
 * so that the destination keeps only those it took before joining the
 * groups. The recorded ones grow at their end in the bus interrupt: no
 * link is read past s->casts_last. */
static msg_t *next_to_forward(const slot_t *s, bool *cast)
{
    *cast = s->fwd_next == NULL;
    if (!*cast) return s->fwd_next;
    if (!s->casts_last || s->casts_sent == s->casts_last) return NULL;
    return s->casts_sent ? s->casts_sent->next : s->casts; /* not the list's end */
}

/* How many messages from `first` (all of one kind, up to `last`) fit in
 * one frame after `hdr` bytes; *size: the frame's. */
static uint8_t pack_count(const msg_t *first, const msg_t *last, bool cast, uint16_t hdr,
                          uint16_t *size)
{
    uint8_t k = 0;
    uint16_t head = cast ? MIG_FWD_CAST_ENTRY : MIG_FWD_ENTRY;
    *size = hdr;
    for (const msg_t *m = first; m && k < UINT8_MAX; m = m->next) {
        uint16_t need = (uint16_t) (head + m->len);
        if (*size + need > MIG_CHUNK_HDR + MOTET_MIGRATE_CHUNK) break;
        *size = (uint16_t) (*size + need);
        k++;
        if (m == last || !m->next) break;
    }
    return k;
}

/* The k messages from `first` as FORWARD entries from p on, never reading
 * the link of the last (the interrupt may be appending to it). */
static void pack(const msg_t *first, uint8_t k, bool cast, uint8_t *p)
{
    const msg_t *m = first;
    for (uint8_t i = 0; i < k; i++) {
        p[0] = (uint8_t) (cast ? m->port | MIG_FWD_CAST : m->port);
        mig_put16(p + 1, m->len);
        p += MIG_FWD_ENTRY;
        if (cast) {
            p[0] = mig_cast_origin(m);
            p[1] = mig_cast_seq(m);
            p += MIG_FWD_CAST_ENTRY - MIG_FWD_ENTRY;
        }
        if (m->len) memcpy(p, m->data, m->len);
        p += m->len;
        if (i + 1u < k) m = m->next;
    }
}

/* The k-th message from `first` (k >= 1). */
static const msg_t *kth(const msg_t *first, uint8_t k)
{
    while (--k) first = first->next;
    return first;
}

/* The k from `first` have gone; they stay until END is through. */
static void skip_forwarded(slot_t *s, msg_t *first, bool cast, uint8_t k)
{
    msg_t *last = (msg_t *) kth(first, k);
    if (cast)
        s->casts_sent = last;
    else
        s->fwd_next = last->next; /* the held list does not grow */
    s->fwd_count = (uint16_t) (s->fwd_count + k);
}

/* Whether the task has groups (whose multicasts this module records): its
 * image's header says, without decoding the rest. */
static bool has_groups(const slot_t *s)
{
    return s->head_len > MIG_IMAGE_GROUPS && s->head[MIG_IMAGE_GROUPS];
}

/* The tail, read once the commit's share has gone: the multicasts recorded
 * since the commit, counted in up to the last recorded now. A destination
 * that missed RESULT ok joins at the first FORWARD it takes (or END), and
 * the ones it took before were recorded here after the commit: so the
 * tail is read for good only once a FORWARD has reached it (one with
 * nothing in it, if nothing else went); it keeps those up to its cut.
 * True if there is more to forward or an empty FORWARD went. */
static bool read_tail(slot_t *s)
{
    if (s->tail_read || !has_groups(s)) return false;
    s->tail_read = s->forwarded; /* the destination has joined: read for good */
    port_irq_state_t st = port_irq_save();
    msg_t *last = s->casts_last;
    for (msg_t *m = last ? last : s->casts; m; m = m->next) last = m;
    bool more = last != s->casts_last;
    s->casts_last = last;
    port_irq_restore(st);
    if (more || s->forwarded) return more;
    uint8_t d[MIG_FWD_HDR] = {s->pid, s->id}; /* the destination's place to join */
    if (mig_frame(MIG_MSG_FORWARD, s->dest, s->prio, d, sizeof d) != MT_OK) return true;
    s->in_flight = s->forwarded = true;
    return true;
}

/* The next FORWARD, or END: with the tail read for good, what is left of
 * it goes with END if it fits (no frame of its own), else a FORWARD first. */
static void send_forward(slot_t *s)
{
    bool cast;
    msg_t *first = next_to_forward(s, &cast);
    if (!first && read_tail(s)) {
        first = next_to_forward(s, &cast);
        if (!first) return; /* an empty FORWARD went (or goes next time) */
    }
    const msg_t *last = cast ? s->casts_last : NULL;
    bool end = !first || (cast && s->tail_read);
    uint16_t size;
    uint8_t k = pack_count(first, last, cast, end ? MIG_END_HDR : MIG_FWD_HDR, &size);
    if (end && first && (!k || kth(first, k) != last)) { /* not all of it: a FORWARD first */
        end = false;
        k = pack_count(first, last, cast, MIG_FWD_HDR, &size);
    }
    if (first && !k) { /* larger than a frame: it cannot follow the task (logged) */
        log_error(MT_ERR_INVALID);
        skip_forwarded(s, first, cast, 1);
        return;
    }
    mt_err_t err;
    uint8_t *buf = mig_open_frame(size, &err);
    if (!buf) return; /* asked again once a frame has ended */
    buf[0] = s->pid;
    buf[1] = s->id;
    if (end) {
        mig_put16(buf + 2, (uint16_t) (s->fwd_count + k));
        /* The timers' age to here on this clock; the destination counts
         * from END's arrival on its own. */
        mig_put32(buf + 4, timer_now() - s->clock);
    }
    pack(first, k, cast, buf + (end ? MIG_END_HDR : MIG_FWD_HDR));
    if (mig_queue_frame(buf, end ? MIG_MSG_END : MIG_MSG_FORWARD, s->dest, s->prio, size) != MT_OK)
        return;
    s->in_flight = true;
    s->end_out = end;
    s->forwarded |= !end;
    if (k) skip_forwarded(s, first, cast, k);
}

void mig_source_pump(slot_t *s)
{
    if (s->step == ST_FLUSHING) {
        mig_flush(s);
        return;
    }
    if (s->in_flight) return;
    if (s->step == ST_SENDING) {
        /* Chunks follow one another on one link at one priority: they
         * arrive in order, and a destination gone fails the first. */
        while (s->offset < mig_image_total(s) && s->chunks_out < MOTET_MIGRATE_WINDOW &&
               send_chunk(s))
            ;
    } else if (s->step == ST_FORWARDING)
        send_forward(s);
}

#endif /* MOTET_BUS */
