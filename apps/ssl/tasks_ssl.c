/* SPDX-License-Identifier: MIT */
/*
 * The SSL tasks: mic (sampling, one per channel), fft (window and FFT, one
 * per channel), sc (noise and detection, one per channel), vote, and ht
 * (SRP-PHAT). Sample blocks and spectra travel as heap blocks handed over
 * with MSG_HEAP and taken with sched_take(), so on one module no block is
 * ever copied; fft transforms its block in place. Each handler declares its computation to
 * the board with the cost model (dsp/cost.h), so that a simulated module's
 * clock moves as the modelled processor's would.
 */
#include <string.h>

#include "board.h"
#include "dsp/fft.h"
#include "dsp/sc.h"
#include "dsp/srp.h"
#include "dsp/vote.h"
#include "motet/motet.h"
#include "ssl_app.h"
#include "tasks.h"
#include "tasks_state.h"

#if MOTET_BUS
_Static_assert(SSL_SPECTRUM_MSG_LEN <= MOTET_BUS_PAYLOAD_MAX, "a band must fit one bus frame");
#endif

/* Little-endian init-string fields (the description's byte order). */
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

uint32_t ssl_now_us(void)
{
    return (uint32_t) ((uint64_t) timer_now() * 1000000u / PORT_TICKS_PER_SECOND);
}

/* Hand a heap block on; on failure it is still ours, so free it. */
static mt_err_t send_block(uint8_t out, void *block, uint16_t len)
{
    mt_err_t err = sched_send(out, block, len, MSG_HEAP);
    if (err) mem_free(block);
    return err;
}

/* ---- mic: every period, the block just captured ---- */

/* Capture windows end on multiples of the period in module time, not at
 * INIT plus a period: the modules of a device initialise at slightly
 * different instants (each after its own bus traffic), but their clocks
 * share one time base, so on the grid the four channels' windows are the
 * same 512 sampling instants and their block numbers agree. */
static mt_err_t mic_init(mic_state_t *s, const void *data, uint16_t len)
{
    if (len != 5) return MT_ERR_INVALID; /* u8 channel, u32 period (us) */
    const uint8_t *p = data;
    s->channel = p[0];
    s->period_us = get_u32(p + 1);
    if (s->channel >= SSL_CHANNELS || s->period_us == 0) return MT_ERR_INVALID;
    if (!board_has_mic(s->channel)) {
        static const char *const mics[SSL_CHANNELS] = {"microphone 0", "microphone 1",
                                                       "microphone 2", "microphone 3"};
        return ssl_missing(mics[s->channel]);
    }
    uint32_t now = ssl_now_us();
    s->next_us = (now / s->period_us + 1u) * s->period_us;
    return timer_start(0, TIMER_US(s->next_us - now), false);
}

/* The block goes to fft in the heap block that will hold its spectrum: the
 * samples fill what will be the bins, so fft transforms it in place. */
static mt_err_t mic_block(mic_state_t *s)
{
    if (!s->periodic) { /* on the grid now: every period from here */
        s->periodic = 1;
        mt_err_t err = timer_start(0, TIMER_US(s->period_us), true);
        if (err) return err;
    }
    ssl_spectrum_t *sp = mem_alloc(SSL_SAMPLES_MSG_LEN);
    if (!sp) return MT_ERR_NO_MEM;
    uint32_t t = s->next_us;
    s->next_us += s->period_us;
    if (!board_mic_read(s->channel, t, (int16_t *) (void *) sp->bins, SSL_N)) {
        mem_free(sp); /* the scenario is over */
        return timer_stop(0);
    }
    memset(sp, 0, sizeof *sp);
    sp->t_us = t;
    sp->block = (uint16_t) (t / s->period_us - 1u); /* the same on every module */
    sp->channel = s->channel;
    if (SSL_COST_MODEL) {
        cost_t c = {0};
        cost_adc_copy(&c, SSL_N);
        board_work(&c);
    }
    return send_block(0, sp, SSL_SAMPLES_MSG_LEN);
}

mt_err_t ssl_mic_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    mic_state_t *s = state;
    if (port == PORT_INIT) return mic_init(s, data, len);
    if (port == PORT_TIMEOUT0) return mic_block(s);
    return MT_OK;
}

/* ---- fft: window and real FFT of a block, in place ---- */

static mt_err_t fft_samples(void *data, uint16_t len)
{
    ssl_spectrum_t *sp = sched_take(data, len);
    if (!sp) return MT_ERR_NO_MEM;
    if (len != SSL_SAMPLES_MSG_LEN || sp->nbins != 0 || sp->channel >= SSL_CHANNELS) {
        mem_free(sp);
        return MT_ERR_INVALID; /* not a block from a mic task */
    }
    ssl_transform_block(sp);
    if (SSL_COST_MODEL) {
        cost_t c = {0};
        cost_window(&c, SSL_LOG2N);
        cost_fft_real(&c, SSL_LOG2N);
        board_work(&c);
    }
    return send_block(0, sp, SSL_SPECTRUM_MSG_LEN);
}

/* fft keeps nothing between blocks: it moves with an empty image. */
mt_err_t ssl_fft_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0) return fft_samples(data, len);
    if (port == PORT_SERIALIZE) return ssl_hand_over_image(NULL, 0);
    if (port == PORT_DESERIALIZE) return len == 0 ? MT_OK : MT_ERR_INVALID;
    return MT_OK;
}

/* ---- sc: noise estimate and detection; holds the band until the vote ---- */

static const sc_config_t sc_cfg = SSL_SC_CONFIG;

