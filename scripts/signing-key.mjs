// `node scripts/signing-key.mjs <key id>`: a new Ed25519 key pair for signing execution orders.
// Prints GATEHOUSE_SIGNING_KEY (secret: give it to the policy and approval services only) and the
// line to add to GATEHOUSE_TRUSTED_KEYS (public: the executors'). Rotate by trusting old and new
// keys at once, switching the issuers to the new key, then dropping the old one.
import { generateKeyPairSync } from 'node:crypto';

const id = process.argv[2];
if (id === undefined || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) {
  process.stderr.write('usage: node scripts/signing-key.mjs <key id>   (lower-case letters, digits, . _ -; e.g. issuer-2026-11)\n');
  process.exit(2);
}
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
process.stdout.write(`GATEHOUSE_SIGNING_KEY=${id}:${privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')}\n`);
process.stdout.write(`GATEHOUSE_TRUSTED_KEYS=${id}:${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}\n`);
