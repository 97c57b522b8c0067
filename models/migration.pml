/* SPDX-License-Identifier: MIT */
/*
 * The task migration protocol of Motet (kernel/src/migrate*.c,
 * docs/migration.md) as a SPIN model: one migration of task T from the
 * source S to the destination D, with a bystander P, while a sender on P
 * and a sender on S send numbered messages to T, a second sender on P
 * multicasts numbered messages to T's group, and D may die at any moment or
 * refuse the task (out of memory).
 *
 * The point of no return is D taking END, not S's decision: from RESULT ok
 * until END is through, S keeps T frozen with copies of what it forwarded
 * (kq) and holds what is sent to T on S (sq), and P keeps holding until
 * CONFIRM. END through: CONFIRM, the copies go, sq follows T to D. D dead
 * before END: S takes T back (kq, then sq, in that order) and sends a
 * second, failed RESULT, on which P releases to S.
 *
 * Out of time. Before its decision S may give up at any moment (its budget
 * ran out: MOTET_MIGRATE_FRAME_MS per chunk and the rounds of answers,
 * migrate_source.c), with D alive and its image still on the way: T
 * resumes at S and the failed RESULT goes out. The image may reach D after
 * that RESULT (it overtakes the image's frames, at control priority); D
 * then attaches a copy, and S answers that ATTACHED with ABORT, on which D
 * drops the copy. No END is ever sent for a migration given up.
 *
 * After the decision, until END is out (the C: until the bus interface
 * has it), S may take T back on a clock at any moment (its rounds without
 * progress ran out, migrate_source.c): in DECIDED (its RESULT ok not yet
 * through everywhere), while forwarding, or with END still queued, which
 * it then takes out of the queue (the C's bus_withdraw_waiting(); here
 * END leaves the channel before D has taken it). T resumes at S with every
 * message, as from a dead D, and the failed RESULT goes to P and to D,
 * which drops its copy; a FORWARD still on its way to D after that finds
 * no copy. S may also send RESULT ok again (once here) while it waits in
 * DECIDED: a second one changes nothing anywhere.
 *
 * A bounded history (FORGETS, models/migration_forgotten.pml). Once it
 * has decided, S may forget the outcome at any moment (later migrations
 * push it out of the few it keeps); P and D may each miss the final
 * outcome once (stopped while it went by) and then ask S (PING), one
 * question at a time, until answered. S answers a question about the
 * decided migration from where T is, kept or not: here, a failure;
 * routed to D, CONFIRM, on which D starts a copy it still holds.
 *
 * Multicasts. S takes T out of its group when it freezes it and records
 * the multicasts to the group from then on (cq), each with its number on
 * the sender's link; D joins the group when it takes the successful RESULT
 * and notes the number of the last multicast it took before (cut). At the
 * commit S forwards the recorded ones behind the held messages (FWDC,
 * keeping copies in kq); D keeps those numbered up to its cut and drops
 * the later ones, which it delivered to T itself. A multicast reaches S
 * and D as separate receptions, in either order and at any distance in
 * time (a frame sent again to the module that rejected it), and the
 * successful RESULT likewise reaches D and P at their own moments; S
 * commits only once both have it (its transmission has ended).
 *
 * D may miss the successful RESULT (its frame went by while D was stopped,
 * so the bus ended it without D): D then joins at the first frame of the
 * migration's that only an OK decision sends, a FORWARD or END, with its
 * cut there. So that what D took before that late join is forwarded too,
 * S forwards the commit's share, then (once D has taken every frame it
 * sent: a multicast's FWDC, or an empty FWD if there was nothing to
 * forward) the multicasts recorded since the commit, and only then END
 * (the tail, `st == 5`). BROKEN_LATE_JOIN is the protocol before: no tail,
 * and D joins late at END, dropping every forwarded multicast.
 *
 * A stopped D (STALLS, models/migration_stalls.pml): D stops once before
 * it takes END, and the frames on their way to it go by it: a unicast of
 * S's ends unreachable, on which S takes T back as from a dead D; a
 * RESULT and a multicast end without D. D resumes at any later moment.
 * If S took T back meanwhile, D asks S (PING), learns the failure and
 * drops its copy, giving back only what S lacks: not the forwarded
 * messages (S kept copies) nor the multicasts delivered to it (S recorded
 * them). BROKEN_GIVES_BACK_ALL gives back everything. If not, D may have
 * missed RESULT ok and joins late, and multicasts that went by it are
 * forwarded numbered past its cut: D keeps every forwarded multicast it
 * did not deliver itself (`keep_cast`). BROKEN_WENT_BY drops them.
 *
 * One assumption about the bus: when S commits, and again when it builds
 * the tail, it has taken every multicast whose frame has ended at D, taken
 * there or gone by it (`S_HAS_D_CASTS`): a rejected multicast is sent
 * again in its sender's next slot,
 * while S commits only after its own RESULT has reached everyone and its
 * migrator has run, and builds the tail only after D has taken the frames
 * before it.
 *
 * The bus. Every module's frames to another go through one queue per
 * priority: `lo` is T's priority (its messages, the replies, the forwarded
 * messages and END), `hi` the migrators' control frames. Frames of equal
 * priority stay in order; a higher one may overtake a lower one, as on the
 * real bus (docs/bus.md), so every interleaving of the two queues is
 * explored. A frame to a dead module is lost (the bus reports it
 * unreachable: that is how S learns of D's death).
 *
 * What is checked:
 *   - the task handles each sender's messages once and in order, the
 *     multicasts included (assertion in `task`: no duplicate, no
 *     reordering);
 *   - never live on two modules (ltl `single`);
 *   - no message lost: every one is handled, unless D died after it had
 *     started the task (taken END: the task then dies with its module, like
 *     any task of a module that dies) (ltl `complete`, weak fairness);
 *   - progress: the task ends up live on one module, the same proviso
 *     (ltl `settles`, weak fairness);
 *   - no copy left behind: a frozen copy at D is, in the end, started or
 *     gone (ltl `no_stale_copy`, weak fairness; checked with D_STAYS, a D
 *     that never dies, since weak fairness would otherwise make D die and
 *     take its copy with it: models/migration_timeout.pml);
 *   - no deadlock (pan's invalid end states).
 *
 * Broken variants, each of which must fail (models/migration_*.pml and
 * tests/tools/test_spin_migration.py): BROKEN_REPLY_OVERTAKES (replies at
 * control priority: they may overtake the bystander's messages),
 * BROKEN_RELEASE_BEFORE_ROUTE (a bystander releases what it held back
 * before it updates its route), BROKEN_NO_COPIES (the source keeps no
 * copy of what it forwarded: a destination dying before END loses them),
 * and BROKEN_CAST_AT_RESULT (the protocol before the cut: T stays in its
 * group at S until S's RESULT has reached everyone, D joins at its own
 * copy of that RESULT, and every forwarded message is kept: a multicast
 * that reaches both in between is handled twice), and BROKEN_NO_ABORT (the
 * source ignores an ATTACHED for a migration it gave up: the copy that a
 * late image made stays at D for good), BROKEN_NO_ANSWER (with
 * FORGETS: an outcome no longer kept gets no answer, and a bystander that
 * missed it holds its messages back for good), and BROKEN_LATE_JOIN (no
 * tail: a D that missed RESULT ok joins at END, and a multicast it took
 * before is lost), and BROKEN_GIVES_BACK_ALL (with STALLS: a copy dropped
 * after a take-back gives back what the source has: handled twice), and
 * BROKEN_WENT_BY (with STALLS: D drops every forwarded multicast past its
 * cut, one that went by it before a late join among them: lost), and
 * BROKEN_CLOCK_AFTER_END (S takes T back on a clock with END out: D may
 * have taken it and run T, which is then live on two modules).
 *
 *   spin -a models/migration.pml && cc -O2 -o pan pan.c && ./pan -a -N single
 */

