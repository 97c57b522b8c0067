/* SPDX-License-Identifier: MIT */
/*
 * The migration images of the SSL tasks sc and ht (apps/ssl/
 * tasks_migrate.c), on the destination's side: a well-formed sc image
 * restores the noise estimate and the held band; malformed images of
 * either task are refused with MT_ERR_INVALID before anything is
 * allocated (the migrator logs the error and the task stays at its
 * source); ht without room for its SRP tables says MT_ERR_NO_MEM. Also
 * sc's refusal of a spectrum that is not a band. The round trip through
 * a real migration is the scenario test_run_time_migration_keeps_detections
 * (tests/scenario/test_ssl_device.py).
 */
#include <string.h>

#include "board.h"
#include "migrate_internal.h"
#include "sched_internal.h"
#include "ssl_app.h"
#include "tasks.h"
#include "tasks_state.h"
#include "test_support.h"

enum { SC = 0x30, HT = 0x31 };

/* ---- the board the tasks are linked against: nothing but a geometry ---- */

bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n)
{
    (void) ch, (void) t_us, (void) out, (void) n;
    return false;
}
bool board_temp_read(uint32_t t_us, int16_t *temp_q4)
{
    (void) t_us, (void) temp_q4;
    return false;
}
bool board_has_mic(uint8_t ch)
{
    return ch < SSL_CHANNELS;
}
bool board_has_temp(void)
{
    return false;
}
bool board_has_radio(void)
{
    return false;
}
void board_geometry(srp_geometry_t *g)
{
    static const double corner[SSL_CHANNELS][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    for (unsigned m = 0; m < SSL_CHANNELS; m++) {
        g->x[m] = corner[m][0] * 0.1;
        g->y[m] = corner[m][1] * 0.1;
    }
    g->sample_rate = 16000.0;
    g->speed_of_sound = 343.0;
}
int32_t board_true_angle(uint32_t t_us, uint16_t n)
{
    (void) t_us, (void) n;
    return -1;
}
void board_work(const cost_t *c)
{
    (void) c;
}

/* ---- helpers ---- */

static uint8_t image[sizeof(sc_image_t) + 2 * SSL_SPECTRUM_MSG_LEN];

static int setup(void **state)
{
    test_boot(state);
    task_spec_t sc = {.pid = SC,
                      .prio = 2,
                      .flags = TASK_MOVABLE,
                      .handler = ssl_sc_task,
                      .state_size = sizeof(sc_task_state_t)};
    task_spec_t ht = {.pid = HT,
                      .prio = 2,
                      .flags = TASK_MOVABLE,
                      .handler = ssl_ht_task,
                      .state_size = sizeof(ht_state_t)};
    assert_int_equal(sched_task_create(&sc), MT_OK);
    assert_int_equal(sched_task_create(&ht), MT_OK);
    memset(image, 0, sizeof image);
    return 0;
}

/* Hand task pid `len` bytes of `image` on `port`, in a heap block, as the
 * migrator does; the handler's result. */
static mt_err_t deliver(mt_pid_t pid, mt_port_t port, uint16_t len)
{
    void *block = mem_alloc(len);
    assert_non_null(block);
    memcpy(block, image, len);
    return sched_mig_call(pid, port, block, len);
}

static uint16_t heap_in_use(void)
{
    mem_stats_t st;
    mem_get_stats(&st);
    return st.in_use;
}

/* A band of channel c for block `block` at `at`. */
static void put_band(uint8_t *at, uint8_t c, uint16_t block)
{
    ssl_spectrum_t head = {.block = block,
                           .nbins = SSL_SENT_BINS,
                           .signal_bins = 20,
                           .channel = c,
                           .exponent = 3,
                           .bin_lo = 0};
    memcpy(at, &head, sizeof head);
    for (unsigned i = sizeof head; i < SSL_SPECTRUM_MSG_LEN; i++) at[i] = (uint8_t) (i * 7u + c);
}

static void put_sc_head(uint8_t channel, uint8_t trained, uint16_t held_len)
{
    sc_image_t head = {.held_len = held_len, .channel = channel, .trained = trained};
    for (unsigned b = 0; b < SSL_NBINS; b++) head.noise[b] = 1000u + b;
    memcpy(image, &head, sizeof head);
}

static sc_task_state_t *sc_state(void)
{
    return sched_find_task(SC)->state;
}

/* ---- sc ---- */

static void test_sc_image_restores_estimate_and_held_band(void **state)
{
    (void) state;
    put_sc_head(2, 4, SSL_SPECTRUM_MSG_LEN);
    put_band(image + sizeof(sc_image_t), 2, 17);
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t) + SSL_SPECTRUM_MSG_LEN),
                     MT_OK);
    sc_task_state_t *s = sc_state();
    assert_int_equal(s->channel, 2);
    assert_int_equal(s->sc.trained, 4);
    assert_ptr_equal(s->sc.noise, s->noise); /* re-attached at its new address */
    assert_int_equal(s->noise[0], 1000);
    assert_int_equal(s->noise[SSL_NBINS - 1], 1000 + SSL_NBINS - 1);
    assert_non_null(s->held);
    assert_memory_equal(s->held, image + sizeof(sc_image_t), SSL_SPECTRUM_MSG_LEN);
    assert_int_equal(mem_owner(s->held), SC); /* the task's own block */
}

