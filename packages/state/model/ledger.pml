/*
 * Gatehouse's claim ledger and write path, for SPIN (safety, exhaustive search). README.md beside this file
 * says what is modelled, the bounds, the results and what they mean; packages/state/test/ledger-model.test.ts
 * checks every variant in `npm test`.
 *
 * One command C of one run, whose write carries the idempotency key K. Three ledger keys (ledger-ops.pml):
 * KPOL the policy service's claim of C, KCMD the executors' `cmd:<run>:<command>` claim, KW the write key.
 * Two models share this file. The write path (default): C's order is on gatehouse.execute; copies of it
 * come from the environment (the policy service publishing its staged decision again after a takeover, or
 * a replay); two executors, the operator API, the environment and Final. POLICY_MODEL: the policy service
 * (two workers with TWO_POLICIES) deciding C, which the client may send twice. Any worker can crash at any
 * step and start again with nothing of its own (its open Kafka transaction aborted); a live worker may
 * stall until its leases run out (a zombie). The environment fails Redis over (what no replica holds yet is
 * gone) and replicates at any time. Final checks what must hold whenever everything has come to rest. Each
 * step below is one atomic transition; a delivery is a fresh owner token (claim-wait.ts: ownerToken).
 *
 *   model step            code (file: function), services/executor/src unless named
 *   --------------------  --------------------------------------------------------------------------------
 *   x_pick                the consumer delivers an order record (a redelivery, or one a rebalance handed over)
 *   X_CLAIM_CMD           command-claim.ts: claimCommand (claimOrWait on cmd:<run>:<command>; in_progress → throw,
 *                         the record comes back; settled/unknown → nothing; orphaned with a staged answer → repeat)
 *   X_REP_K, PUB,         command-claim.ts: repeatStagedAnswer (write-path.ts: settleKeyFromStagedAnswer, which
 *   X_FIN_CMD             claims K and settles or gives it back: one step here; publish; settle cmd)
 *   X_CLAIM_K             write-claim.ts: holdWriteKey, claimKey (settled → answer it; in_progress of this command →
 *                         throw; orphaned with a staged answer → takeOverOrphanedWrite's 'staged'; orphaned → X_STATUS0)
 *   X_STATUS0             write-claim.ts: takeOverOrphanedWrite (status-query.ts: askStatusQuery, resendableUnderKey,
 *                         outcomeFromStatus, handOffToOperator: the handoff is published in the same step)
 *   x_prove               write-proof.ts: proveWrite (approval-check.ts: authorize; approvals.consume, proposals.consume by K)
 *   X_SEND                write-run.ts: runLocked (fence = ledger.renew of K, then the send: one step; see README)
 *   X_STATUS1             write-run.ts: outcomeOfFailure (askStatusQuery; resend while send < SENDS = 2)
 *   X_STAGE               write-path.ts: settle (reopenProposal, giveBack for 'refused' and 'not_applied'), then
 *                         answerUnderKey's keyed.stage beside command-claim.ts: commandAnswer's stage ('taken' → throw)
 *   X_FIN_K, PUB          commandAnswer (keyed.settle = ledger.settle of K, delivery.publish)
 *   X_FIN_CMD, x_done     commandAnswer (ledger.settle of cmd); the consumer commits the record (order-handler.ts)
 *   P_CLAIM               services/policy/src/command-handler.ts: handle (entry.claim; in_progress waits)
 *   P_STAGE               command-handler.ts: decideAndPublish (decide, entry.stage; 'taken' → 'staged_by_another')
 *   P_PUB                 command-handler.ts: publishAll (a staged decision taken over is published again); a
 *                         failed publish → entry.giveBack, throw
 *   P_ANSWERED, p_done    command-handler.ts: handle (entry.settle); the consumer commits the record
 *   Op, O_MARK            services/policy/src/operator-api.ts: the resolve route (resolveUnknown, publish, resolutionPublished)
 *   ledger_*              packages/state/src/claim-ledger.ts: CLAIM, STAGE, SETTLE, GIVE_BACK, RENEW, RESOLVE (ledger-ops.pml)
 *   durable()             packages/state/src/lua-script.ts: runDurable (claims, stages and resolutions wait for WAIT)
 *   Env                   Redis' asynchronous replication and a replica's promotion; copies of the order
 *
 * Switches (spin -D…). Without any, the model is the code before the fixes below were made, design (a): answers
 * published plainly. The code as it stands has every FIX_* below.
 *   FIX_FENCE_CMD        the fence before a send renews the command's claim as well as K
 *   FIX_STAGE_ORDER      K's answer is staged only once the command's is (not concurrently)
 *   FIX_REOPEN           the proposal is reopened only while K is still this delivery's
 *   FIX_DURABLE_UNKNOWN  settling K as OUTCOME_UNKNOWN waits for the replica, like a claim
 *   FIX_STAGED_BY_ANOTHER  (policy) a refused stage throws, so the record comes back, instead of ending the delivery
 *   CHECK_TRUTH, CHECK_RETRY, CHECK_PROPOSAL, CHECK_RESOLVABLE, EXACTLY_ONE: the invariants only the fixed
 *                        ledger keeps, or (EXACTLY_ONE) only a publication design that publishes once
 *   NO_WAIT, NO_FENCE, NO_STAGE   teeth: the WAIT barrier, the renewal before the send, the staging removed
 *   TXN                  design (b): an answer is produced in a Kafka transaction with the consumed record's
 *                        offset, readers are read_committed, a crash aborts the open transaction, and a stale
 *                        group member's commit is fenced (KIP-447), for the record it consumed only
 *   R_RENEW              (b) + the claim is renewed inside the transaction, whose timeout is below the lease
 *   R_SCAN               (b) + an answer this delivery did not derive is published only if the results partition
 *                        (read_committed, from the offset recorded with the staged answer) does not hold it yet
 *   R_TXNID              (b) + a transactional id per command: claiming the command fences its earlier producers
 *   OFFSETS_APART        (b) with the consumed record's offset committed after the transaction, not in it
 *   NO_TXN_TIMEOUT       (b) + R_RENEW without the broker's transaction timeout: a takeover does not abort the
 *                        transaction its earlier owner renewed inside (the scan waits for it instead)
 *   PLAIN_SOR            the system of record neither honours K nor checks the approved target version
 *   LEAN_SOR             a send lands, its answer perhaps lost; the status query answers or is down (for (b))
 *   CRASHES, LAPSES, FAILOVERS, REPLAYS, RESENDS, RELEASES, EXPIRIES   the bounds (README.md)
 */