#define S 0
#define D 1
#define P 2
/* Messages per sender; the multicasts are checked in their own, smaller
 * configuration (migration_casts.pml): all three at once are too many
 * states for the test run. */
#ifndef NP
#define NP 3 /* messages from the sender on P (a bystander) */
#endif
#ifndef NS
#define NS 2 /* messages from the sender on S (local to the source) */
#endif
#ifndef NC
#define NC 0 /* multicasts from the second sender on P to T's group */
#endif

mtype = { DATA, CAST, FREEZE, REPLY, STATE, ATTACHED, RESULT, FWD, FWDC, END, CONFIRM, ABORT, PING };

#define L(f, t) ((f) * 3 + (t))
chan lo[9] = [9] of { mtype, byte };
chan hi[9] = [5] of { mtype, byte }; /* room for a RESULT ok sent again */

/* A message is sender * 16 + number: sender 1 is P's, sender 2 is S's,
 * sender 3 P's multicasts (the number is also the frame's on P's link). */
#define FROM_P(n) (16 + (n))
#define FROM_S(n) (32 + (n))
#define FROM_C(n) (48 + (n))

chan tq[3] = [8] of { byte }; /* held or queued for T on each module */
chan fq = [8] of { byte };     /* on D: forwarded by S; they go first */
chan outb = [4] of { byte };  /* on P: held back during the migration */
chan kq = [8] of { byte };    /* on S: copies of what it forwarded, kept until END is through */
chan sq = [4] of { byte };    /* on S: local sends held back after the commit, same */
chan cq = [2] of { byte };    /* on S: multicasts recorded since the freeze, not yet forwarded */
byte s_fwd, d_fwd;            /* FORWARDs S sent to D since the commit, D took (for the tail) */
#if NC > 0
#define COUNT(n) n++
#else
#define COUNT(n) skip /* no tail without multicasts: fewer states */
#endif

