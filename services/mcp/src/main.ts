import { ConfigError, hostToolPack, loadToolPack, runMain } from '@gatehouse/runtime';
import { createRedis } from '@gatehouse/state';
import { createLogger, startTracing } from '@gatehouse/telemetry';
import { peopleSignIn } from './people-sign-in.js';
import { mcpConfigFromEnv } from './config.js';
import { startMcpService } from './service.js';
import { StdioTokenError } from './stdio-front.js';

// `--stdio`: stdout carries the protocol, so every log line goes to stderr.
const stdio = process.argv.includes('--stdio');
const logger = createLogger('mcp', stdio ? { destination: process.stderr } : {});
await runMain({
  name: 'mcp front door',
  logger,
  start: async (teardown) => {
    const config = mcpConfigFromEnv();
    // Spans leave the process only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Closed last, so the
    // spans of the final records are flushed.
    const tracing = startTracing(config.tracing);
    teardown.add(() => tracing.shutdown());
    if (stdio && (config.stdioToken === undefined || config.stdioRunKey === undefined)) {
      throw new StdioTokenError(
        '--stdio serves one run: set GATEHOUSE_MCP_TOKEN and GATEHOUSE_RUN_KEY to its token and key (gatehouse runs create --mcp-token)',
      );
    }
    const signingKey = config.signingKey;
    if (!stdio && signingKey === undefined) {
      throw new ConfigError([
        {
          variable: 'MCP_SIGNING_KEY',
          reason:
            "required for the HTTP endpoint: it proves its clients' commands with it (`node scripts/signing-key.mjs <key id>` makes a pair)",
        },
      ]);
    }
    const pack = await hostToolPack(await loadToolPack(config.toolPack ?? ''), process.env);
    const people =
      config.signIn === undefined
        ? undefined
        : await peopleSignIn(config.signIn, `${config.publicUrl ?? ''}/mcp`, pack.roles, pack.catalog);
    const redis = createRedis(config.redisUrl, 'gatehouse-mcp', logger);
    teardown.add(() => redis.quit());
    const service = await startMcpService({
      events: config.events,
      redis,
      redisPrefix: config.redisPrefix,
      catalog: pack.catalog,
      logger,
      transport:
        stdio || signingKey === undefined
          ? { kind: 'stdio', token: config.stdioToken ?? '', runKey: config.stdioRunKey ?? '' }
          : {
              kind: 'http',
              signingKey,
              host: config.host,
              port: config.port,
              publicUrl: config.publicUrl,
              allowedHosts: config.allowedHosts,
              allowedOrigins: config.allowedOrigins,
            },
      waitMs: config.waitMs,
      progressMs: config.progressMs,
      taskTtlMs: config.taskTtlMs,
      taskLeaseMs: config.taskLeaseMs,
      listTtlMs: config.listTtlMs,
      resultKeys: config.resultKeys,
      ...(people === undefined ? {} : { people }),
    });
    teardown.add(() => service.stop());
    return {
      url: service.url,
      pack: pack.name,
      tools: pack.catalog.tools().length,
      sign_in: people === undefined ? 'off' : people.verifier.issuer,
    };
  },
});