#define NKEY 3
#define KPOL 0
#define KCMD 1
#define KW 2
#include "ledger-ops.pml"

/* ---- bounds ---------------------------------------------------------------------------------------- */
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef LAPSES
#define LAPSES 1
#endif
#ifndef FAILOVERS
#define FAILOVERS 1
#endif
#ifndef REPLAYS
#define REPLAYS 1
#endif
#ifndef RESENDS
#define RESENDS 1
#endif
#ifndef RELEASES
#define RELEASES 1
#endif
#ifndef EXPIRIES
#define EXPIRIES 1
#endif
#define MAXORD 4
#define MAXTOK 15
#define FIRST_TOKEN 2

#ifdef PLAIN_SOR
#define SOR_HONOURS 0
#define SOR_VERSION 0
#else
#define SOR_HONOURS 1
#define SOR_VERSION 1
#endif

/* ---- answers ------------------------------------------------------------------------------------------ */
#define A_OK 1       /* the write's result */
#define A_FAIL 2     /* a refusal or failure, not retryable (the policy's too) */
#define A_RETRY 3    /* retryable: true, nothing applied, the key given back */
#define A_UNK 4      /* OUTCOME_UNKNOWN */
#define A_EXEC 5     /* the policy's decision to execute: an order, not an answer */
#define A_RES_OK 6   /* an operator's resolution: applied */
#define A_RES_FAIL 7 /* an operator's resolution: not applied */

/* ---- processes ---------------------------------------------------------------------------------------- */
#define NEXEC 2
#define POL0 2
#define POL1 3
#define OP 4
#define NPROC 5

#define IDLE 0
#define PUB 1 /* publish pav/pag, then go to ret */
#define TXR 2 /* (b) renew the claim inside the open transaction */
#define TXC 3 /* (b) commit */
#define X_CLAIM_CMD 10
#define X_REP_K 11
#define X_CLAIM_K 12
#define X_STATUS0 13
#define X_SEND 14
#define X_STATUS1 15
#define X_STAGE 16
#define X_FIN_K 17
#define X_FIN_CMD 18
#define P_CLAIM 30
#define P_STAGE 31
#define P_PUB 32
#define P_ANSWERED 33
#define O_MARK 40

