/* SPDX-License-Identifier: MIT */
/*
 * migration.pml with a bounded history at the source: once it has decided,
 * the source may forget the outcome at any moment (later migrations push it
 * out of the MIG_OUTCOMES it keeps), and the bystander and the destination
 * may each miss the final outcome once (stopped while it went by), then ask
 * the source (PING) until they hear. The source answers from where the task
 * is: here, a failure; routed to the destination, CONFIRM. Checked: the
 * model's own properties, `complete` included: the bystander's held-back
 * messages all reach the task (tests/tools/test_spin_migration.py).
 */
#define FORGETS
#define NP 2 /* fewer messages: the questions and answers add their own states */
#define NS 1
#include "migration.pml"
