/* SPDX-License-Identifier: MIT */
/*
 * Broken on purpose: migration_forgotten.pml with a source that answers
 * only the outcomes it still keeps, as Motet did before. A bystander that
 * missed the outcome asks for good and never releases what it held back:
 * `complete` fails.
 */
#define BROKEN_NO_ANSWER
#include "migration_forgotten.pml"
