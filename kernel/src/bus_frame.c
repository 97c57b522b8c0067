/* SPDX-License-Identifier: MIT */
/*
 * Bus frames: encoding, checking and stamping (layout in bus.h and
 * docs/bus.md). Pure functions on byte buffers, compiled on every build so
 * that the frame tests run on every port, with or without a bus driver.
 *
 * Every multi-byte field is read and written byte by byte: frames sit at
 * any alignment and every module, whatever its word size, sees the same
 * bytes. The CRC is the one application descriptions use (CRC-16/CCITT-
 * FALSE): a single-bit error, any odd number of bit errors and any burst of
 * up to 16 bits are always detected.
 */
#include <string.h>

#include "appdesc.h"
#include "bus_internal.h"
#include "motet/bus.h"

#define OFF_TYPE    0u
#define OFF_SRC     1u
#define OFF_DST     2u
#define OFF_SEQ     3u
#define OFF_PID     4u
#define OFF_PORT    5u
#define OFF_SRC_PID 6u
#define OFF_PRIO    7u
#define OFF_LEN     8u

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (uint16_t) p[1] << 8);
}

/* Seal a frame of `n` bytes: the CRC over everything before it. */
static void seal(uint8_t *frame, uint16_t n)
{
    uint16_t body = (uint16_t) (n - BUS_CRC_SIZE);
    put_u16(frame + body, appdesc_crc16(frame, body));
}

void bus_frame_put_header(const bus_frame_t *f, uint8_t *out)
{
    out[OFF_TYPE] = (uint8_t) (f->type | (f->retry ? BUS_TYPE_RETRY : 0u));
    out[OFF_SRC] = f->src;
    out[OFF_DST] = f->dst;
    out[OFF_SEQ] = f->seq;
    out[OFF_PID] = f->pid;
    out[OFF_PORT] = f->port;
    out[OFF_SRC_PID] = f->src_pid;
    out[OFF_PRIO] = (uint8_t) f->prio;
    put_u16(out + OFF_LEN, f->len);
}

uint16_t bus_frame_encode(const bus_frame_t *f, uint8_t *out, uint16_t cap)
{
    if (f->len > MOTET_BUS_PAYLOAD_MAX || (f->len && !f->payload)) return 0;
    uint16_t n = (uint16_t) (BUS_OVERHEAD + f->len);
    if (n > cap) return 0;
    bus_frame_put_header(f, out);
    if (f->len) memcpy(out + BUS_HEADER_SIZE, f->payload, f->len);
    seal(out, n);
    return n;
}

void bus_frame_seal(uint8_t *frame, uint16_t n)
{
    if (n >= BUS_OVERHEAD) seal(frame, n);
}

/* Known types; the fixed-size payloads: a beacon's stamp, an outcome, an
 * ask for outcomes. */
static bool payload_fits_type(uint8_t type, uint16_t len)
{
    if (type == BUS_FRAME_SYNC) return len == BUS_SYNC_PAYLOAD;
    if (type == BUS_FRAME_CREATED) return len == BUS_APP_CREATED_SIZE;
    if (type == BUS_FRAME_ASK) return len == BUS_APP_ASK_SIZE;
    return type >= BUS_FRAME_DATA && type < BUS_FRAME_TYPE_END;
}

/* The fields of a frame whose length field matches n. */
static mt_err_t read_fields(const uint8_t *buf, uint16_t len, bus_frame_t *f)
{
    uint8_t type = (uint8_t) (buf[OFF_TYPE] & (uint8_t) ~BUS_TYPE_RETRY);
    if (!payload_fits_type(type, len)) return MT_ERR_BUS_CORRUPT;
    f->type = type;
    f->retry = (buf[OFF_TYPE] & BUS_TYPE_RETRY) != 0;
    f->src = buf[OFF_SRC];
    f->dst = buf[OFF_DST];
    f->seq = buf[OFF_SEQ];
    f->pid = buf[OFF_PID];
    f->port = buf[OFF_PORT];
    f->src_pid = buf[OFF_SRC_PID];
    f->prio = (mt_prio_t) buf[OFF_PRIO];
    f->len = len;
    f->payload = len ? buf + BUS_HEADER_SIZE : NULL;
    return MT_OK;
}

/* The payload's length, if the length field matches the buffer's. */
static bool frame_len(const uint8_t *buf, uint16_t n, uint16_t *len)
{
    if (!buf || n < BUS_OVERHEAD) return false;
    *len = get_u16(buf + OFF_LEN);
    return *len <= MOTET_BUS_PAYLOAD_MAX && n == BUS_OVERHEAD + *len;
}

mt_err_t bus_frame_decode(const uint8_t *buf, uint16_t n, bus_frame_t *f)
{
    uint16_t len;
    if (!frame_len(buf, n, &len)) return MT_ERR_BUS_CORRUPT;
    uint16_t body = (uint16_t) (BUS_HEADER_SIZE + len);
    if (get_u16(buf + body) != appdesc_crc16(buf, body)) return MT_ERR_BUS_CORRUPT;
    return read_fields(buf, len, f);
}

mt_err_t bus_frame_read_own(const uint8_t *buf, uint16_t n, bus_frame_t *f)
{
    uint16_t len;
    return frame_len(buf, n, &len) ? read_fields(buf, len, f) : MT_ERR_BUS_CORRUPT;
}

void bus_frame_set_retry(uint8_t *frame, uint16_t n)
{
    if (n < BUS_OVERHEAD) return;
    frame[OFF_TYPE] |= BUS_TYPE_RETRY;
    seal(frame, n);
}

void bus_frame_set_seq(uint8_t *frame, uint16_t n, uint8_t seq)
{
    if (n < BUS_OVERHEAD || frame[OFF_SEQ] == seq) return; /* sealed with it already */
    frame[OFF_SEQ] = seq;
    seal(frame, n);
}

bool bus_frame_is_sync(const uint8_t *frame, uint16_t n)
{
    return n == BUS_OVERHEAD + BUS_SYNC_PAYLOAD &&
           (frame[OFF_TYPE] & (uint8_t) ~BUS_TYPE_RETRY) == BUS_FRAME_SYNC;
}

void bus_frame_stamp(uint8_t *frame, uint16_t n, uint32_t stamp)
{
    if (!bus_frame_is_sync(frame, n)) return;
    uint8_t *p = frame + BUS_HEADER_SIZE;
    for (uint8_t i = 0; i < BUS_SYNC_PAYLOAD; i++) p[i] = (uint8_t) (stamp >> (8u * i));
    seal(frame, n);
}

uint32_t bus_frame_sync_stamp(const bus_frame_t *f)
{
    uint32_t v = 0;
    for (uint8_t i = 0; i < BUS_SYNC_PAYLOAD; i++) v |= (uint32_t) f->payload[i] << (8u * i);
    return v;
}