bit live[3];     /* T runs there */
bit tcb[3];      /* T's control block is there (live or frozen) */
byte route[3];   /* where each module's sends to T go */
bit crashed;     /* D has died */
bit committed;   /* S has decided: T is D's */
bit started;     /* D has taken END: the point of no return */
bit shold;       /* S holds back sends to T (from the commit until END is through) */
bit hold;        /* P holds back its sends to T */
byte sent_p, sent_s, sent_c;
byte next_p = 1, next_s = 1, next_c = 1; /* T's next expected number per sender */
bit member[3];   /* T is in its group there */
bit recording;   /* S records the multicasts to T's group */
byte s_took, d_took; /* the number of the last multicast S, D took */
byte cut;        /* D: d_took when it joined, raised to each forwarded multicast it keeps past it */
bit d_starting;  /* D took END (or CONFIRM) and starts T once no kept multicast's frame is on its way */
bit res_d, res_p; /* the successful RESULT taken by D, by P */
bit resent;      /* S sent RESULT ok again (once) */
#ifdef FORGETS
bit kept = 1;         /* S still keeps the outcome (only after its decision) */
#endif
#if defined(FORGETS) || defined(STALLS)
bit p_missed, d_missed; /* P, D missed the final outcome (stopped meanwhile) */
bit p_asks, d_asks;     /* P's, D's question is on its way or being answered */
#endif
bit stalled;     /* D is stopped (STALLS): frames to it go by it */
bit stall_seen;  /* D has stopped once */
bit unreach;     /* a unicast to D went by it: S takes T back */
byte d_missed_cast; /* the last multicast that went by D */

/* P's interface holds its multicast until S and D (unless dead) have it:
 * nothing else of P's goes on the bus meanwhile. */
#define CAST_OUT (s_took != sent_c || (d_took != sent_c && d_missed_cast != sent_c && !crashed && !stalled))

/* The one assumption about the bus (above): S has taken every multicast
 * whose frame has ended at D, taken there or gone by it. */
#define S_HAS_D_CASTS (s_took >= d_took && s_took >= d_missed_cast)

/* A frame that went by a stopped D: one of the image's or the commit's
 * unicasts ends unreachable (S is told, and takes T back), a RESULT ends
 * without D; the others do not matter here. */
inline went_by(k)
{
    if
    :: k == STATE || k == FWD || k == FWDC || k == END -> unreach = 1
    :: k == RESULT -> res_d = 1
    :: else -> skip
    fi
}
#define WENT_BY(k, v) went_by(k); if :: k == CAST -> d_missed_cast = v % 16 :: else -> skip fi

/* A frame to D is lost once D is dead (reported unreachable), or goes by
 * it while it is stopped. */