static mt_err_t sc_spectrum(sc_task_state_t *s, void *data, uint16_t len)
{
    ssl_spectrum_t *sp = sched_take(data, len);
    if (!sp) return MT_ERR_NO_MEM;
    if (sp->bin_lo != 0 || sp->nbins != SSL_SENT_BINS) {
        mem_free(sp);
        return MT_ERR_INVALID; /* not a spectrum from a mic task */
    }
    bool sound, training = s->sc.trained < sc_cfg.train_blocks;
    sp->signal_bins = sc_process(&s->sc, &sc_cfg, sp->bins + SSL_BIN_LO, sp->exponent, &sound);
    mem_free(s->held); /* a block the vote never decided */
    s->held = sp;
    if (SSL_COST_MODEL) {
        cost_t c = {0};
        cost_sc(&c, SSL_NBINS, sp->signal_bins, training);
        board_work(&c);
    }
    ssl_verdict_t v = {.block = sp->block, .channel = s->channel, .sound = sound};
    return sched_send(0, &v, sizeof v, 0);
}

static mt_err_t sc_decision(sc_task_state_t *s, const void *data, uint16_t len)
{
    const ssl_decision_t *d = data;
    if (len != sizeof *d || !s->held || s->held->block != d->block) return MT_OK;
    ssl_spectrum_t *sp = s->held;
    s->held = NULL;
    if (!d->sound) return mem_free(sp);
    return send_block(1, sp, SSL_SPECTRUM_MSG_LEN);
}

mt_err_t ssl_sc_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    sc_task_state_t *s = state;
    if (port == PORT_INIT) {
        if (len != 1 || *(const uint8_t *) data >= SSL_CHANNELS) return MT_ERR_INVALID;
        s->channel = *(const uint8_t *) data;
        sc_init(&s->sc, s->noise, &sc_cfg);
        return MT_OK;
    }
    if (port == PORT_0) return sc_spectrum(s, data, len);
    if (port == PORT_0 + 1) return sc_decision(s, data, len);
    mt_err_t err;
    if (ssl_sc_migration_port(s, port, data, len, &err)) return err;
    return MT_OK;
}

/* ---- vote ---- */

mt_err_t ssl_vote_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    vote_t *v = state;
    mt_err_t err;
    if (ssl_plain_state_port(v, sizeof *v, port, data, len, &err)) return err;
    const ssl_verdict_t *in = data;
    if (port != PORT_0 || len != sizeof *in) return MT_OK;
    vote_result_t r =
        vote_add(v, in->block, in->channel, in->sound != 0, SSL_CHANNELS, SSL_VOTE_NEED);
    if (SSL_COST_MODEL) {
        cost_t c = {0};
        cost_vote(&c);
        board_work(&c);
    }
    if (r == VOTE_PENDING) return MT_OK;
    ssl_decision_t d = {.block = in->block, .sound = r == VOTE_SOUND};
    return sched_send(0, &d, sizeof d, 0);
}

/* ---- ht: SRP-PHAT once the four bands of a block are in ---- */

mt_err_t ssl_ht_tables(ht_state_t *s)
{
    srp_config_t cfg = {
        .n_angles = SSL_ANGLES, .log2n = SSL_LOG2N, .bin_lo = SSL_BIN_LO, .nbins = SSL_NBINS};
    srp_geometry_t g;
    board_geometry(&g);
    s->workspace = mem_alloc(srp_workspace_size(&cfg));
    if (!s->workspace) return MT_ERR_NO_MEM;
    return srp_init(&s->srp, &cfg, &g, s->workspace) == 0 ? MT_OK : MT_ERR_INVALID;
}

static void ht_drop(ht_state_t *s)
{
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        mem_free(s->spec[c]);
        s->spec[c] = NULL;
    }
}

static mt_err_t ht_locate(ht_state_t *s)
{
    cq15_t *bands[SSL_CHANNELS];
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        bands[c] = s->spec[c]->bins + SSL_BIN_LO;
        srp_phat(bands[c], SSL_NBINS);
    }
    srp_cross(&s->srp, bands);
    srp_result_t r;
    srp_locate(&s->srp, &r);
    if (SSL_COST_MODEL) {
        cost_t c = {0};
        cost_srp(&c, SSL_NBINS, r.entries, SSL_ANGLES);
        board_work(&c);
    }
    ssl_direction_t d = {.t_us = s->spec[0]->t_us,
                         .block = s->block,
                         .angle_ddeg = r.angle_ddeg,
                         .entries = r.entries};
    ht_drop(s);
    return sched_send(0, &d, sizeof d, 0);
}

static mt_err_t ht_spectrum(ht_state_t *s, void *data, uint16_t len)
{
    ssl_spectrum_t *sp = sched_take(data, len);
    if (!sp) return MT_ERR_NO_MEM;
    if (sp->channel >= SSL_CHANNELS || sp->bin_lo != 0 || sp->nbins != SSL_SENT_BINS)
        return mem_free(sp);
    if (sp->block != s->block) { /* a new block: whatever is left is stale */
        ht_drop(s);
        s->block = sp->block;
    }
    mem_free(s->spec[sp->channel]);
    s->spec[sp->channel] = sp;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++)
        if (!s->spec[c]) return MT_OK;
    return ht_locate(s);
}

mt_err_t ssl_ht_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    ht_state_t *s = state;
    if (port == PORT_INIT) return ssl_ht_tables(s);
    if (port == PORT_0) return ht_spectrum(s, data, len);
    mt_err_t err;
    if (ssl_ht_migration_port(s, port, data, len, &err)) return err;
    return MT_OK;
}
