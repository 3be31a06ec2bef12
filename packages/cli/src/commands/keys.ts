import type { CommandGroup } from '../command.js';
import { usageError } from '../exit-code.js';

/**
 * The executors' call-assertion key set, from the public keys the deployment lists
 * (GATEHOUSE_ASSERTION_KEYS): for systems of record that read the set from a file rather than
 * fetch an executor's `/.well-known/jwks.json` (over plain HTTP, only allowed on loopback).
 */
async function jwksText(listed: string | undefined): Promise<string> {
  if (listed === undefined || listed.trim() === '') {
    throw usageError(
      'set GATEHOUSE_ASSERTION_KEYS to the executors\u2019 call-assertion public keys (<key id>:<base64 SPKI Ed25519 key>, comma-separated)',
    );
  }
  const [{ parseTrustedKeys, SigningKeyError }, { assertionJwks }] = await Promise.all([
    import('@gatehouse/events'),
    import('@gatehouse/identity'),
  ]);
  try {
    return `${JSON.stringify(assertionJwks(parseTrustedKeys(listed)), null, 2)}\n`;
  } catch (error) {
    if (error instanceof SigningKeyError) throw usageError(`GATEHOUSE_ASSERTION_KEYS: ${error.message}`);
    throw error;
  }
}

export const keys: CommandGroup = {
  name: 'keys',
  summary: 'the public keys systems of record check Gatehouse\u2019s calls with',
  subcommands: [
    {
      name: 'jwks',
      summary: 'print the executors\u2019 call-assertion keys as a JWKS, for a system of record that reads them from a file',
      notes: [
        'Reads GATEHOUSE_ASSERTION_KEYS: every executor key in use, the old and the new while rotating.',
        'Example: gatehouse keys jwks > jwks.json, then CUSTOMERS_ASSERTION_KEYS=jwks.json. A system of record on an executor’s own host may read http://127.0.0.1:8092/.well-known/jwks.json instead; across a network, only over https.',
      ],
      async run({ io }) {
        io.stdout.write(await jwksText(io.env['GATEHOUSE_ASSERTION_KEYS']));
      },
    },
  ],
};