#define SEND(ch, to, k, v)                      \
    if                                          \
    :: crashed && (to) == D -> skip             \
    :: stalled && (to) == D -> WENT_BY(k, v)    \
    :: else -> ch!k(v)                          \
    fi

/* Deliver v to T on module m, or pass it on along m's route if T is not
 * there (a sender with a stale route; the C forwards the same way). */
#define ARRIVE(m, v)                                                  \
    if                                                                \
    :: tcb[m] -> tq[m]!v                                              \
    :: else -> SEND(lo[L(m, route[m])], route[m], DATA, v)            \
    fi

proctype task()
{
    byte v;
end:
    do
    :: atomic { live[S] && nempty(tq[S]) -> tq[S]?v; goto check }
    :: atomic { live[D] && nempty(fq) -> fq?v; goto check }
    :: atomic { live[D] && empty(fq) && nempty(tq[D]) -> tq[D]?v; goto check }
    od;
check:
    if
    :: v / 16 == 1 -> assert(v % 16 == next_p); next_p++
    :: v / 16 == 2 -> assert(v % 16 == next_s); next_s++
    :: else -> assert(v % 16 == next_c); next_c++
    fi;
    goto end
}

/* P learns where T is: it routes there and releases what it held back. */
inline release(to)
{
#ifdef BROKEN_RELEASE_BEFORE_ROUTE
    do
    :: nempty(outb) -> outb?v; SEND(lo[L(P, route[P])], route[P], DATA, v)
    :: empty(outb) -> break
    od;
    route[P] = to;
#else
    route[P] = to;
    do
    :: nempty(outb) -> outb?v; SEND(lo[L(P, route[P])], route[P], DATA, v)
    :: empty(outb) -> break
    od;
#endif
    hold = 0
}

proctype bystander()
{
    byte v;
end:
    do
    :: atomic { sent_p < NP && !hold && !CAST_OUT -> sent_p++; lo[L(P, route[P])]!DATA(FROM_P(sent_p)) }
    :: atomic { sent_p < NP && hold -> sent_p++; outb!FROM_P(sent_p) }
    /* One multicast frame: S and D each take it at their own moment. */
    :: atomic { sent_c < NC && !CAST_OUT -> sent_c++;
            lo[L(P, S)]!CAST(FROM_C(sent_c));
            SEND(lo[L(P, D)], D, CAST, FROM_C(sent_c))
        }
    :: atomic { hi[L(S, P)]?[FREEZE] && !CAST_OUT -> hi[L(S, P)]?FREEZE(v);
            hold = 1;
#ifdef BROKEN_REPLY_OVERTAKES
            hi[L(P, S)]!REPLY(0)
#else
            lo[L(P, S)]!REPLY(0) /* behind everything sent to T before */
#endif
        }
    /* RESULT ok: the task is D's, but D has not started it: keep holding. */
    :: atomic { hi[L(S, P)]?RESULT(eval(1)) -> res_p = 1 }
    /* CONFIRM (D has it all) or a failure, first or second outcome. */
    :: atomic { hi[L(S, P)]?[CONFIRM] && !CAST_OUT -> hi[L(S, P)]?CONFIRM(v); release(D) }
    :: atomic { hi[L(S, P)]?[RESULT(0)] && !CAST_OUT -> hi[L(S, P)]?RESULT(0); release(S) }
    :: atomic { lo[L(S, P)]?[DATA] && !CAST_OUT -> lo[L(S, P)]?DATA(v); ARRIVE(P, v) }
#ifdef FORGETS
    /* Stopped while the final outcome went by: it missed it (once). */
    :: atomic { !p_missed && hi[L(S, P)]?[CONFIRM] -> hi[L(S, P)]?CONFIRM(v); p_missed = 1 }
    :: atomic { !p_missed && hi[L(S, P)]?[RESULT(0)] -> hi[L(S, P)]?RESULT(0); p_missed = 1 }
    /* Still holding after its timeout: it asks S (one question at a time). */
    :: atomic { hold && p_missed && !p_asks && empty(hi[L(S, P)]) -> p_asks = 1; hi[L(P, S)]!PING(0) }
#endif
    od
}

/* D's copy goes on a failed outcome. What reached it goes back to S if
 * S lacks it: not what S forwarded (S kept copies, kq), nor a multicast
 * (S recorded every one D delivered after joining, or took it as a member
 * again). BROKEN_GIVES_BACK_ALL gives back everything (Motet before). */
