import { GatehouseError } from '@gatehouse/contracts';

/** A tool pack that cannot be loaded or hosted: the service does not start. */
export class ToolPackLoadError extends GatehouseError<'PACK_LOAD_FAILED'> {
  constructor(message: string, options?: ErrorOptions) {
    super('PACK_LOAD_FAILED', `tool pack: ${message}`, { cause: options?.cause });
  }
}
