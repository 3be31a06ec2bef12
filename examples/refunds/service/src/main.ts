import { createLogger } from '@gatehouse/telemetry';
import { refundsConfigFromEnv } from './config.js';
import { startRefundsService } from './service.js';

const logger = createLogger('refunds');

try {
  const config = refundsConfigFromEnv();
  const service = await startRefundsService({ ...config, logger });
  logger.info({ url: service.url, schema: config.schema }, 'refunds service listening');
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  logger.fatal({ err: error }, 'refunds service failed to start');
  process.exitCode = 1;
}
