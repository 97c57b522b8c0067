/* SPDX-License-Identifier: MIT */
/*
 * The task migration protocol of Motet (kernel/src/migrate*.c,
 * docs/migration.md) as a SPIN model: one migration of task T from the
 * source S to the destination D, with a bystander P, while a sender on P
 * and a sender on S send numbered messages to T, and D may die at any
 * moment or refuse the task (out of memory).
 *
 * The point of no return is D taking END, not S's decision: from RESULT ok
 * until END is through, S keeps T frozen with copies of what it forwarded
 * (kq) and holds what is sent to T on S (sq), and P keeps holding until
 * CONFIRM. END through: CONFIRM, the copies go, sq follows T to D. D dead
 * before END: S takes T back (kq, then sq, in that order) and sends a
 * second, failed RESULT, on which P releases to S.
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
 *   - the task handles each sender's messages once and in order (assertion
 *     in `task`: no duplicate, no reordering);
 *   - never live on two modules (ltl `single`);
 *   - no message lost: every one is handled, unless D died after it had
 *     started the task (taken END: the task then dies with its module, like
 *     any task of a module that dies) (ltl `complete`, weak fairness);
 *   - progress: the task ends up live on one module, the same proviso
 *     (ltl `settles`, weak fairness);
 *   - no deadlock (pan's invalid end states).
 *
 * Broken variants, each of which must fail (models/migration_*.pml and
 * tests/tools/test_spin_migration.py): BROKEN_REPLY_OVERTAKES (replies at
 * control priority: they may overtake the bystander's messages),
 * BROKEN_RELEASE_BEFORE_ROUTE (a bystander releases what it held back
 * before it updates its route), and BROKEN_NO_COPIES (the source keeps no
 * copy of what it forwarded: a destination dying before END loses them).
 *
 *   spin -a models/migration.pml && cc -O2 -o pan pan.c && ./pan -a -N single
 */

#define S 0
#define D 1
#define P 2
#define NP 3 /* messages from the sender on P */
#define NS 2 /* messages from the sender on S (local to the source) */

mtype = { DATA, FREEZE, REPLY, STATE, ATTACHED, RESULT, FWD, END, CONFIRM };

#define L(f, t) ((f) * 3 + (t))
chan lo[9] = [6] of { mtype, byte };
chan hi[9] = [3] of { mtype, byte };

/* A message is sender * 16 + number: sender 1 is P's, sender 2 is S's. */
#define FROM_P(n) (16 + (n))
#define FROM_S(n) (32 + (n))

chan tq[3] = [6] of { byte }; /* held or queued for T on each module */
chan fq = [6] of { byte };    /* on D: forwarded by S; they go first */
chan outb = [4] of { byte };  /* on P: held back during the migration */
chan kq = [6] of { byte };    /* on S: copies of what it forwarded, kept until END is through */
chan sq = [4] of { byte };    /* on S: local sends held back after the commit, same */

bit live[3];     /* T runs there */
bit tcb[3];      /* T's control block is there (live or frozen) */
byte route[3];   /* where each module's sends to T go */
bit crashed;     /* D has died */
bit committed;   /* S has decided: T is D's */
bit started;     /* D has taken END: the point of no return */
bit shold;       /* S holds back sends to T (from the commit until END is through) */
bit hold;        /* P holds back its sends to T */
byte sent_p, sent_s;
byte next_p = 1, next_s = 1; /* T's next expected number per sender */

/* A frame to D is lost once D is dead (reported unreachable). */
#define SEND(ch, to, k, v) if :: crashed && (to) == D -> skip :: else -> ch!k(v) fi

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
    :: else -> assert(v % 16 == next_s); next_s++
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
    :: atomic { sent_p < NP && !hold -> sent_p++; lo[L(P, route[P])]!DATA(FROM_P(sent_p)) }
    :: atomic { sent_p < NP && hold -> sent_p++; outb!FROM_P(sent_p) }
    :: atomic { hi[L(S, P)]?FREEZE(v) ->
            hold = 1;
#ifdef BROKEN_REPLY_OVERTAKES
            hi[L(P, S)]!REPLY(0)
#else
            lo[L(P, S)]!REPLY(0) /* behind everything sent to T before */
#endif
        }
    /* RESULT ok: the task is D's, but D has not started it: keep holding. */
    :: atomic { hi[L(S, P)]?RESULT(eval(1)) -> skip }
    /* CONFIRM (D has it all) or a failure, first or second outcome. */
    :: atomic { hi[L(S, P)]?CONFIRM(v) -> release(D) }
    :: atomic { hi[L(S, P)]?RESULT(eval(0)) -> release(S) }
    :: atomic { lo[L(S, P)]?DATA(v) -> ARRIVE(P, v) }
    od
}

