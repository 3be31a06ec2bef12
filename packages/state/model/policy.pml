/*
 * The policy service's workers of ledger.pml's POLICY_MODEL (included by it, after the state and the
 * shared inlines): claim, decide and stage, publish, mark answered. ledger.pml's header maps each step to
 * the code.
 */

#ifdef POLICY_MODEL
/* ---- the policy service ------------------------------------------------------------------------------- */
inline p_pick(i) {
  rc[me] = i;
  cmda[i] = me + 1;
  new_token(tok[me]);
  printf("P%d t%d: takes command record %d\n", me, tok[me], i);
  pc[me] = P_CLAIM
}

inline p_done() {
  if
  :: cmda[rc[me]] == me + 1 -> cmdc[rc[me]] = 1
  :: else -> skip
  fi;
  reset(me)
}

proctype Pol(byte me) {
  byte out;
end:
  do
  :: atomic { pc[me] == IDLE && cmdp[0] && !cmdc[0] -> p_pick(0) }
  :: atomic { pc[me] == IDLE && cmdp[1] && !cmdc[1] && (cmda[1] != 0 || !(cmdp[0] && !cmdc[0] && cmda[0] == 0)) -> p_pick(1) }
  :: atomic {
       pc[me] == P_CLAIM ->
       lease_may_run_out(KPOL);
       ledger_claim(KPOL, tok[me], out);
       durable();
       if
       :: out == CLAIMED || out == ORPHANED -> printf("P%d t%d: claims: %d (1 first, 5 orphaned)\n", me, tok[me], out); take_txn_id(KPOL); pc[me] = P_STAGE
       :: out == ORPHANED_STAGED ->
          printf("P%d t%d: claims: staged decision %d/t%d, publishes it again\n", me, tok[me], led[KPOL].sv, led[KPOL].sg);
          take_txn_id(KPOL); pav[me] = led[KPOL].sv; pag[me] = led[KPOL].sg; pc[me] = P_PUB
       :: out == STORED || out == STORED_UNKNOWN -> printf("P%d t%d: claims: answered already\n", me, tok[me]); p_done()
       :: out == IN_PROGRESS -> printf("P%d t%d: claims: in progress\n", me, tok[me]); reset(me)
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == P_STAGE ->
       if
       :: pav[me] = A_EXEC
       :: pav[me] = A_FAIL /* refused (a rate window, a deadline): decided afresh, it could differ */
       fi;
       pag[me] = tok[me];
       ledger_stage(KPOL, tok[me], pav[me], pag[me], out);
       durable();
       if
       :: out == 1 -> printf("P%d t%d: decides and stages %d (5 execute, 2 refuse)\n", me, tok[me], pav[me]); pc[me] = P_PUB
#ifndef FIX_STAGED_BY_ANOTHER
       :: else -> printf("P%d t%d: stage refused: staged by another, which answers; done\n", me, tok[me]); p_done() /* another worker's decision was staged first; that one answers */
#else
       :: else -> printf("P%d t%d: stage refused: taken; throws, the record comes back\n", me, tok[me]); reset(me)
#endif
       fi;
       out = 0
     }
  :: atomic {
       pc[me] == P_PUB ->
       if
       :: pav[me] == A_EXEC -> printf("P%d t%d: publishes the order (record %d)\n", me, tok[me], nord); publish_order(pag[me]); pc[me] = P_ANSWERED
       :: else -> ret[me] = P_ANSWERED; pc[me] = PUB
       fi
     }
  :: atomic {
       pc[me] == P_PUB && releases > 0 ->
       releases--;
       ledger_give_back(KPOL, tok[me], out);
       printf("P%d t%d: publishing fails; releases the claim (%d) and throws\n", me, tok[me], out);
       reset(me); out = 0
     }
  :: atomic { pc[me] == P_ANSWERED -> ledger_settle(KPOL, tok[me], pav[me], pag[me], 0, out); printf("P%d t%d: marks it answered: %d; done\n", me, tok[me], out); p_done(); out = 0 }
  PUBLISH_STEPS
  :: atomic { pc[me] != IDLE && crashes > 0 -> printf("P%d t%d: crashes\n", me, tok[me]); crashes--; reset(me) }
  od
}

#endif
