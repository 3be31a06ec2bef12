import { createHash } from 'node:crypto';
import type { Redis } from './redis-client.js';

/**
 * A Lua script run by its SHA1 (EVALSHA), so each call sends a 40-byte digest instead of the
 * script's text. Redis forgets scripts when it restarts (or on SCRIPT FLUSH); the NOSCRIPT answer
 * then falls back to EVAL, which loads the script again.
 */
export class LuaScript {
  readonly sha1: string;

  constructor(readonly source: string) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, numKeys, ...keysAndArgs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await redis.eval(this.source, numKeys, ...keysAndArgs);
    }
  }
}
