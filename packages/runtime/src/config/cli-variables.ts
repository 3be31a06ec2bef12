import { integer, text, url } from './value-kind.js';
import { variable } from './variable.js';

/**
 * Read by the CLI and the agent client with their own readers (they do not depend on the runtime);
 * declared here so that docs/configuration.md documents them and a service started from the same shell knows them.
 */
export const CLI_VARIABLES = {
  GATEHOUSE_CONTROL_URL: variable(url({ schemes: ['http', 'https'], trimTrailingSlash: true }), {
    readers: ['cli', 'client'],
    default: 'http://127.0.0.1:8091',
    doc: "the policy service's control API",
  }),
  GATEHOUSE_APPROVAL_URL: variable(url({ schemes: ['http', 'https'], trimTrailingSlash: true }), {
    readers: ['cli'],
    default: 'http://127.0.0.1:8093',
    doc: "the approval service's API",
  }),
  GATEHOUSE_APPROVER_TOKEN: variable(text(), {
    readers: ['cli'],
    required: 'the approvals commands act as the approver it names',
    secret: true,
    doc: "an approver's bearer token: an access token of the IdP (`gatehouse approvals sign-in` prints one), or a demo token: says who decides",
  }),
  GATEHOUSE_CLI_CLIENT_ID: variable(text(), {
    readers: ['cli'],
    default: 'gatehouse-cli',
    doc: "the CLI's public client at the OpenID Provider (`GATEHOUSE_OIDC_ISSUER`), for `gatehouse approvals sign-in` and `gatehouse operations sign-in` (device authorization grant, RFC 8628)",
  }),
  GATEHOUSE_OPERATOR_TOKEN: variable(text(), {
    readers: ['cli'],
    required: 'the operations commands act as the operator it names',
    secret: true,
    doc: "an operator's access token of the IdP (`gatehouse operations sign-in` prints one): says who looks up and resolves operations, recorded as the resolver",
  }),
  GATEHOUSE_CLI_TIMEOUT_MS: variable(integer(1), { readers: ['cli'], default: '10000', doc: 'timeout of each HTTP request the CLI makes' }),
  GATEHOUSE_DLQ_READ_TIMEOUT_MS: variable(integer(1), {
    readers: ['cli'],
    default: '60000',
    doc: 'how long the `dlq` commands read dead-letter topics before giving up',
  }),
};