/* ---- state -------------------------------------------------------------------------------------------- */
Rec rep[NKEY]; /* what the replica holds */

byte pc[NPROC], tok[NPROC], rc[NPROC], pav[NPROC], pag[NPROC], ret[NPROC];
bit kyd[NEXEC], kun[NEXEC], gbk[NEXEC], reo[NEXEC], prv[NEXEC];
byte snd[NEXEC];
#ifdef TXN
bit txo[NPROC], txc[NPROC];
byte txv[NPROC], txg[NPROC];
#endif
#ifdef R_TXNID
byte epo[NKEY];
#endif

bit ordp[MAXORD], ordc[MAXORD]; /* gatehouse.execute: the order's records, published and committed */
byte orda[MAXORD];              /* the member the record is assigned to (process + 1) */
byte nord;
byte ord_g; /* POLICY_MODEL: the tag of the decision the orders carry */
bit cmdp[2], cmdc[2]; /* gatehouse.commands: the command and the client's one re-send */
byte cmda[2];

bit applied;  /* the system of record applied the write (and stored K with it) */
byte effects; /* how many times */
bit apx;      /* the approval ran out */
bit apc;      /* the approval is consumed by K */
bit prop;     /* the proposal is consumed by K (0: open) */

byte vis_n, vis_v, vis_g; /* answers to C a read_committed subscriber sees: count, and the first */
byte res_n, res_v;        /* operator resolutions it sees */
byte hand;                /* OperatorHandoffs published */

byte crashes = CRASHES, lapses = LAPSES, failovers = FAILOVERS, replays = REPLAYS, resends = RESENDS;
byte releases = RELEASES, expiries = EXPIRIES;

/* Each invariant's flag: the assertion's text names the one that broke. */
hidden byte broken_same_answer, broken_one_answer, broken_same_resolution, broken_one_resolution;
hidden byte broken_ok_means_applied, broken_refusal_means_not_applied, broken_unknown_has_handoff;
hidden byte broken_one_effect, broken_effect_approved, broken_effect_after_refusal;
hidden byte broken_answered, broken_retry_can_succeed, broken_unknown_resolvable, broken_one_decision;
hidden byte broken_effect_with_proposal_open;
hidden byte cand, j_, eo, out_;

#define check(flag, cond) if :: !(cond) -> flag = 1 :: else -> skip fi; assert(!flag)

/* ---- tokens: one per delivery, never one still named anywhere --------------------------------------- */
#define KEY_NAMES(k, c) (led[k].own == c || led[k].sg == c || led[k].og == c || rep[k].own == c || rep[k].sg == c || rep[k].og == c)
#ifdef TXN
#define TX_NAMES(p, c) || txg[p] == c
#else
#define TX_NAMES(p, c)
#endif
#ifdef R_TXNID
#define EPOCH_NAMES(c) || epo[KPOL] == c || epo[KCMD] == c
#else
#define EPOCH_NAMES(c)
#endif
#define PROC_NAMES(p, c) (tok[p] == c || pag[p] == c TX_NAMES(p, c))
#define TOKEN_USED(c) (KEY_NAMES(0, c) || KEY_NAMES(1, c) || KEY_NAMES(2, c) || PROC_NAMES(0, c) || PROC_NAMES(1, c) || \
                       PROC_NAMES(2, c) || PROC_NAMES(3, c) || vis_g == c || ord_g == c EPOCH_NAMES(c))
#define OWNER_LIVE(t) (tok[0] == t || tok[1] == t || tok[2] == t || tok[3] == t)

inline new_token(t) {
  cand = FIRST_TOKEN;
  do
  :: cand > MAXTOK -> assert(false) /* more tokens named at once than MAXTOK */
  :: cand <= MAXTOK && TOKEN_USED(cand) -> cand++
  :: cand <= MAXTOK && !TOKEN_USED(cand) -> break
  od;
  t = cand;
  cand = 0
}

/* ---- Redis: the master (led) and its replica (rep) --------------------------------------------------- */
inline copy_rec(to, from) {
  to.st = from.st; to.own = from.own; to.lap = from.lap; to.sv = from.sv; to.sg = from.sg;
  to.ov = from.ov; to.og = from.og; to.res = from.res; to.pub = from.pub
}

