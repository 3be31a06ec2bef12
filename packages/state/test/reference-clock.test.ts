import { describe, expect, it } from 'vitest';
import { takesOver } from '../src/reference-clock.js';

describe('which reading of Redis’ clock the time is kept by', () => {
  it('takes the first reading however slow its answer was', () => {
    expect(takesOver(undefined, { offsetMs: -30_000, uncertaintyMs: 1_500 })).toBe(true);
  });

  it('takes a reading whose round trip was good', () => {
    expect(takesOver({ offsetMs: -30_000, uncertaintyMs: 2 }, { offsetMs: -30_010, uncertaintyMs: 240 })).toBe(true);
  });

  it('takes a slow reading over a slower one', () => {
    expect(takesOver({ offsetMs: -29_000, uncertaintyMs: 1_500 }, { offsetMs: -30_000, uncertaintyMs: 600 })).toBe(true);
  });

  it('keeps a certain reading over a slow one that agrees with it', () => {
    expect(takesOver({ offsetMs: -30_000, uncertaintyMs: 3 }, { offsetMs: -30_400, uncertaintyMs: 700 })).toBe(false);
  });

  it('takes a slow reading that contradicts the one in use beyond both uncertainties: the machine’s clock jumped', () => {
    expect(takesOver({ offsetMs: -30_000, uncertaintyMs: 3 }, { offsetMs: 0, uncertaintyMs: 700 })).toBe(true);
  });
});
