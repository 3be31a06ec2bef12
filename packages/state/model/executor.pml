/*
 * The executors of ledger.pml's write path (included by it, after the state and the shared inlines): the
 * order's delivery, its command claim, the write path and the answer. ledger.pml's header maps each step
 * to the code.
 */

#ifndef POLICY_MODEL
/*
 * The two executors are alike: whenever both are idle the state is the same with their names swapped,
 * so the second starts a delivery only while the first is busy (a symmetry reduction: it prunes only the
 * mirror images of runs that are kept).
 */
#define SECOND_WAITS (me == 0 || pc[0] != IDLE)

/* ---- an executor ----------------------------------------------------------------------------------- */
inline x_pick(i) {
  rc[me] = i;
  orda[i] = me + 1;
  new_token(tok[me]);
  printf("E%d t%d: takes order record %d\n", me, tok[me], i);
  pc[me] = X_CLAIM_CMD
}

/* The consumer commits the record, unless it was taken from this member (a rebalance); the delivery ends. */
inline x_done() {
  if
  :: orda[rc[me]] == me + 1 -> ordc[rc[me]] = 1
  :: else -> skip
  fi;
  reset(me)
}

/* The settlement to answer with (write-settlement.ts: settle): staged, published and recorded from X_STAGE. */
inline x_settle(v, keyed, unk, givesBack, reopens) {
  pav[me] = v; pag[me] = tok[me]; kyd[me] = keyed; kun[me] = unk; gbk[me] = givesBack; reo[me] = reopens;
  pc[me] = X_STAGE
}

/* proveWrite: the approval unexpired (else APPROVAL_EXPIRED, the key given back), then approval and proposal consumed by K. */
inline x_prove() {
  if
  :: !apx && expiries > 0 -> expiries--; apx = 1; printf("   (the approval expires)\n")
  :: true -> skip
  fi;
  if
  :: apx -> printf("E%d t%d: approval expired\n", me, tok[me]); x_settle(A_FAIL, 0, 0, 1, 0)
  :: !apx -> apc = 1; prop = 1; prv[me] = 1; snd[me] = 1; pc[me] = X_SEND
  fi
}

/* An OperatorHandoff goes out; the answer is OUTCOME_UNKNOWN and K keeps it (operator-handoff.ts). */
inline x_hand_off() {
  if
  :: hand < 2 -> hand++
  :: else -> skip
  fi;
  printf("E%d t%d: hands off to an operator (OUTCOME_UNKNOWN)\n", me, tok[me]);
  x_settle(A_UNK, 1, 1, 0, 0)
}