inline clear_rec(r) {
  r.st = 0; r.own = 0; r.lap = 0; r.sv = 0; r.sg = 0; r.ov = 0; r.og = 0; r.res = 0; r.pub = 0
}

/* The replica holds everything the master wrote so far (WAIT, or replication catching up). */
inline sync_all() {
  j_ = 0;
  do
  :: j_ < NKEY -> copy_rec(rep[j_], led[j_]); j_++
  :: else -> break
  od;
  j_ = 0
}

/* The master dies and its replica takes over: whatever it had not received is gone. */
inline fail_over() {
  j_ = 0;
  do
  :: j_ < NKEY -> copy_rec(led[j_], rep[j_]); clear_rec(rep[j_]); j_++
  :: else -> break
  od;
  j_ = 0
}

/* runDurable: a claim, stage or resolution counts only once the replica holds it. */
inline durable() {
#ifndef NO_WAIT
  if
  :: failovers > 0 -> sync_all()
  :: else -> skip
  fi
#else
  skip /* teeth (1): the reply counts before any replica holds the write */
#endif
}

/* ---- leases ------------------------------------------------------------------------------------------ */
/* Every lease of owner t runs out (master and replica judge the same time). */
inline expire_owner(t) {
  eo = t;
  j_ = 0;
  do
  :: j_ < NKEY ->
     if
     :: led[j_].st == HELD && led[j_].own == eo -> led[j_].lap = 1
     :: else -> skip
     fi;
     if
     :: rep[j_].st == HELD && rep[j_].own == eo -> rep[j_].lap = 1
     :: else -> skip
     fi;
     j_++
  :: else -> break
  od;
#if defined(TXN) && defined(R_RENEW) && !defined(NO_TXN_TIMEOUT)
  /* A transaction the owner renewed inside had timed out before the lease ended. */
  j_ = 0;
  do
  :: j_ < NPROC ->
     if
     :: tok[j_] == eo && txo[j_] && txc[j_] -> txo[j_] = 0
     :: else -> skip
     fi;
     j_++
  :: else -> break
  od;
#endif
  j_ = 0;
  eo = 0
}

/*
 * Before a claim of k by another owner: a dead owner's lease runs out (it will); a live owner's may run out
 * too (it stalled: a zombie), at most LAPSES times in a run; otherwise the claim finds it in progress.
 */
inline lease_may_run_out(k) {
  if
  :: led[k].st == HELD && led[k].own != tok[me] && !led[k].lap && !OWNER_LIVE(led[k].own) -> expire_owner(led[k].own)
  :: led[k].st == HELD && led[k].own != tok[me] && !led[k].lap && OWNER_LIVE(led[k].own) && lapses > 0 ->
     lapses--;
     printf("   (t%d stalls: its leases run out while it lives on)\n", led[k].own);
     expire_owner(led[k].own)
  :: !(led[k].st == HELD && led[k].own != tok[me] && !led[k].lap && !OWNER_LIVE(led[k].own)) -> skip
  fi
}

/* ---- what subscribers see, and the invariants checked when it changes -------------------------------- */
inline publish_answer(v, g) {
#ifdef POLICY_MODEL
  check(broken_one_decision, nord == 0);
#endif
  if
#ifdef CHECK_TRUTH
  :: v == A_OK || v == A_RES_OK -> check(broken_ok_means_applied, applied)
  :: v == A_FAIL || v == A_RETRY || v == A_RES_FAIL -> check(broken_refusal_means_not_applied, !applied)
#endif
  :: v == A_UNK -> check(broken_unknown_has_handoff, hand > 0)
  :: else -> skip
  fi;
  if
  :: vis_n == 0 -> vis_v = v; vis_g = g
  :: else ->
     check(broken_same_answer, vis_v == v && vis_g == g);
#ifdef EXACTLY_ONE
     check(broken_one_answer, false);
#endif
     skip
  fi;
  if
  :: vis_n < 2 -> vis_n++
  :: else -> skip
  fi
}

