/* SPDX-License-Identifier: MIT */
/*
 * board_geometry() of the firmware boards: the array they are built with
 * (board_host.h), microphone m at the corner (+-side/2, +-side/2) counted
 * counter-clockwise from (+,+), as the simulator places them.
 */
#include "board.h"
#include "board_host.h"

void board_geometry(srp_geometry_t *g)
{
    static const int8_t sx[SRP_MICS] = {1, -1, -1, 1}, sy[SRP_MICS] = {1, 1, -1, -1};
    double half = SSL_ARRAY_SIDE_MM / 2000.0;
    for (unsigned m = 0; m < SRP_MICS; m++) {
        g->x[m] = sx[m] * half;
        g->y[m] = sy[m] * half;
    }
    g->sample_rate = SSL_ARRAY_RATE_HZ;
    g->speed_of_sound = SSL_ARRAY_SOUND_MM_S / 1000.0;
}