proctype Exec(byte me) {
  byte out;
end:
  do
  :: atomic { pc[me] == IDLE && SECOND_WAITS && PICKABLE_ORDER(0) -> x_pick(0) }
  :: atomic { pc[me] == IDLE && SECOND_WAITS && PICKABLE_ORDER(1) -> x_pick(1) }
  :: atomic { pc[me] == IDLE && SECOND_WAITS && PICKABLE_ORDER(2) -> x_pick(2) }
  :: atomic { pc[me] == IDLE && SECOND_WAITS && PICKABLE_ORDER(3) -> x_pick(3) }
  :: atomic {
       pc[me] == X_CLAIM_CMD ->
       lease_may_run_out(KCMD);
       ledger_claim(KCMD, tok[me], out);
       durable();
       if
       :: out == CLAIMED || out == ORPHANED ->
          printf("E%d t%d: claims cmd: %d (1 claimed, 5 orphaned)\n", me, tok[me], out);
          take_txn_id(KCMD); pc[me] = X_CLAIM_K
       :: out == ORPHANED_STAGED ->
          printf("E%d t%d: claims cmd: orphaned with staged answer %d/t%d\n", me, tok[me], led[KCMD].sv, led[KCMD].sg);
          take_txn_id(KCMD); pav[me] = led[KCMD].sv; pag[me] = led[KCMD].sg; pc[me] = X_REP_K
       :: out == STORED || out == STORED_UNKNOWN ->
          printf("E%d t%d: claims cmd: answered already, nothing to do\n", me, tok[me]);
          x_done() /* answered already: this copy gets nothing */
       :: out == IN_PROGRESS -> printf("E%d t%d: claims cmd: in progress, throws\n", me, tok[me]); reset(me) /* throw: the record comes back */
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == X_REP_K ->
       lease_may_run_out(KW);
       ledger_claim(KW, tok[me], out);
       durable();
       if
       :: out == ORPHANED_STAGED ->
          printf("E%d t%d: claims K, orphaned with its staged answer, settles K with it\n", me, tok[me]);
          ledger_settle(KW, tok[me], led[KW].sv, led[KW].sg, led[KW].sv == A_UNK, out);
#ifdef FIX_DURABLE_UNKNOWN
          if
          :: led[KW].st == UNKNOWN -> durable()
          :: else -> skip
          fi;
#endif
          skip
       :: out == CLAIMED -> printf("E%d t%d: claims K (free), gives it back\n", me, tok[me]); ledger_give_back(KW, tok[me], out)
       :: else -> printf("E%d t%d: claims K: %d, leaves it\n", me, tok[me], out)
       fi;
       if
       :: out != IN_PROGRESS -> ret[me] = X_FIN_CMD; pc[me] = PUB
       :: else -> skip /* claimOrWait: waits for the live owner (this step again) */
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == X_CLAIM_K ->
       lease_may_run_out(KW);
       ledger_claim(KW, tok[me], out);
       durable();
       if
       :: out == STORED || out == STORED_UNKNOWN ->
          printf("E%d t%d: claims K: stored answer %d/t%d\n", me, tok[me], led[KW].ov, led[KW].og);
          pav[me] = led[KW].ov; pag[me] = led[KW].og; pc[me] = X_STAGE
       :: out == IN_PROGRESS -> printf("E%d t%d: claims K: in progress, throws\n", me, tok[me]); reset(me) /* another copy of this command runs it: throw */
       :: out == CLAIMED -> printf("E%d t%d: claims K, proves the approval\n", me, tok[me]); x_prove()
       :: out == ORPHANED_STAGED -> /* the previous owner's answer, and K settled with it */
          printf("E%d t%d: claims K: orphaned with staged answer %d/t%d\n", me, tok[me], led[KW].sv, led[KW].sg);
          pav[me] = led[KW].sv; pag[me] = led[KW].sg; kyd[me] = 1; kun[me] = (led[KW].sv == A_UNK); pc[me] = X_STAGE
       :: out == ORPHANED -> printf("E%d t%d: claims K: orphaned, nothing staged\n", me, tok[me]); pc[me] = X_STATUS0
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == X_STATUS0 -> /* the previous owner stopped mid-write: ask the system of record */
       if
       :: applied -> printf("E%d t%d: status query: applied\n", me, tok[me]); x_settle(A_OK, 1, 0, 0, 0)
       :: !applied && SOR_HONOURS -> /* it never saw K and honours it: send again, proof and all */
          printf("E%d t%d: status query: never saw K; proves again to resend\n", me, tok[me]); x_prove()
       :: !applied && !SOR_HONOURS -> printf("E%d t%d: status query: never saw K\n", me, tok[me]); x_hand_off()
       :: true -> printf("E%d t%d: status query down\n", me, tok[me]); x_hand_off() /* the status query is down */
       fi
     }
  :: atomic {
       pc[me] == X_SEND ->
#ifndef NO_FENCE
       ledger_renew(KW, tok[me], out);
#ifdef FIX_FENCE_CMD
       if
       :: out == 1 -> ledger_renew(KCMD, tok[me], out) /* the command must still be this delivery's too */
       :: else -> skip
       fi;
#endif
#else
       out = 1;
#endif
       if
       :: out == 0 -> printf("E%d t%d: fence: K taken over, sends nothing\n", me, tok[me]); reset(me) /* taken over: send nothing, answer nothing */
       :: out == 1 && (!applied || SOR_HONOURS || !SOR_VERSION) -> /* answered: applied (or the stored response for K) */
          printf("E%d t%d: sends the write: ok\n", me, tok[me]); sor_apply(me); x_settle(A_OK, 1, 0, 0, 0)
       :: out == 1 && applied && !SOR_HONOURS && SOR_VERSION ->
          printf("E%d t%d: sends the write: VERSION_CONFLICT\n", me, tok[me]); x_settle(A_FAIL, 1, 0, 0, 1) /* VERSION_CONFLICT */
       :: out == 1 -> printf("E%d t%d: sends the write: it lands, the answer is lost\n", me, tok[me]); sor_apply(me); pc[me] = X_STATUS1
#ifndef LEAN_SOR
       :: out == 1 -> printf("E%d t%d: sends the write: 503, retryable\n", me, tok[me]); x_settle(A_RETRY, 0, 0, 1, 1) /* 503: nothing applied */
       :: out == 1 -> printf("E%d t%d: sends the write: lost before it lands\n", me, tok[me]); pc[me] = X_STATUS1
#endif
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == X_STATUS1 ->
       if
       :: applied -> printf("E%d t%d: status query: applied\n", me, tok[me]); x_settle(A_OK, 1, 0, 0, 0)
       :: !applied && snd[me] < 2 && SOR_HONOURS -> printf("E%d t%d: status query: never saw K; resends\n", me, tok[me]); snd[me]++; pc[me] = X_SEND
       :: !applied && !(snd[me] < 2 && SOR_HONOURS) -> printf("E%d t%d: status query: never saw K\n", me, tok[me]); x_hand_off()
       :: true -> printf("E%d t%d: status query down\n", me, tok[me]); x_hand_off() /* the status query is down */
       fi
     }
  :: atomic {
       pc[me] == X_STAGE -> /* settle's reopen and give-back, then commandAnswer's staging (K's beside the command's) */
#ifndef FIX_REOPEN
       if
       :: reo[me] && prop -> prop = 0 /* reopenProposal: by K, whoever holds K now */
       :: else -> skip
       fi;
#endif
       if
       :: gbk[me] -> ledger_give_back(KW, tok[me], out); printf("E%d t%d: gives K back: %d\n", me, tok[me], out)
       :: else -> skip
       fi;
#ifdef FIX_REOPEN
       if
       :: reo[me] && prop && (!gbk[me] || out == 1) && (gbk[me] || (led[KW].st == HELD && led[KW].own == tok[me])) ->
          prop = 0 /* only while K is still this delivery's (given back by it just now) */
       :: else -> skip
       fi;
#endif
#ifndef NO_STAGE
#ifndef FIX_STAGE_ORDER
       if
       :: kyd[me] && pag[me] == tok[me] ->
          printf("E%d t%d: stages answer %d on K (K %d: 0 free, 1 held, 2 settled)\n", me, tok[me], pav[me], led[KW].st);
          ledger_stage(KW, tok[me], pav[me], pag[me], out) /* its reply is not looked at */
       :: else -> skip
       fi;
       ledger_stage(KCMD, tok[me], pav[me], pag[me], out);
#else
       ledger_stage(KCMD, tok[me], pav[me], pag[me], out);
       if
       :: out == 1 && kyd[me] && pag[me] == tok[me] -> ledger_stage(KW, tok[me], pav[me], pag[me], out_) /* only once the command's is staged */
       :: else -> skip
       fi;
       out_ = 0;
#endif
       durable();
#else
       out = 1; /* teeth (3): nothing staged, and nothing learnt of a takeover */
#endif
       if
       :: out == 0 -> printf("E%d t%d: stages answer %d: cmd taken, throws\n", me, tok[me], pav[me]); reset(me) /* taken over: that owner answers */
       :: out == 1 -> printf("E%d t%d: answer %d/t%d ready (staged unless NO_STAGE)\n", me, tok[me], pav[me], pag[me]);
          if
          :: kyd[me] -> pc[me] = X_FIN_K
          :: else -> ret[me] = X_FIN_CMD; pc[me] = PUB
          fi
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == X_FIN_K ->
       ledger_settle(KW, tok[me], pav[me], pag[me], kun[me], out);
#ifdef FIX_DURABLE_UNKNOWN
       if
       :: kun[me] -> durable() /* an unknown outcome is kept as durably as the claim: the operator must find it */
       :: else -> skip
       fi;
#endif
       printf("E%d t%d: settles K: %d\n", me, tok[me], out);
       ret[me] = X_FIN_CMD; pc[me] = PUB; out = 0
     }
  :: atomic {
       pc[me] == X_FIN_CMD ->
       ledger_settle(KCMD, tok[me], pav[me], pag[me], 0, out);
       printf("E%d t%d: settles cmd: %d; done\n", me, tok[me], out);
       x_done(); out = 0
     }
  PUBLISH_STEPS
  :: atomic { pc[me] != IDLE && crashes > 0 -> printf("E%d t%d: crashes\n", me, tok[me]); crashes--; reset(me) }
  od
}

#endif