inline drop_copy()
{
#ifdef BROKEN_GIVES_BACK_ALL
    do :: nempty(fq) -> fq?v; lo[L(D, S)]!DATA(v) :: empty(fq) -> break od;
    do :: nempty(tq[D]) -> tq[D]?v; lo[L(D, S)]!DATA(v) :: empty(tq[D]) -> break od;
#else
    do :: nempty(fq) -> fq?v :: empty(fq) -> break od;
    do
    :: nempty(tq[D]) -> tq[D]?v; if :: v / 16 == 3 -> skip :: else -> lo[L(D, S)]!DATA(v) fi
    :: empty(tq[D]) -> break
    od;
#endif
    tcb[D] = 0;
    member[D] = 0
}

#ifdef STALLS
/* D stops: the frames on their way to it go by it (its interface neither
 * answers nor keeps them). */
inline stall()
{
    stall_seen = 1;
    stalled = 1;
    do :: nempty(lo[L(S, D)]) -> lo[L(S, D)]?lost, _; went_by(lost) :: empty(lo[L(S, D)]) -> break od;
    do :: nempty(hi[L(S, D)]) -> hi[L(S, D)]?lost, _; went_by(lost) :: empty(hi[L(S, D)]) -> break od;
    do :: nempty(lo[L(P, D)]) -> lo[L(P, D)]?lost, v; WENT_BY(lost, v) :: empty(lo[L(P, D)]) -> break od
}
#endif

/* A forwarded multicast at D, joined. Taken before joining (up to the
 * cut): kept, ahead of everything. Past the cut: dropped if D delivered
 * it itself (it is in T's held list), else kept, whether its frame went
 * by D or is still on its way, in its frame's place among what D
 * delivered (the sorted send: ahead of the first multicast numbered
 * after it), and the cut rises to it: D no longer delivers that frame.
 * BROKEN_WENT_BY drops every one past the cut (Motet before): one that
 * went by D before a late join is lost. */
inline keep_cast(v)
{
#if defined(BROKEN_WENT_BY) || defined(BROKEN_LATE_JOIN)
    if :: v % 16 <= cut -> fq!v :: else -> skip fi
#else
    if
    :: v % 16 <= cut -> fq!v
    :: v % 16 > cut && tq[D]??[eval(v)] -> skip
    :: v % 16 > cut && !(tq[D]??[eval(v)]) -> tq[D]!!v; cut = v % 16
    fi
#endif
}

/* A kept multicast's frame has ended at D: taken (and not delivered) or
 * gone by. Until then D does not start T: as a member it would deliver
 * that frame again. */
#define CUT_ENDED (d_took >= cut || d_missed_cast >= cut)

/* D's copy joins T's group (once), noting its cut. */
inline join_late()
{
    if
    :: tcb[D] && !member[D] && !started -> member[D] = 1; cut = d_took
    :: else -> skip
    fi
}

