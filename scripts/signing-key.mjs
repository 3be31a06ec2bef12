// `node scripts/signing-key.mjs <key id>`: a new Ed25519 key pair for one Gatehouse service role.
// Prints GATEHOUSE_SIGNING_KEY (secret: give it to the service of that role only) and the public
// half, for the variable that lists that role's keys to its readers: GATEHOUSE_POLICY_KEYS,
// GATEHOUSE_APPROVAL_KEYS or GATEHOUSE_EXECUTOR_KEYS. Each role gets a pair of its own. Rotate by
// listing old and new public keys at once, switching the service to the new key, then dropping the old one.
// An executor's call-assertion key is a pair of its own too: its private half is GATEHOUSE_ASSERTION_KEY,
// its public half goes in GATEHOUSE_ASSERTION_KEYS (the executors' JWKS; `gatehouse keys jwks` writes it as a file).
import { generateKeyPairSync } from 'node:crypto';

const id = process.argv[2];
if (id === undefined || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) {
  process.stderr.write('usage: node scripts/signing-key.mjs <key id>   (lower-case letters, digits, . _ -; e.g. policy-2026-12)\n');
  process.exit(2);
}
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
process.stdout.write(`GATEHOUSE_SIGNING_KEY=${id}:${privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')}\n`);
process.stdout.write(
  `# add to the readers' GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS or GATEHOUSE_EXECUTOR_KEYS, by the role it signs for`,
);
process.stdout.write(` (for call assertions: set the line above as GATEHOUSE_ASSERTION_KEY, this one in GATEHOUSE_ASSERTION_KEYS):\n`);
process.stdout.write(`${id}:${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}\n`);