inline publish_resolution(v) {
#ifdef CHECK_TRUTH
  if
  :: v == A_RES_OK -> check(broken_ok_means_applied, applied)
  :: else -> check(broken_refusal_means_not_applied, !applied)
  fi;
#endif
  if
  :: res_n == 0 -> res_v = v
  :: else ->
     check(broken_same_resolution, res_v == v);
#ifdef EXACTLY_ONE
     check(broken_one_resolution, false);
#endif
     skip
  fi;
  if
  :: res_n < 2 -> res_n++
  :: else -> skip
  fi
}

/* An order goes out on gatehouse.execute; g is the policy decision's tag (0 for a copy from the environment). */
inline publish_order(g) {
  assert(nord < MAXORD);
#ifdef POLICY_MODEL
  check(broken_one_decision, vis_n == 0 && (nord == 0 || ord_g == g));
  ord_g = g;
#endif
  ordp[nord] = 1;
  nord++
}

/* The system of record takes the write (under K, with the approved target version as expected_version). */
inline sor_apply(me) {
  if
  :: applied && SOR_HONOURS -> skip /* K is known: the stored response, nothing applied */
  :: applied && !SOR_HONOURS && SOR_VERSION -> skip /* VERSION_CONFLICT */
  :: !applied || (!SOR_HONOURS && !SOR_VERSION) ->
     printf("   >> system of record: the write is applied\n");
     check(broken_one_effect, effects == 0);
     check(broken_effect_approved, apc && prv[me]);
#ifdef CHECK_PROPOSAL
     check(broken_effect_with_proposal_open, prop);
#endif
#ifdef CHECK_TRUTH
     check(broken_effect_after_refusal, !(vis_n > 0 && (vis_v == A_FAIL || vis_v == A_RETRY)) && !(res_n > 0 && res_v == A_RES_FAIL));
#endif
     applied = 1;
     if
     :: effects < 2 -> effects++
     :: else -> skip
     fi
  fi
}

/* ---- every process --------------------------------------------------------------------------------- */
inline reset(p) {
  if
  :: p < NEXEC && orda[rc[p]] == p + 1 -> orda[rc[p]] = 0 /* the record is no one's until it is delivered again */
  :: (p == POL0 || p == POL1) && cmda[rc[p]] == p + 1 -> cmda[rc[p]] = 0
  :: else -> skip
  fi;
  pc[p] = IDLE; tok[p] = 0; rc[p] = 0; pav[p] = 0; pag[p] = 0; ret[p] = 0;
#ifdef TXN
  txo[p] = 0; txc[p] = 0; txv[p] = 0; txg[p] = 0;
#endif
  if
  :: p < NEXEC -> kyd[p] = 0; kun[p] = 0; gbk[p] = 0; reo[p] = 0; prv[p] = 0; snd[p] = 0
  :: else -> skip
  fi
}

#define IS_EXEC(p) ((p) < NEXEC)
#define ROLE(p) (IS_EXEC(p) -> 'E' : ((p) == OP -> 'O' : 'P'))
#define CLAIM_KEY(p) (IS_EXEC(p) -> KCMD : KPOL)

/* (b) with a transactional id per command: claiming the command fences its earlier producers. */
inline take_txn_id(k) {
#ifdef R_TXNID
  epo[k] = tok[me];
  j_ = 0;
  do
  :: j_ < NPROC ->
     if
     :: j_ != me && j_ != OP && IS_EXEC(j_) == IS_EXEC(me) && txo[j_] -> txo[j_] = 0
     :: else -> skip
     fi;
     j_++
  :: else -> break
  od;
  j_ = 0
#else
  skip
#endif
}

#ifdef TXN
/* Whether the record this process consumed is still its own (a stale member's commit is fenced). */
#define RECORD_OURS(p) ((p) == OP || (IS_EXEC(p) && orda[rc[p]] == (p) + 1) || (!IS_EXEC(p) && cmda[rc[p]] == (p) + 1))
#ifdef R_TXNID
#define EPOCH_OURS(p) ((p) == OP || epo[CLAIM_KEY(p)] == tok[p])
#else
#define EPOCH_OURS(p) true
#endif
#ifdef R_SCAN
#define SCANS(p) (pag[p] != tok[p])
#else
#define SCANS(p) false
#endif
#define LSO_CLEAR(p) ((p == 0 || !txo[0]) && (p == 1 || !txo[1]) && (p == 2 || !txo[2]) && (p == 3 || !txo[3]) && (p == 4 || !txo[4]))
#define ALREADY_SEEN(p) (((p) == OP && res_n > 0) || ((p) != OP && vis_n > 0))
/* OFFSETS_APART: the consumed record's offset is committed after the transaction, as a plain commit. */
#ifdef OFFSETS_APART
#define TXN_OFFSET false
#define TXN_RECORD_OURS(p) true
#else
#define TXN_OFFSET true
#define TXN_RECORD_OURS(p) RECORD_OURS(p)
#endif
#ifdef R_RENEW
#define RENEWS(p) ((p) != OP)
#else
#define RENEWS(p) false
#endif
#endif