proctype destination()
{
    byte v;
#ifdef STALLS
    mtype lost; /* a frame that went by it */
#endif
end:
    do
#ifndef D_STAYS
    :: atomic { !crashed -> crashed = 1; live[D] = 0; tcb[D] = 0; member[D] = 0 } -> break
#endif
    :: atomic { hi[L(S, D)]?FREEZE(v) -> lo[L(D, S)]!REPLY(0) }
    :: atomic { lo[L(S, D)]?STATE(v) ->
            if
            :: tcb[D] = 1; hi[L(D, S)]!ATTACHED(1)
            :: hi[L(D, S)]!ATTACHED(0) /* out of memory */
            fi
        }
#ifdef STALLS
    /* Stopped once, before END (a debugger, a brown-out that keeps RAM),
     * then resumed at any later moment, having missed what went by. */
    :: atomic { !stall_seen && !started -> stall() };
end_stalled: /* stopped for good is a valid end, as dead is */
        atomic { stalled = 0; d_missed = 1 }
#endif
    :: atomic { hi[L(S, D)]?RESULT(v) ->
            if
            :: !v -> drop_copy()
            :: v && tcb[D] -> join_late(); res_d = 1 /* joins the group */
#if NC > 0
            :: v && tcb[D] -> res_d = 1 /* went by while D was stopped: it joins later */
#endif
            :: else -> res_d = 1
            fi
        }
#ifdef BROKEN_LATE_JOIN
    :: atomic { lo[L(S, D)]?FWD(v) -> COUNT(d_fwd); if :: v -> fq!v :: else -> skip fi }
    :: atomic { lo[L(S, D)]?FWDC(v) -> COUNT(d_fwd); if :: v % 16 <= cut -> fq!v :: else -> skip fi }
#else
    /* Only an OK decision sends a FORWARD: one that missed RESULT joins here. */
    :: atomic { lo[L(S, D)]?FWD(v) -> COUNT(d_fwd); join_late(); if :: v -> fq!v :: else -> skip fi }
    /* A recorded multicast: kept if D took its frame before joining. */
    :: atomic { lo[L(S, D)]?FWDC(v) -> COUNT(d_fwd); join_late(); keep_cast(v) }
#endif
    /* Joined, D delivers what is past its cut; once T runs here, all. */
    :: atomic { lo[L(P, D)]?CAST(v) -> d_took = v % 16;
            if :: member[D] && (live[D] || v % 16 > cut) -> tq[D]!v :: else -> skip fi
        }
    :: atomic { lo[L(S, D)]?END(v) -> join_late(); started = 1; d_starting = 1 }
    :: atomic { d_starting && CUT_ENDED -> d_starting = 0; if :: tcb[D] -> live[D] = 1 :: else -> skip fi }
    /* A migration S gave up: the copy a late image made goes. */
    :: atomic { hi[L(S, D)]?ABORT(v) -> if :: !started -> tcb[D] = 0; member[D] = 0 :: else -> skip fi }
    :: atomic { lo[L(S, D)]?DATA(v) -> ARRIVE(D, v) }
    :: atomic { lo[L(P, D)]?DATA(v) -> ARRIVE(D, v) }
#ifdef FORGETS
    :: atomic { !d_missed && hi[L(S, D)]?[RESULT(0)] -> hi[L(S, D)]?RESULT(0); d_missed = 1 }
#endif
#if defined(FORGETS) || defined(STALLS)
    :: atomic { tcb[D] && !live[D] && d_missed && !d_asks && empty(hi[L(S, D)]) ->
            d_asks = 1;
            hi[L(D, S)]!PING(0)
        }
    /* The task is routed here: END was through, the copy starts. */
    :: atomic { hi[L(S, D)]?CONFIRM(v) -> if :: tcb[D] && !live[D] && !d_starting -> join_late(); started = 1; d_starting = 1 :: else -> skip fi }
#endif
    od
}

#if defined(FORGETS) || defined(STALLS)
/* A question about the migration once S has decided it: kept or not, S
 * answers from where T is (kernel/src/migrate_source.c): here, a failure;
 * routed to D, CONFIRM. Before the decision it is ignored (the outcome
 * will come). BROKEN_NO_ANSWER: an outcome no longer kept gets no answer. */
inline answer(to)
{
    if
    :: st != 9 -> skip
#ifdef BROKEN_NO_ANSWER
    :: st == 9 && !kept -> skip
    :: st == 9 && kept && tcb[S] -> SEND(hi[L(S, to)], to, RESULT, 0)
    :: st == 9 && kept && !tcb[S] -> SEND(hi[L(S, to)], to, CONFIRM, 0)
#else
    :: st == 9 && tcb[S] -> SEND(hi[L(S, to)], to, RESULT, 0)
    :: st == 9 && !tcb[S] && route[S] == D -> SEND(hi[L(S, to)], to, CONFIRM, 0)
#endif
    fi;
    if :: to == P -> p_asks = 0 :: else -> d_asks = 0 fi
}
#endif

