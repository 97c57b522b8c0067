/* SPDX-License-Identifier: MIT */
/*
 * A whole module's bus input: module 1 of a four-module device takes any
 * sequence of frames (every type: messages, multicasts, beacons,
 * descriptions, outcomes, asks for outcomes and the migrator's frames),
 * the ends of its own frames and the passing of time, through the native
 * port's bus interrupt as the hub would deliver them.
 *
 * The module: tasks 0x20 (movable, program 9) and 0x21 here, both members
 * of group 3; 0x30 (movable) on module 0 and 0x31 on module 2; programs 1,
 * 2 and 3 (fuzz_appmgr.c's), 9 and 10, so that descriptions can load and
 * tasks can move in, their state as a block for PORT_DESERIALIZE (9) or
 * decoded by the kernel in a layout as its chunks come (10).
 *
 * The input is a list of events, each an opcode byte and its operands:
 *   op % 4 == 0  a frame: u16 n, then n bytes of header and payload; the
 *                harness writes the length field and the CRC, so the frame
 *                is intact and the checks behind the CRC are what is fuzzed
 *   op % 4 == 1  the same, offered as it is (length and CRC included)
 *   op % 4 == 2  the frame in our interface ends: u8 % 3 is the result
 *   op % 4 == 3  time passes: u16 x 64 us (the migrator's timeouts)
 * At most MAX_EVENTS per input: the native port's SIGALRM is the module's
 * timer, so libFuzzer's own -timeout cannot bound a run.
 *
 * Checked: every message a task gets has a valid port and payload; a
 * frame is answered as its counters say (taken or dropped once each);
 * queues stay within their bounds; and the heap is whole, after the input
 * and again once every frame of ours has gone and the queue is empty.
 */
#include <string.h>

#include "appdesc.h"
#include "fuzz_support.h"
#include "native.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SELF       1u
#define MODULES    0xFu
#define MAX_EVENTS 64u

static unsigned offered, taken, in_flight;

static void capture(const uint8_t *frame, uint16_t n)
{
    bus_frame_t f; /* what we send must be a frame */
    FUZZ_CHECK(bus_frame_decode(frame, n, &f) == MT_OK && f.src == SELF);
    in_flight++;
}

static mt_err_t task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    FUZZ_CHECK(port < PORT_LIMIT && (data || !len));
    FUZZ_CHECK(sched_sender() != MT_PID_MULTICAST && sched_sender() != MT_PID_TIMESYNC &&
               sched_sender() != MT_PID_INVALID);
    if (port == PORT_SERIALIZE) {
        void *block = mem_alloc(6);
        if (!block) return MT_ERR_NO_MEM;
        memcpy(block, "state", 6);
        return migrate_state(block, 6);
    }
    return MT_OK;
}

/* Program 10's state: 15 bytes on the wire, an integer of each width. */
typedef struct laid {
    uint8_t mode;
    uint16_t level;
    uint32_t seen[3];
} laid_t;
static const state_field_t laid_fields[] = {STATE_FIELD(laid_t, mode), STATE_FIELD(laid_t, level),
                                            STATE_ARRAY(laid_t, seen)};
static const state_layout_t laid_layout = STATE_LAYOUT(laid_fields);

static const program_t programs[] = {{.id = 1, .name = "plain", .handler = task},
                                     {.id = 2, .name = "big", .handler = task, .state_size = 200},
                                     {.id = 3, .name = "bare", .handler = task},
                                     {.id = 9, .name = "movable", .handler = task},
                                     {.id = 10,
                                      .name = "laid",
                                      .handler = task,
                                      .state_size = sizeof(laid_t),
                                      .layout = &laid_layout}};

static void make_task(mt_pid_t pid, mt_prio_t prio, uint8_t flags)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .flags = flags, .handler = task};
    FUZZ_CHECK(sched_task_create(&spec) == MT_OK && sched_task_init(pid, NULL, 0) == MT_OK);
    FUZZ_CHECK(mcast_join(3, pid, PORT_0) == MT_OK);
}

static void boot_module(void)
{
    fuzz_boot();
    offered = taken = in_flight = 0;
    program_register(programs, sizeof programs / sizeof programs[0]);
    make_task(0x20, 2, TASK_MOVABLE);
    make_task(0x21, 5, 0);
    FUZZ_CHECK(sched_task_create_remote(0x30, 2, 0) == MT_OK);
    FUZZ_CHECK(sched_task_create_remote(0x31, 4, 2) == MT_OK);
    port_native_bus_capture(capture);
    FUZZ_CHECK(bus_start(SELF, MODULES) == MT_OK);
    sched_run_pending();
}

static void offer(const uint8_t *frame, uint16_t n)
{
    bool accepted = false;
    port_native_bus_inject_rx(frame, n, port_native_time() + 1u, &accepted);
    port_native_busy(2);
    offered++;
    taken += accepted;
}

static void frame_event(fuzz_input_t *in, bool intact)
{
    static uint8_t frame[BUS_FRAME_MAX];
    uint16_t want = fuzz_u16(in);
    uint16_t room = intact ? BUS_FRAME_MAX - BUS_CRC_SIZE : BUS_FRAME_MAX;
    uint16_t n = (uint16_t) fuzz_bytes(in, frame, want < room ? want : room);
    if (intact) {
        if (n < BUS_HEADER_SIZE) {
            memset(frame + n, 0, BUS_HEADER_SIZE - n);
            n = BUS_HEADER_SIZE;
        }
        uint16_t len = (uint16_t) (n - BUS_HEADER_SIZE);
        frame[8] = (uint8_t) len;
        frame[9] = (uint8_t) (len >> 8);
        uint16_t crc = appdesc_crc16(frame, n);
        frame[n] = (uint8_t) crc;
        frame[n + 1] = (uint8_t) (crc >> 8);
        n = (uint16_t) (n + BUS_CRC_SIZE);
    }
    offer(frame, n);
}

static void end_of_frame(uint8_t result)
{
    if (!in_flight) return;
    in_flight--;
    port_native_bus_inject_tx_done(result, port_native_time() + 1u);
    port_native_busy(2);
}

static void check_bounds(void)
{
    const bus_stats_t *s = bus_stats();
    FUZZ_CHECK(s->rx_frames + s->rx_bad == taken);
    FUZZ_CHECK(s->rx_corrupt <= offered - taken);
    FUZZ_CHECK(sched_queued_count() <= MOTET_MAX_QUEUED_MSGS);
    FUZZ_CHECK(bus_tx_pending() <= MOTET_BUS_TX_QUEUE && migrate_active() <= MOTET_MIGRATE_SLOTS);
    FUZZ_CHECK(mem_consistent());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_t in = {.data = data, .size = size};
    boot_module();
    for (unsigned k = 0; k < MAX_EVENTS && fuzz_more(&in); k++) {
        uint8_t op = fuzz_u8(&in);
        if (op % 4u < 2u)
            frame_event(&in, op % 4u == 0u);
        else if (op % 4u == 2u)
            end_of_frame((uint8_t) (fuzz_u8(&in) % 3u));
        else
            port_native_busy((uint32_t) fuzz_u16(&in) * 64u);
        sched_run_pending();
    }
    check_bounds();
    /* Let everything of ours go, then nothing may be left half done. */
    for (unsigned k = 0; k < 4u * MAX_EVENTS && in_flight; k++) {
        end_of_frame(PORT_BUS_SENT);
        sched_run_pending();
    }
    check_bounds();
    return 0;
}
