// `node scripts/sealing-key.mjs <key id>`: a new X25519 key pair that people's tokens are sealed to.
// The policy service and the MCP front door keep a person's token for token exchange, and executors
// the refresh tokens exchanges leave, in Redis only as a JWE to the executors' public sealing keys;
// only an executor can open one. Prints GATEHOUSE_UNSEALING_KEYS (secret: give it to executors only)
// and the public half for GATEHOUSE_SEALING_KEYS (the same list for the policy service, the MCP front
// door and every executor). Rotate by adding the new public key to GATEHOUSE_SEALING_KEYS and the new
// private key to the executors' GATEHOUSE_UNSEALING_KEYS (beside the old), then dropping the old
// public key, and the old private key once the longest-lived token sealed to it has lapsed (a refresh
// token lives as long as the person's session at the IdP).
import { generateKeyPairSync } from 'node:crypto';

const id = process.argv[2];
if (id === undefined || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) {
  process.stderr.write('usage: node scripts/sealing-key.mjs <key id>   (lower-case letters, digits, . _ -; e.g. exec-seal-2026-12)\n');
  process.exit(2);
}
const { privateKey, publicKey } = generateKeyPairSync('x25519');
process.stdout.write(`GATEHOUSE_UNSEALING_KEYS=${id}:${privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')}\n`);
process.stdout.write(`# add to GATEHOUSE_SEALING_KEYS of the policy service, the MCP front door and every executor:\n`);
process.stdout.write(`${id}:${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}\n`);