proctype destination()
{
    byte v;
end:
    do
    :: atomic { !crashed -> crashed = 1; live[D] = 0; tcb[D] = 0 } -> break
    :: atomic { hi[L(S, D)]?FREEZE(v) -> lo[L(D, S)]!REPLY(0) }
    :: atomic { lo[L(S, D)]?STATE(v) ->
            if
            :: tcb[D] = 1; hi[L(D, S)]!ATTACHED(1)
            :: hi[L(D, S)]!ATTACHED(0) /* out of memory */
            fi
        }
    :: atomic { hi[L(S, D)]?RESULT(v) -> if :: !v -> tcb[D] = 0 :: else -> skip fi }
    :: atomic { lo[L(S, D)]?FWD(v) -> fq!v }
    :: atomic { lo[L(S, D)]?END(v) -> live[D] = 1; started = 1 }
    :: atomic { lo[L(S, D)]?DATA(v) -> ARRIVE(D, v) }
    :: atomic { lo[L(P, D)]?DATA(v) -> ARRIVE(D, v) }
    od
}

/* Commit: T leaves S; what S held for it follows in order, then END. */
inline move_out()
{
    tcb[S] = 0;
    route[S] = D;
    shold = 1;
    do
#ifdef BROKEN_NO_COPIES
    :: nempty(tq[S]) -> tq[S]?v; SEND(lo[L(S, D)], D, FWD, v)
#else
    :: nempty(tq[S]) -> tq[S]?v; kq!v; SEND(lo[L(S, D)], D, FWD, v)
#endif
    :: empty(tq[S]) -> break
    od;
    SEND(lo[L(S, D)], D, END, 0)
}

inline fail()
{
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
    :: atomic { st == 0 ->
            live[S] = 0; /* frozen: messages are held in tq[S] */
            hi[L(S, P)]!FREEZE(0);
            SEND(hi[L(S, D)], D, FREEZE, 0);
            st = 1
        }
    /* Replies count while waiting for them; a late one is dropped. */
    :: atomic { lo[L(P, S)]?REPLY(v) -> from_p = 1 }
    :: atomic { hi[L(P, S)]?REPLY(v) -> from_p = 1 }
    :: atomic { lo[L(D, S)]?REPLY(v) -> from_d = 1 }
    :: atomic { st == 1 && from_p && (from_d || crashed) ->
            /* every reply in (a dead D is not waited for: its probe fails) */
            SEND(lo[L(S, D)], D, STATE, 0);
            st = 2
        }
    :: atomic { (st == 1 || st == 2) && crashed -> fail() } /* D unreachable */
    /* Committed, END not through yet. */
    :: atomic { st == 3 && started -> /* END went through: D has it all */
            hi[L(S, P)]!CONFIRM(0);
            do :: nempty(kq) -> kq?v :: empty(kq) -> break od;
            shold = 0;
            do
            :: nempty(sq) -> sq?v; SEND(lo[L(S, D)], D, DATA, v)
            :: empty(sq) -> break
            od;
            st = 9
        }
    :: atomic { st == 3 && crashed && !started -> /* D died before END: resume */
            do :: nempty(kq) -> kq?v; tq[S]!v :: empty(kq) -> break od;
            do :: nempty(sq) -> sq?v; tq[S]!v :: empty(sq) -> break od;
            tcb[S] = 1;
            route[S] = S;
            shold = 0;
            live[S] = 1;
            hi[L(S, P)]!RESULT(0); /* the second outcome */
            st = 9
        }
    :: atomic { st == 2 && hi[L(D, S)]?[ATTACHED] ->
            hi[L(D, S)]?ATTACHED(v);
            if
            :: v ->
                committed = 1;
                hi[L(S, P)]!RESULT(1);
                SEND(hi[L(S, D)], D, RESULT, 1);
                move_out();
                st = 3
            :: else -> fail()
            fi
        }
    od
}

init
{
    atomic {
        live[S] = 1;
        tcb[S] = 1;
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
ltl complete { <> ((next_p == NP + 1 && next_s == NS + 1) || (crashed && started)) }
ltl settles { <> [] ((live[S] || live[D]) || (crashed && started)) }
