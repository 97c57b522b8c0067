/* SPDX-License-Identifier: MIT */
/*
 * Run-time migration of the two SSL tasks whose states hold heap blocks:
 * each flattens its state into one image for the migrator and rebuilds it
 * on the destination (docs/migration.md: the kernel cannot follow
 * pointers).
 *
 * sc: the per-bin noise estimate (the learnt background: without it the
 * channel would train again and miss the next four blocks), the training
 * count, and the spectrum held for the vote's decision, if one is pending (the
 * decision is forwarded to the new module and must find the spectrum there,
 * or HT would lack that channel for the block).
 *
 * ht: the block being gathered and the spectra already in. The SRP tables
 * (16 KB) do not travel: they are a function of the array geometry, so the
 * destination builds them again.
 *
 * An image is checked before anything is allocated: a malformed one is
 * refused (MT_ERR_INVALID, logged by the kernel as the handler's error) and
 * the task stays on its module.
 */
#include <string.h>

#include "motet/motet.h"
#include "ssl_app.h"
#include "tasks.h"
#include "tasks_state.h"

/* A spectrum as mic sends it: channel c, SSL_SENT_BINS bins from bin 0. */
static bool spectrum_ok(const ssl_spectrum_t *sp, uint8_t channel)
{
    return sp->channel == channel && sp->nbins == SSL_SENT_BINS && sp->bin_lo == 0 &&
           sp->signal_bins <= SSL_NBINS;
}

/* A heap copy of the spectrum at `bytes` (SSL_SPECTRUM_MSG_LEN of them), or NULL. */
static ssl_spectrum_t *spectrum_copy(const uint8_t *bytes)
{
    ssl_spectrum_t *sp = mem_alloc(SSL_SPECTRUM_MSG_LEN);
    if (sp) memcpy(sp, bytes, SSL_SPECTRUM_MSG_LEN);
    return sp;
}

/* ---- sc ---- */

static mt_err_t sc_serialize(const sc_task_state_t *s)
{
    uint16_t held = s->held ? SSL_SPECTRUM_MSG_LEN : 0;
    uint8_t *image = mem_alloc((uint16_t) (sizeof(sc_image_t) + held));
    if (!image) return MT_ERR_NO_MEM; /* refused: the task stays */
    sc_image_t head = {.held_len = held, .channel = s->channel, .trained = s->sc.trained};
    memcpy(head.noise, s->noise, sizeof head.noise);
    memcpy(image, &head, sizeof head);
    if (held) memcpy(image + sizeof head, s->held, held);
    return ssl_hand_over_image(image, (uint16_t) (sizeof head + held));
}

static mt_err_t sc_deserialize(sc_task_state_t *s, const void *data, uint16_t len)
{
    sc_image_t head;
    const uint8_t *bytes = data;
    if (len < sizeof head) return MT_ERR_INVALID;
    memcpy(&head, bytes, sizeof head);
    if (head.channel >= SSL_CHANNELS ||
        (head.held_len != 0 && head.held_len != SSL_SPECTRUM_MSG_LEN) ||
        len != sizeof head + head.held_len)
        return MT_ERR_INVALID;
    ssl_spectrum_t *held = NULL;
    if (head.held_len) {
        ssl_spectrum_t band;
        memcpy(&band, bytes + sizeof head, sizeof band);
        if (!spectrum_ok(&band, head.channel)) return MT_ERR_INVALID;
        held = spectrum_copy(bytes + sizeof head);
        if (!held) return MT_ERR_NO_MEM;
    }
    memcpy(s->noise, head.noise, sizeof s->noise);
    s->sc.noise = s->noise; /* the estimate is ours again, at its new address */
    s->sc.trained = head.trained;
    s->channel = head.channel;
    s->held = held;
    return MT_OK;
}

bool ssl_sc_migration_port(sc_task_state_t *s, mt_port_t port, const void *data, uint16_t len,
                           mt_err_t *err)
{
    if (port == PORT_SERIALIZE) {
        *err = sc_serialize(s);
        return true;
    }
    if (port == PORT_DESERIALIZE) {
        *err = sc_deserialize(s, data, len);
        return true;
    }
    return false;
}

/* ---- ht ---- */

static uint8_t bands_in(uint8_t present)
{
    uint8_t n = 0;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) n += (present >> c) & 1u;
    return n;
}

static mt_err_t ht_serialize(const ht_state_t *s)
{
    ht_image_t head = {.block = s->block};
    for (uint8_t c = 0; c < SSL_CHANNELS; c++)
        if (s->spec[c]) head.present |= (uint8_t) (1u << c);
    uint16_t len = (uint16_t) (sizeof head + bands_in(head.present) * SSL_SPECTRUM_MSG_LEN);
    uint8_t *image = mem_alloc(len);
    if (!image) return MT_ERR_NO_MEM; /* refused: the task stays */
    memcpy(image, &head, sizeof head);
    uint8_t *at = image + sizeof head;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        if (!s->spec[c]) continue;
        memcpy(at, s->spec[c], SSL_SPECTRUM_MSG_LEN);
        at += SSL_SPECTRUM_MSG_LEN;
    }
    return ssl_hand_over_image(image, len);
}

/* Check every spectrum of the image before allocating any. */
static bool ht_image_ok(const ht_image_t *head, const uint8_t *bands, uint16_t len)
{
    if (head->present >> SSL_CHANNELS ||
        len != sizeof *head + bands_in(head->present) * SSL_SPECTRUM_MSG_LEN)
        return false;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        if (!(head->present & (1u << c))) continue;
        ssl_spectrum_t band;
        memcpy(&band, bands, sizeof band);
        if (!spectrum_ok(&band, c) || band.block != head->block) return false;
        bands += SSL_SPECTRUM_MSG_LEN;
    }
    return true;
}

static mt_err_t ht_deserialize(ht_state_t *s, const void *data, uint16_t len)
{
    ht_image_t head;
    const uint8_t *bytes = data;
    if (len < sizeof head) return MT_ERR_INVALID;
    memcpy(&head, bytes, sizeof head);
    const uint8_t *bands = bytes + sizeof head;
    if (!ht_image_ok(&head, bands, len)) return MT_ERR_INVALID;
    mt_err_t err = ssl_ht_tables(s);
    if (err) return err; /* the copy here is dropped, with whatever it allocated */
    s->block = head.block;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        if (!(head.present & (1u << c))) continue;
        s->spec[c] = spectrum_copy(bands);
        if (!s->spec[c]) return MT_ERR_NO_MEM;
        bands += SSL_SPECTRUM_MSG_LEN;
    }
    return MT_OK;
}

bool ssl_ht_migration_port(ht_state_t *s, mt_port_t port, const void *data, uint16_t len,
                           mt_err_t *err)
{
    if (port == PORT_SERIALIZE) {
        *err = ht_serialize(s);
        return true;
    }
    if (port == PORT_DESERIALIZE) {
        *err = ht_deserialize(s, data, len);
        return true;
    }
    return false;
}
