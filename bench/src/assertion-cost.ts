// `node bench/dist/assertion-cost.js [count]`: what a call assertion costs per call, in one process
// (CPU time, 10,000 of each by default): the executor minting one (EdDSA JWT, fresh jti) for a read
// and for a write (whose arguments it hashes first), and a system of record verifying one
// (signature, claims, replay memory, and for the write the body's canonical hash). Minted and
// verified 64 at a time, as a busy executor and service do them.
import { canonicalJson, sha256Hex } from '@gatehouse/contracts';
import { generateSigningKey, parseSigningKey, parseTrustedKeys } from '@gatehouse/events';
import { assertionJwks, CallAssertionSigner, CallAssertionVerifier } from '@gatehouse/identity';
import type { CallFacts } from '@gatehouse/identity';

const count = Number(process.argv[2] ?? 10_000);
const IN_FLIGHT = 64;
const pair = generateSigningKey('bench-assertion');
const signer = await CallAssertionSigner.create('urn:gatehouse:bench', parseSigningKey(pair.signingKey));
const verifier = new CallAssertionVerifier({
  issuer: 'urn:gatehouse:bench',
  audience: 'customers',
  keys: assertionJwks(parseTrustedKeys(pair.trustedKey)),
});
const body = {
  customer_id: 'C-1842',
  expected_version: 17,
  destination: { kind: 'new', line1: 'Piotrkowska 100', city: 'Łódź', country: 'PL', postal_code: '90-001' },
};

const read: CallFacts = {
  audience: 'customers',
  call: 'read',
  method: 'GET',
  target: '/customers/C-1842',
  principal: 'agent:bench',
  actor: 'executor-1',
  tenant: 'acme',
  runId: 'run-1',
  commandId: 'cmd-1',
  tool: 'get_customer.v1',
  onBehalfOf: { issuer: 'https://idp.example/realms/acme', subject: 'person-1' },
  argumentsSha256: sha256Hex('{"customer_id":"C-1842"}'),
  idempotencyKey: null,
  proposalId: null,
  approvalId: null,
  approver: null,
  expiresAt: Date.now() + 240_000,
};
const write = (): CallFacts => ({
  ...read,
  call: 'write',
  method: 'POST',
  target: '/customers/C-1842/address-changes',
  tool: 'commit_address_change.v2',
  argumentsSha256: sha256Hex(canonicalJson(body)),
  idempotencyKey: 'run-1:p_1:commit',
  proposalId: 'p_1',
  approvalId: 'apr_1',
  approver: 'https://idp.example/realms/acme#lead',
  expiresAt: Date.now() + 240_000,
});

/** CPU microseconds per call of `step`, `IN_FLIGHT` at a time, after a warm-up of a tenth as many. */
async function cost(n: number, step: (i: number) => Promise<unknown>): Promise<number> {
  const run = async (total: number, offset: number): Promise<void> => {
    for (let i = 0; i < total; i += IN_FLIGHT)
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, total - i) }, (_, k) => step(offset + i + k)));
  };
  await run(Math.ceil(n / 10), n);
  const start = process.cpuUsage();
  await run(n, 0);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const mintRead = await cost(count, () => signer.mint(read));
const mintWrite = await cost(count, () => signer.mint(write()));
// Each verification needs a token never presented before: minted ahead, outside the measure.
const reads = await Promise.all(Array.from({ length: count + Math.ceil(count / 10) }, () => signer.mint(read)));
const writes = await Promise.all(Array.from({ length: count + Math.ceil(count / 10) }, () => signer.mint(write())));
const verifyRead = await cost(
  count,
  async (i) =>
    (
      await verifier.verify({
        authorization: `Bearer ${reads[i] ?? ''}`,
        call: 'read',
        method: 'GET',
        target: '/customers/C-1842',
        tenant: 'acme',
      })
    ).ok || process.exit(1),
);
const verifyWrite = await cost(
  count,
  async (i) =>
    (
      await verifier.verify({
        authorization: `Bearer ${writes[i] ?? ''}`,
        call: 'write',
        method: 'POST',
        target: '/customers/C-1842/address-changes',
        tenant: 'acme',
        idempotencyKey: 'run-1:p_1:commit',
        body,
      })
    ).ok || process.exit(1),
);

const rows = {
  'mint a read’s assertion': mintRead,
  'mint a write’s assertion': mintWrite,
  'verify a read’s assertion': verifyRead,
  'verify a write’s assertion': verifyWrite,
};
for (const [what, us] of Object.entries(rows)) process.stdout.write(`${what.padEnd(30)} ${us.toFixed(1)} µs CPU\n`);
process.stdout.write(`assertion length: a read's ${reads[0]?.length ?? 0} bytes, a write's ${writes[0]?.length ?? 0} bytes\n`);