inline announce(p, v, g) {
  printf("   >> results: answer %d/t%d visible (1 ok, 2 refused, 3 retryable, 4 OUTCOME_UNKNOWN, 6/7 resolution)\n", v, g);
  if
  :: p == OP -> publish_resolution(v)
  :: else -> publish_answer(v, g)
  fi
}

/*
 * PUB (design a): the answer goes out. (b): a transaction opens with it (after the scan, when the answer
 * is a repeat and R_SCAN holds: a reader stops at the last stable offset, so an open transaction of
 * another producer holds the scan up), TXR renews the claim inside it (an executor whose claim Redis
 * lost makes it again with the answer staged, as staging does: `stillHeld` in the executor), TXC
 * commits it with the record's offset.
 */
#ifndef TXN
#define PUBLISH_STEPS \
  :: atomic { pc[me] == PUB -> announce(me, pav[me], pag[me]); pc[me] = ret[me] }
#else
#define PUBLISH_STEPS \
  :: atomic { \
       pc[me] == PUB && (!SCANS(me) || LSO_CLEAR(me)) -> \
       if \
       :: SCANS(me) && ALREADY_SEEN(me) -> printf("%c%d t%d: scan finds the answer out already; publishes nothing\n", ROLE(me), me, tok[me]); pc[me] = ret[me] \
       :: else -> \
          printf("%c%d t%d: begins a transaction with answer %d/t%d\n", ROLE(me), me, tok[me], pav[me], pag[me]); \
          txo[me] = 1; txc[me] = 0; txv[me] = pav[me]; txg[me] = pag[me]; \
          if \
          :: RENEWS(me) -> pc[me] = TXR \
          :: else -> pc[me] = TXC \
          fi \
       fi \
     } \
  :: atomic { \
       pc[me] == TXR -> \
       ledger_renew(CLAIM_KEY(me), tok[me], out_); \
       if \
       :: out_ == 0 && IS_EXEC(me) && led[CLAIM_KEY(me)].st == FREE -> \
          printf("%c%d t%d: its claim was lost: made again with the answer staged\n", ROLE(me), me, tok[me]); \
          ledger_stage(CLAIM_KEY(me), tok[me], txv[me], txg[me], out_) \
       :: else -> skip \
       fi; \
       if \
       :: out_ == 1 -> printf("%c%d t%d: renews its claim in the transaction\n", ROLE(me), me, tok[me]); txc[me] = 1; pc[me] = TXC \
       :: else -> printf("%c%d t%d: renewal refused: aborts\n", ROLE(me), me, tok[me]); reset(me) \
       fi; \
       out_ = 0 \
     } \
  :: atomic { \
       pc[me] == TXC -> \
       if \
       :: txo[me] && TXN_RECORD_OURS(me) && EPOCH_OURS(me) -> \
          printf("%c%d t%d: commits the transaction\n", ROLE(me), me, tok[me]); \
          announce(me, txv[me], txg[me]); \
          if \
          :: TXN_OFFSET && IS_EXEC(me) -> ordc[rc[me]] = 1 \
          :: TXN_OFFSET && (me == POL0 || me == POL1) -> cmdc[rc[me]] = 1 \
          :: else -> skip \
          fi; \
          txo[me] = 0; txc[me] = 0; txv[me] = 0; txg[me] = 0; \
          pc[me] = ret[me] \
       :: else -> printf("%c%d t%d: commit refused (aborted or fenced)\n", ROLE(me), me, tok[me]); reset(me) \
       fi \
     }
#endif

/*
 * A record to deliver: one being handled by the other member (a rebalance hands it over, or a stalled
 * member still holds it), or the first unassigned one (unassigned copies of the order are alike, so the
 * model delivers the first of them only).
 */