/* Commit: T leaves S; what S held for it follows in order, then END. */
inline move_out()
{
    tcb[S] = 0;
    route[S] = D;
    shold = 1;
    do
#ifdef BROKEN_NO_COPIES
    :: nempty(tq[S]) -> tq[S]?v; COUNT(s_fwd); SEND(lo[L(S, D)], D, FWD, v)
#else
    :: nempty(tq[S]) -> tq[S]?v; kq!v; COUNT(s_fwd); SEND(lo[L(S, D)], D, FWD, v)
#endif
    :: empty(tq[S]) -> break
    od;
    do
    :: nempty(cq) -> cq?v; kq!v; COUNT(s_fwd); SEND(lo[L(S, D)], D, FWDC, v)
    :: empty(cq) -> break
    od;
#if NC > 0 && !defined(BROKEN_LATE_JOIN)
    if
    :: s_fwd == 0 -> COUNT(s_fwd); SEND(lo[L(S, D)], D, FWD, 0) /* nothing else: D joins at it */
    :: else -> skip
    fi
#else
    SEND(lo[L(S, D)], D, END, 0)
#endif
}

/* T's messages back in its queue here, in order, and T in its group
 * again: the copies of what was forwarded, what was sent here since the
 * commit, the multicasts recorded and not forwarded. */
inline reclaim()
{
    do :: nempty(kq) -> kq?v; tq[S]!v :: empty(kq) -> break od;
    do :: nempty(sq) -> sq?v; tq[S]!v :: empty(sq) -> break od;
    do :: nempty(cq) -> cq?v; tq[S]!v :: empty(cq) -> break od;
    recording = 0;
    member[S] = 1
}

/* After the decision, before END is out: T back at S on a clock. D is
 * alive (or its death not yet seen): the failed RESULT goes to it too. */
inline take_back_on_clock()
{
    reclaim();
    tcb[S] = 1;
    route[S] = S;
    shold = 0;
    live[S] = 1;
    hi[L(S, P)]!RESULT(0);
    SEND(hi[L(S, D)], D, RESULT, 0);
    st = 9
}

inline fail()
{
    reclaim();
    live[S] = 1; /* resume here */
    hi[L(S, P)]!RESULT(0);
    SEND(hi[L(S, D)], D, RESULT, 0);
    st = 9
}

