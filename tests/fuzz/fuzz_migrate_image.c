/* SPDX-License-Identifier: MIT */
/*
 * The migration image (migrate_image.c) on any bytes: an image the decoder
 * accepts is exactly what the encoder makes of it (the state that follows
 * aside), names only valid, distinct timers and lies inside its buffer;
 * re-arming each of its timers after any delay keeps its phase and fires
 * at most once.
 */
#include <string.h>

#include "fuzz_support.h"
#include "migrate_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > UINT16_MAX) return 0;
    fuzz_input_t tail = {.data = data + size - 4, .size = 4};
    uint32_t elapsed = fuzz_u32(&tail); /* the delay the timers are re-armed after */
    uint16_t n = (uint16_t) (size - 4);
    mig_image_t img;
    if (mig_image_decode(data, n, &img) != MT_OK) return 0;
    uint16_t head = mig_image_size(&img);
    FUZZ_CHECK(head <= n && img.n_timers <= TIMERS_PER_TASK);
    FUZZ_CHECK(img.prio >= 0 && img.prio < MOTET_PRIO_LEVELS);
    static uint8_t again[UINT16_MAX];
    FUZZ_CHECK(mig_image_encode(&img, again, sizeof again) == head);
    FUZZ_CHECK(memcmp(again, data, head) == 0);
    uint8_t seen = 0;
    for (uint8_t i = 0; i < img.n_timers; i++) {
        const mig_timer_t *t = &img.timers[i];
        FUZZ_CHECK(t->index < TIMERS_PER_TASK && !(seen & (1u << t->index)));
        seen |= (uint8_t) (1u << t->index);
        mig_rearm_t r = mig_timer_rearm(t->remaining, t->period, elapsed);
        if (!r.fire_now)
            FUZZ_CHECK(elapsed < t->remaining && r.first == t->remaining - elapsed);
        else if (t->period)
            FUZZ_CHECK(r.first >= 1 && r.first <= t->period &&
                       ((uint64_t) elapsed - t->remaining + r.first) % t->period == 0);
        else
            FUZZ_CHECK(r.first == 0);
    }
    for (uint8_t i = 0; i < img.n_routes; i++) {
        route_t r = mig_image_route(&img, i);
        FUZZ_CHECK(r.pid == data[MIG_IMAGE_HEADER + 2u * i]);
    }
    for (uint8_t i = 0; i < img.n_groups; i++) {
        uint8_t group;
        mt_port_t port;
        mig_image_group(&img, i, &group, &port);
        FUZZ_CHECK(img.groups + 2u * i + 1u < data + n);
    }
    return 0;
}
