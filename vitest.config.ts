import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'examples/*/*/test/**/*.test.ts'],
          environment: 'node',
          // Nothing else runs beside the unit tests (npm test starts the stack after them): every core
          // imports and runs test files, where the default leaves one idle.
          maxWorkers: availableParallelism(),
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          exclude: ['test/faults/**'],
          environment: 'node',
          globalSetup: ['test/support/topic-cleanup.ts', 'test/support/test-realm.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Fault tests restart the broker and Redis under everyone's feet: they run alone, one file
        // at a time, after the other projects (scripts/test.mjs).
        test: {
          name: 'faults',
          include: ['test/faults/**/*.int.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/topic-cleanup.ts', 'test/support/test-realm.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 180_000,
        },
      },
      {
        // The soak (`npm run soak`, scripts/soak.mjs): minutes of load and faults, outside `npm test`.
        test: {
          name: 'soak',
          include: ['test/soak/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/topic-cleanup.ts', 'test/support/test-realm.ts'],
        },
      },
    ],
  },
});
