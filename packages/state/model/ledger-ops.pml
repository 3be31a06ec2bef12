/*
 * The claim ledger: one record per key, each operation an inline with an explicit guard.
 *
 * packages/state/src/claim-ledger.ts, in the model's terms: the policy service's claim of a command_id,
 * the executor's claim of an order's command (`cmd:<run>:<command>`) and of a write's idempotency key are
 * all entries of one ledger, with one set of states and one family of scripts. ledger.pml (the protocol)
 * and history.pml.template (the replay of a recorded history) both include this file, so what the model
 * checks and what a recorded history is checked against are the same transitions.
 *
 * An entry is free (no record), held (in_flight: an owner and its lease, perhaps with a staged answer),
 * settled (succeeded or failed, keeping its answer) or unknown (OUTCOME_UNKNOWN stored, handed to an
 * operator). Time is not modelled: a lease runs out only by ledger_expire, which the environment may do at
 * any time, after which a claim by another owner takes the entry over (orphaned, with the staged answer
 * if there is one).
 *
 *   operation              claim-ledger.ts script   replies
 *   ledger_claim           CLAIM                    claimed | stored (settled) | stored_unknown | in_progress | orphaned |
 *                                                   orphaned_staged   (reused and no_run are not modelled: one payload)
 *   ledger_stage           STAGE                    1 staged (an entry Redis lost is made again, held by the stager) | 0 taken
 *   ledger_settle          SETTLE                   1 done (settled, or unknown) | 0 refused
 *   ledger_renew           RENEW                    1 done | 0 refused
 *   ledger_give_back       GIVE_BACK                1 done (free; a staged entry keeps its answer, its lease ended) | 0 refused
 *   ledger_resolve         RESOLVE                  resolved (now, or the same resolution again while unpublished) |
 *                                                   not_unknown | not_found
 *   ledger_mark_published  MARK_PUBLISHED           (always; an entry gone stays gone)
 *   ledger_expire          (time: a lease runs out) 1 expired | 0 refused (not held, or expired already)
 *
 * Every inline leaves its reply in `out`; the guards of each inline's branches are all that allows it.
 */

#define FREE    0
#define HELD    1
#define SETTLED 2
#define UNKNOWN 3

/* Replies of ledger_claim. */
#define CLAIMED         1
#define STORED          2
#define STORED_UNKNOWN  3
#define IN_PROGRESS     4
#define ORPHANED        5
#define ORPHANED_STAGED 6

/* Replies of ledger_resolve (the other operations answer 1 done, 0 refused). */
#define RESOLVED    1
#define NOT_UNKNOWN 2
#define NOT_FOUND   3

/* The operator's resolution is tagged as the operator's (stored outcome origin `operator:<by>`). */
#define OPERATOR_TAG 1

typedef Rec {
  byte st;  /* FREE, HELD, SETTLED, UNKNOWN */
  byte own; /* the owner's token while held */
  bit lap;  /* the owner's lease ran out (held) */
  byte sv;  /* the staged answer, 0 when none */
  byte sg;  /* its tag: which delivery derived it */
  byte ov;  /* the stored answer (settled, unknown) */
  byte og;  /* its tag */
  bit res;  /* settled by an operator's resolution */
  bit pub;  /* that resolution's answer is marked published */
}

Rec led[NKEY];

/* Scratch for the inlines: not part of the state. */
hidden byte lv, lg;
hidden byte lu;

inline ledger_clear(k) {
  led[k].st = FREE; led[k].own = 0; led[k].lap = 0; led[k].sv = 0; led[k].sg = 0;
  led[k].ov = 0; led[k].og = 0; led[k].res = 0; led[k].pub = 0
}

/* CLAIM: a new key, the same owner again, a stored answer, a live owner, or a lapsed owner's key taken over. */
inline ledger_claim(k, t, out) {
  if
  :: led[k].st == FREE ->
     ledger_clear(k); led[k].st = HELD; led[k].own = t; out = CLAIMED
  :: led[k].st == SETTLED -> out = STORED
  :: led[k].st == UNKNOWN -> out = STORED_UNKNOWN
  :: led[k].st == HELD && led[k].own == t -> led[k].lap = 0; out = CLAIMED
  :: led[k].st == HELD && led[k].own != t && !led[k].lap -> out = IN_PROGRESS
  :: led[k].st == HELD && led[k].own != t && led[k].lap ->
     led[k].own = t; led[k].lap = 0;
     if
     :: led[k].sv != 0 -> out = ORPHANED_STAGED
     :: else -> out = ORPHANED
     fi
  fi
}

/* STAGE: the answer about to go out, kept with the claim; a record Redis lost is made again, held by the stager. */
inline ledger_stage(k, t, v, g, out) {
  lv = v; lg = g;
  if
  :: led[k].st == FREE ->
     ledger_clear(k); led[k].st = HELD; led[k].own = t; led[k].sv = lv; led[k].sg = lg; out = 1
  :: led[k].st == HELD && led[k].own == t -> led[k].sv = lv; led[k].sg = lg; out = 1
  :: else -> out = 0
  fi;
  lv = 0; lg = 0
}

/* FINISH / ANSWERED: the owner stores the answer (as unknown when `unk`); the staged answer is dropped. */
inline ledger_settle(k, t, v, g, unk, out) {
  lv = v; lg = g; lu = unk;
  if
  :: led[k].st == HELD && led[k].own == t ->
     ledger_clear(k);
     if
     :: lu -> led[k].st = UNKNOWN
     :: else -> led[k].st = SETTLED
     fi;
     led[k].ov = lv; led[k].og = lg; out = 1
  :: else -> out = 0
  fi;
  lv = 0; lg = 0; lu = 0
}

/* RENEW: the owner's lease starts again (also after it ran out, if no one took the key over). */
inline ledger_renew(k, t, out) {
  if
  :: led[k].st == HELD && led[k].own == t -> led[k].lap = 0; out = 1
  :: else -> out = 0
  fi
}

/* ABANDON / RELEASE: the owner gives the key back; a staged answer stays, its lease ended, for the next owner. */
inline ledger_give_back(k, t, out) {
  if
  :: led[k].st == HELD && led[k].own == t && led[k].sv == 0 -> ledger_clear(k); out = 1
  :: led[k].st == HELD && led[k].own == t && led[k].sv != 0 -> led[k].lap = 1; out = 1
  :: else -> out = 0
  fi
}

/* RESOLVE: an operator settles an unknown outcome; the same resolution again, while unpublished, gets what it stored. */
inline ledger_resolve(k, v, out, outv) {
  if
  :: led[k].st == UNKNOWN ->
     led[k].st = SETTLED; led[k].ov = v; led[k].og = OPERATOR_TAG; led[k].res = 1; led[k].pub = 0;
     out = RESOLVED; outv = v
  :: led[k].st == SETTLED && led[k].res && !led[k].pub -> out = RESOLVED; outv = led[k].ov
  :: led[k].st == FREE -> out = NOT_FOUND
  :: else -> out = NOT_UNKNOWN
  fi
}

/* resolutionPublished: a retry of the same resolution is refused from now on. */
inline ledger_mark_published(k) {
  if
  :: led[k].st != FREE -> led[k].pub = 1
  :: else -> skip
  fi
}

/* Time passes: the holder's lease runs out. */
inline ledger_expire(k, out) {
  if
  :: led[k].st == HELD && !led[k].lap -> led[k].lap = 1; out = 1
  :: else -> out = 0
  fi
}