#define FREE_ORDER(j) (ordp[j] && !ordc[j] && orda[j] == 0)
#define PICKABLE_ORDER(i) (ordp[i] && !ordc[i] && (orda[i] != 0 || !(FIRST_FREE_BEFORE(i))))
#define FIRST_FREE_BEFORE(i) ((i > 0 && FREE_ORDER(0)) || (i > 1 && FREE_ORDER(1)) || (i > 2 && FREE_ORDER(2)))

#include "executor.pml"
#include "policy.pml"

/* ---- the operator API --------------------------------------------------------------------------------- */
#define OP_ENABLED (hand > 0 && (led[KW].st == UNKNOWN || (led[KW].st == SETTLED && led[KW].res && !led[KW].pub)))

#ifndef POLICY_MODEL
proctype Op() {
  byte me = OP;
  byte out, rv;
end:
  do
  :: atomic {
       pc[me] == IDLE && OP_ENABLED -> /* the operator established what happened, and resolves it */
       ledger_resolve(KW, (applied -> A_RES_OK : A_RES_FAIL), out, rv);
       durable();
       assert(out == RESOLVED);
       printf("OP: resolves K as %d (6 applied, 7 not applied)\n", rv);
       pav[me] = rv; pag[me] = OPERATOR_TAG; ret[me] = O_MARK; pc[me] = PUB;
       out = 0; rv = 0
     }
  :: atomic { pc[me] == O_MARK -> ledger_mark_published(KW); printf("OP: marks the resolution published\n"); reset(me) }
  PUBLISH_STEPS
  :: atomic { pc[me] != IDLE && crashes > 0 -> printf("OP: crashes\n"); crashes--; reset(me) }
  od
}
#endif

/* ---- the environment -------------------------------------------------------------------------------- */
proctype Env() {
end:
  do
  :: atomic { failovers > 0 -> sync_all() }
  :: atomic { failovers > 0 && (led[0].st != FREE || led[1].st != FREE || led[2].st != FREE) -> failovers--; printf("   (Redis fails over: what the replica lacked is gone)\n"); fail_over() }
#ifdef POLICY_MODEL
  :: atomic { resends > 0 -> resends--; printf("   (the client sends the command again)\n"); cmdp[1] = 1 }
#else
  :: atomic { replays > 0 -> replays--; printf("   (a copy of the order is published: record %d)\n", nord); publish_order(0) }
#endif
  od
}

/* ---- at rest: every record handled, nobody busy, nothing left for the operator ----------------------- */
#define ALL_IDLE (pc[0] == IDLE && pc[1] == IDLE && pc[2] == IDLE && pc[3] == IDLE && pc[4] == IDLE)
#ifdef POLICY_MODEL
#define RECORDS_DONE ((!cmdp[0] || cmdc[0]) && (!cmdp[1] || cmdc[1]))
#define ANSWERED (vis_n > 0 || nord > 0)
#else
#define RECORDS_DONE ((!ordp[0] || ordc[0]) && (!ordp[1] || ordc[1]) && (!ordp[2] || ordc[2]) && (!ordp[3] || ordc[3]))
#define ANSWERED (vis_n > 0)
#endif

proctype Final() {
end:
  do
  :: atomic {
       ALL_IDLE && RECORDS_DONE && !OP_ENABLED ->
       check(broken_answered, ANSWERED);
#ifdef CHECK_RETRY
       check(broken_retry_can_succeed, vis_v != A_RETRY || led[KW].st == FREE || (led[KW].st == HELD && led[KW].sv == 0));
#endif
#ifdef CHECK_RESOLVABLE
       check(broken_unknown_resolvable, vis_v != A_UNK || res_n > 0);
#endif
       skip
     }
  od
}

/*
 * POLICY_MODEL: the policy service (one instance, two with TWO_POLICIES) deciding the command, which the
 * client may send twice; its orders are not run. Otherwise the write path: the order is on
 * gatehouse.execute, copies of it come from the environment (the policy service publishing its staged
 * decision again after a takeover, or a replay), and two executors and the operator handle it.
 */
init {
  atomic {
#ifdef POLICY_MODEL
    cmdp[0] = 1;
    run Pol(POL0);
#ifdef TWO_POLICIES
    run Pol(POL1);
#endif
#else
    ordp[0] = 1;
    nord = 1;
    run Exec(0);
    run Exec(1);
    run Op();
#endif
    run Env();
    run Final()
  }
}
