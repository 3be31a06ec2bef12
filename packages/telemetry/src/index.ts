export { createLogger } from './logger.js';
export type { CreateLoggerOptions, Logger } from './logger.js';