static void test_sc_image_without_band_holds_nothing(void **state)
{
    (void) state;
    put_sc_head(0, 1, 0);
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t)), MT_OK);
    assert_null(sc_state()->held);
    assert_int_equal(sc_state()->sc.trained, 1);
}

static void test_malformed_sc_images_are_refused_before_allocating(void **state)
{
    (void) state;
    uint16_t before = heap_in_use();
    put_sc_head(4, 0, 0); /* no channel 4 */
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t)), MT_ERR_INVALID);
    put_sc_head(1, 0, 0); /* too short */
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t) - 1), MT_ERR_INVALID);
    put_sc_head(1, 0, 100); /* a band of the wrong size */
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t) + 100), MT_ERR_INVALID);
    put_sc_head(1, 0, SSL_SPECTRUM_MSG_LEN); /* length and header disagree */
    put_band(image + sizeof(sc_image_t), 1, 3);
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t) + SSL_SPECTRUM_MSG_LEN - 4),
                     MT_ERR_INVALID);
    put_band(image + sizeof(sc_image_t), 0, 3); /* another channel's band */
    assert_int_equal(deliver(SC, PORT_DESERIALIZE, sizeof(sc_image_t) + SSL_SPECTRUM_MSG_LEN),
                     MT_ERR_INVALID);
    assert_null(sc_state()->held);
    assert_null(sc_state()->sc.noise); /* the state was never touched */
    assert_int_equal(heap_in_use(), before);
}

static void test_sc_refuses_a_spectrum_that_is_not_a_band(void **state)
{
    (void) state;
    ssl_spectrum_t whole = {.nbins = SSL_N / 2u, .bin_lo = 0};
    memcpy(image, &whole, sizeof whole);
    uint16_t before = heap_in_use();
    assert_int_equal(deliver(SC, PORT_0, SSL_SPECTRUM_MSG_LEN), MT_ERR_INVALID);
    assert_int_equal(heap_in_use(), before); /* freed, not held */
}

/* ---- ht ---- */

static void put_ht_head(uint16_t block, uint8_t present)
{
    ht_image_t head = {.block = block, .present = present};
    memcpy(image, &head, sizeof head);
}

static void test_malformed_ht_images_are_refused_before_allocating(void **state)
{
    (void) state;
    uint16_t before = heap_in_use();
    const uint16_t two = (uint16_t) (sizeof(ht_image_t) + 2 * SSL_SPECTRUM_MSG_LEN);
    put_ht_head(9, 0x10); /* a fifth channel */
    assert_int_equal(deliver(HT, PORT_DESERIALIZE, sizeof(ht_image_t)), MT_ERR_INVALID);
    put_ht_head(9, 0x05); /* channels 0 and 2, but only one band */
    put_band(image + sizeof(ht_image_t), 0, 9);
    assert_int_equal(deliver(HT, PORT_DESERIALIZE, sizeof(ht_image_t) + SSL_SPECTRUM_MSG_LEN),
                     MT_ERR_INVALID);
    put_band(image + sizeof(ht_image_t) + SSL_SPECTRUM_MSG_LEN, 1,
             9); /* channel 1 where 2 belongs */
    assert_int_equal(deliver(HT, PORT_DESERIALIZE, two), MT_ERR_INVALID);
    put_band(image + sizeof(ht_image_t) + SSL_SPECTRUM_MSG_LEN, 2, 8); /* another block's band */
    assert_int_equal(deliver(HT, PORT_DESERIALIZE, two), MT_ERR_INVALID);
    assert_int_equal(heap_in_use(), before);
}

static void test_ht_without_room_for_its_tables_says_so(void **state)
{
    (void) state;
    /* This kernel's heap (MOTET_HEAP_SIZE) is smaller than the SRP tables. */
    srp_config_t cfg = {
        .n_angles = SSL_ANGLES, .log2n = SSL_LOG2N, .bin_lo = SSL_BIN_LO, .nbins = SSL_NBINS};
    if (srp_workspace_size(&cfg) < MOTET_HEAP_SIZE) skip();
    put_ht_head(9, 0x01);
    put_band(image + sizeof(ht_image_t), 0, 9);
    assert_int_equal(deliver(HT, PORT_DESERIALIZE, sizeof(ht_image_t) + SSL_SPECTRUM_MSG_LEN),
                     MT_ERR_NO_MEM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_sc_image_restores_estimate_and_held_band, setup),
        cmocka_unit_test_setup(test_sc_image_without_band_holds_nothing, setup),
        cmocka_unit_test_setup(test_malformed_sc_images_are_refused_before_allocating, setup),
        cmocka_unit_test_setup(test_sc_refuses_a_spectrum_that_is_not_a_band, setup),
        cmocka_unit_test_setup(test_malformed_ht_images_are_refused_before_allocating, setup),
        cmocka_unit_test_setup(test_ht_without_room_for_its_tables_says_so, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
