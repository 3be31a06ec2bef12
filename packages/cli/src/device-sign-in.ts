import { discoverRelyingParty, oidc } from '@gatehouse/identity';
import type { Subcommand } from './command.js';
import { CliError, ExitCode } from './exit-code.js';
import { formatDuration } from './format.js';
import { identityProvider } from './settings.js';
import type { IdentityProviderTarget } from './settings.js';

/** What a person is asked to do on another device. */
interface DevicePrompt {
  readonly verificationUri: string;
  readonly verificationUriComplete: string | undefined;
  readonly userCode: string;
  readonly expiresInMs: number;
}

interface DeviceSignedIn {
  readonly accessToken: string;
  readonly expiresInS: number | undefined;
}

const errorName = (error: unknown): string => {
  const { error: oauthError, code, message } = error as { error?: unknown; code?: unknown; message?: unknown };
  if (typeof oauthError === 'string') return oauthError;
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : String(error);
};

/**
 * Signs a person in with the OAuth device authorization grant (RFC 8628): the IdP gives a code, the
 * person enters it in any browser and signs in there, and the CLI, polling as the IdP says, gets
 * their access token. The CLI never sees a password.
 */
async function deviceSignIn(target: IdentityProviderTarget, prompt: (p: DevicePrompt) => void): Promise<DeviceSignedIn> {
  let relyingParty: oidc.Configuration;
  try {
    relyingParty = await discoverRelyingParty(target.issuer, target.clientId);
  } catch (error) {
    throw new CliError(
      ExitCode.unreachable,
      'ISSUER_UNAVAILABLE',
      `the identity provider ${target.issuer} could not be discovered: ${errorName(error)}`,
      { cause: error },
    );
  }
  let started: Awaited<ReturnType<typeof oidc.initiateDeviceAuthorization>>;
  try {
    started = await oidc.initiateDeviceAuthorization(relyingParty, { scope: 'openid' });
  } catch (error) {
    throw new CliError(
      ExitCode.refused,
      'SIGN_IN_FAILED',
      `the identity provider refused to start a device sign-in for ${target.clientId}: ${errorName(error)}`,
      { cause: error },
    );
  }
  prompt({
    verificationUri: started.verification_uri,
    verificationUriComplete: started.verification_uri_complete,
    userCode: started.user_code,
    expiresInMs: started.expires_in * 1000,
  });
  try {
    const tokens = await oidc.pollDeviceAuthorizationGrant(relyingParty, started);
    return { accessToken: tokens.access_token, expiresInS: tokens.expires_in };
  } catch (error) {
    // access_denied, expired_token: the person said no, or the code ran out.
    throw new CliError(ExitCode.refused, 'SIGN_IN_FAILED', `the device sign-in did not complete: ${errorName(error)}`, { cause: error });
  }
}

/**
 * The `sign-in` subcommand of a group whose API takes a person's access token from `tokenVariable`:
 * the prompt goes to stderr, the token to stdout, so it can be captured with `$(…)`.
 */
export function signInSubcommand(tokenVariable: string, group: string, who: string, notes: readonly string[] = []): Subcommand {
  return {
    name: 'sign-in',
    summary: `sign in at the identity provider from any browser (device authorization grant) and print an ${who} access token`,
    notes: [
      'Prints where to go and the code to enter on stderr, waits for the sign-in, then prints the access token on stdout:',
      `  export ${tokenVariable}="$(gatehouse ${group} sign-in)"`,
      ...notes,
      'Needs GATEHOUSE_OIDC_ISSUER (and GATEHOUSE_CLI_CLIENT_ID, default gatehouse-cli). Exit 1 when the sign-in is refused or its code expires.',
    ],
    async run({ out, io }) {
      const signedIn = await deviceSignIn(identityProvider(io.env), (prompt) => {
        out.note(`To sign in, open ${prompt.verificationUriComplete ?? prompt.verificationUri}`);
        out.note(`and enter the code ${prompt.userCode} (valid ${formatDuration(prompt.expiresInMs)}).`);
      });
      out.result({ access_token: signedIn.accessToken, expires_in: signedIn.expiresInS }, () => `${signedIn.accessToken}\n`);
    },
  };
}
