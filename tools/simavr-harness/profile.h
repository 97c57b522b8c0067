/* SPDX-License-Identifier: MIT */
/*
 * Flat per-function cycle profile (profile.c), fed by the run step.
 */
#ifndef SIMAVR_HARNESS_PROFILE_H
#define SIMAVR_HARNESS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_avr.h"
#include "sim_elf.h"

/* Build the function table from the image's symbols; 0 on success. */
int profile_init(const elf_firmware_t *fw);
/* Charge `cycles` to the function holding byte address `pc`. */
void profile_add(uint32_t pc, uint64_t cycles);
/* Write the profile, heaviest first; `what` says what was profiled. */
int profile_write(const char *path, const char *what);
/* Write cycles and executions per instruction address, in address order,
 * over the same run and gate as the flat profile. */
int profile_write_pcs(const char *path, const char *what);

#endif /* SIMAVR_HARNESS_PROFILE_H */
