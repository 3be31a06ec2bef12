import { createRequire } from 'node:module';

/** A Kafka client arm (a′) would measure beside kafkajs, and why it is not measured here. */
export interface UnavailableClient {
  readonly client: string;
  readonly reason: string;
}

const CONFLUENT = '@confluentinc/kafka-javascript';

/**
 * Why the librdkafka bindings are not measured: npm fetches the package, but its install script
 * (`node-pre-gyp install --fallback-to-build`) reaches past the registry twice and npm rolls the
 * package back when both fail.
 */
const CONFLUENT_INSTALL_FAILURE =
  'its install script fetches a prebuilt binding from github.com (confluent-kafka-javascript-v1.10.1-node-v115-linux-glibc-x64.tar.gz: ' +
  "getaddrinfo ENOTFOUND github.com); the source build it falls back to runs librdkafka's configure --install-deps, which downloads " +
  'zlib, OpenSSL, zstd and libcurl ("Could not resolve host"; "Failed to install dependency libcurl"), so make stops and npm rolls the package back';

/** The clients of arm (a′) that cannot run on this machine, with the reason. */
export function unavailableClients(): UnavailableClient[] {
  try {
    createRequire(import.meta.url).resolve(CONFLUENT);
  } catch {
    return [{ client: CONFLUENT, reason: `not installable here: ${CONFLUENT_INSTALL_FAILURE}` }];
  }
  return [{ client: CONFLUENT, reason: 'installed, but the bench has no relay for it yet' }];
}
