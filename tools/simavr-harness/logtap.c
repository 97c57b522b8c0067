/* SPDX-License-Identifier: MIT */
/*
 * The kernel's event log, taken as it is written (logtap.h). The AVR
 * port's ring (kernel/src/log_ring.h) holds slots of a 16-bit stamp, type,
 * pid and a 16-bit argument, 6 bytes, little-endian; the kernel fills the
 * slot at log_write_offset, then steps the offset past it, as the last
 * store of a record. The harness compares the offset after every
 * instruction: when it moved, the slot at its old value is a new record,
 * written at this cycle. Nobody on the chip needs to drain the ring, and
 * the chip runs exactly the instructions it runs without the tap.
 *
 * A line per slot, in the form tools/motetlib/eventlog.py reads:
 *
 *     SLOT <time_ns> <type> <pid> <arg>
 *
 * time_ns the cycle as nanoseconds of the core's clock (exact at 8 MHz),
 * type the slot's log_event_type_t, arg as the slot holds it (an END's is
 * the handler's result, not its port). The clock's time-base notes (type
 * 0, LOG_TIME_BASE) are left out: the cycle counter needs none.
 */
#include "logtap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOT_BYTES 6u /* PORT_COUNTER_BITS 16: LOG_SLOT_BYTES */

static FILE *out;
static logtap_ring_t ring;
static avr_t *core;
static uint32_t hz;
static uint32_t last_offset;

static uint32_t read_offset(void)
{
    uint32_t v = core->data[ring.offset];
    if (ring.ring_bytes > 255u) v |= (uint32_t) core->data[ring.offset + 1] << 8; /* log_offset_t */
    return v;
}

int logtap_parse_ring(const char *text, logtap_ring_t *r)
{
    char *end;
    errno = 0;
    r->ring = (uint32_t) strtoul(text, &end, 0);
    if (*end != ':') return -1;
    r->ring_bytes = (uint32_t) strtoul(end + 1, &end, 0);
    if (*end != ':') return -1;
    r->offset = (uint32_t) strtoul(end + 1, &end, 0);
    if (*end || errno || r->ring_bytes == 0 || r->ring_bytes % SLOT_BYTES) return -1;
    return 0;
}

int logtap_open(const char *path, const logtap_ring_t *r, avr_t *avr, uint32_t data_end,
                uint32_t freq)
{
    if ((uint64_t) r->ring + r->ring_bytes > (uint64_t) data_end + 1u ||
        r->offset + 2u > (uint64_t) data_end + 1u) {
        fprintf(stderr, "motet-simavr: --log-ring %#x:%u:%#x lies outside the data space\n",
                (unsigned) r->ring, (unsigned) r->ring_bytes, (unsigned) r->offset);
        return -1;
    }
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        return -1;
    }
    ring = *r;
    core = avr;
    hz = freq;
    last_offset = read_offset();
    fprintf(out, "# motet event log, port avr, taken by motet-simavr at %lu Hz as written\n",
            (unsigned long) freq);
    return 0;
}

void logtap_step(void)
{
    if (!out) return;
    uint32_t now = read_offset();
    if (now == last_offset) return;
    const uint8_t *s = &core->data[ring.ring + last_offset % ring.ring_bytes];
    last_offset = now;
    if (s[2] == 0) return; /* LOG_TIME_BASE */
    unsigned long long ns = (unsigned long long) core->cycle * 1000000000ull / hz;
    fprintf(out, "SLOT %llu %u %u %u\n", ns, s[2], s[3], (unsigned) (s[4] | s[5] << 8));
}

void logtap_close(void)
{
    if (!out) return;
    fclose(out);
    out = NULL;
}
