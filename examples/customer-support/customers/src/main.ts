import { createLogger } from '@gatehouse/telemetry';
import { customersConfigFromEnv } from './config.js';
import { startCustomersService } from './service.js';

const logger = createLogger('customers');

try {
  const config = customersConfigFromEnv();
  const service = await startCustomersService(config, logger);
  logger.info({ url: service.url, schema: config.schema, faults: config.faultsEnabled }, 'customers service listening');
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
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
  logger.fatal({ err: error }, 'customers service failed to start');
  process.exitCode = 1;
}