proctype source()
{
    byte v, st = 0; /* 0 running, 1 replies, 2 attaching, 9 done */
    bit from_p, from_d;
end:
    do
    :: atomic { sent_s < NS -> sent_s++; v = FROM_S(sent_s); if :: shold -> sq!v :: else -> ARRIVE(S, v) fi }
    :: atomic { lo[L(P, S)]?DATA(v) -> if :: shold -> sq!v :: else -> ARRIVE(S, v) fi }
    :: atomic { lo[L(D, S)]?DATA(v) -> if :: shold -> sq!v :: else -> ARRIVE(S, v) fi }
    :: atomic { lo[L(P, S)]?CAST(v) -> s_took = v % 16;
            if
            :: member[S] -> tq[S]!v /* T here: queued, or held while frozen */
            :: !member[S] && recording -> cq!v
            :: else -> skip /* T has gone: its member is elsewhere */
            fi
        }
    :: atomic { st == 0 ->
            live[S] = 0; /* frozen: messages are held in tq[S] */
#ifndef BROKEN_CAST_AT_RESULT
            member[S] = 0; /* out of the group: its multicasts are recorded */
            recording = 1;
#endif
            hi[L(S, P)]!FREEZE(0);
            SEND(hi[L(S, D)], D, FREEZE, 0);
            st = 1
        }
    /* Replies count while waiting for them; a late one is dropped. */
    :: atomic { lo[L(P, S)]?REPLY(v) -> from_p = 1 }
    :: atomic { hi[L(P, S)]?REPLY(v) -> from_p = 1 }
    :: atomic { lo[L(D, S)]?REPLY(v) -> from_d = 1 }
    :: atomic { st == 1 && from_p && (from_d || crashed || stalled) ->
            /* every reply in (a dead D is not waited for: its probe fails) */
            SEND(lo[L(S, D)], D, STATE, 0);
            st = 2
        }
    /* D unreachable, or out of time with D alive and the image on its way:
     * before the decision S may give up at any moment. */
    :: atomic { st == 1 || st == 2 -> fail() }
#ifndef BROKEN_NO_ABORT
    :: atomic { st == 9 && hi[L(D, S)]?[ATTACHED] -> /* late: from a migration given up */
            hi[L(D, S)]?ATTACHED(v);
            SEND(hi[L(S, D)], D, ABORT, 0)
        }
#endif
#ifdef FORGETS
    /* Later migrations push the outcome out of S's bounded history. */
    :: atomic { st == 9 && kept -> kept = 0 }
    :: atomic { hi[L(P, S)]?PING(v) -> answer(P) }
#endif
#if defined(FORGETS) || defined(STALLS)
    :: atomic { hi[L(D, S)]?[PING] -> hi[L(D, S)]?PING(v); answer(D) }
#endif
    /* Committed, END not through yet. */
    :: atomic { st == 3 && started -> /* END went through: D has it all */
            hi[L(S, P)]!CONFIRM(0);
            do :: nempty(kq) -> kq?v :: empty(kq) -> break od;
            do :: nempty(cq) -> cq?v :: empty(cq) -> break od;
            recording = 0;
            shold = 0;
            do
            :: nempty(sq) -> sq?v; SEND(lo[L(S, D)], D, DATA, v)
            :: empty(sq) -> break
            od;
            st = 9
        }
    /* D died, or a unicast to it went by it (a FORWARD, then S sends no
     * tail), before END: resume. */
    :: atomic { ((st == 3 && crashed) || ((st == 3 || st == 5) && unreach)) && !started ->
            reclaim();
            tcb[S] = 1;
            route[S] = S;
            shold = 0;
            live[S] = 1;
            hi[L(S, P)]!RESULT(0); /* the second outcome */
            st = 9
        }
    /* Out of time after the decision (no progress for its rounds): RESULT
     * ok sent again, once; then, until END is out, T may be taken back.
     * NO_CLOCK_AFTER_DECISION: neither (migration_casts_no_clock.pml). */
#ifndef NO_CLOCK_AFTER_DECISION
    :: atomic { st == 4 && !resent -> resent = 1; hi[L(S, P)]!RESULT(1); SEND(hi[L(S, D)], D, RESULT, 1) }
    :: atomic { st == 4 || st == 5 -> take_back_on_clock() }
#ifdef BROKEN_CLOCK_AFTER_END
    :: atomic { st == 3 -> take_back_on_clock() } /* END out or not */
#else
    :: atomic { st == 3 && !started && lo[L(S, D)]??[END] -> lo[L(S, D)]??END(v); take_back_on_clock() }
#endif
#endif
    :: atomic { st == 2 && hi[L(D, S)]?[ATTACHED] ->
            hi[L(D, S)]?ATTACHED(v);
            if
            :: v ->
                committed = 1;
                hi[L(S, P)]!RESULT(1);
                SEND(hi[L(S, D)], D, RESULT, 1);
                st = 4
            :: else -> fail()
            fi
        }
    /* The RESULT has reached everyone (its transmission ended): commit. */
    :: atomic { st == 4 && (res_d || crashed) && res_p && S_HAS_D_CASTS ->
#ifdef BROKEN_CAST_AT_RESULT
            member[S] = 0; /* the multicasts from now on are D's */
            recording = 1;
#endif
            move_out();
#if NC > 0 && !defined(BROKEN_LATE_JOIN)
            st = 5
#else
            st = 3
#endif
        }
    /* The tail: D has taken every frame S sent it (it has joined), so the
     * multicasts recorded since the commit include every one D took
     * before joining; D keeps those up to its cut. Then END. */
    :: atomic { st == 5 && (d_fwd == s_fwd || crashed) && S_HAS_D_CASTS ->
            do
            :: nempty(cq) -> cq?v; kq!v; SEND(lo[L(S, D)], D, FWDC, v)
            :: empty(cq) -> break
            od;
            SEND(lo[L(S, D)], D, END, 0);
            st = 3
        }
    od
}

init
{
    atomic {
        live[S] = 1;
        tcb[S] = 1;
        member[S] = 1;
        route[S] = S;
        route[D] = S;
        route[P] = S;
        run task();
        run bystander();
        run destination();
        run source()
    }
}

ltl single { [] !(live[S] && live[D]) }
ltl complete { <> ((next_p == NP + 1 && next_s == NS + 1 && next_c == NC + 1) || (crashed && started)) }
ltl settles { <> [] ((live[S] || live[D]) || (crashed && started)) }
ltl no_stale_copy { <> [] (tcb[D] -> live[D]) }
