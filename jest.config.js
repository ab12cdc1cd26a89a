const os = require('node:os');

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testMatch: ['**/*.test.ts'],
  setupFiles: ['reflect-metadata'],
};

// One worker more than there are cores (Jest's default is one fewer): end-to-end files spend part of their time
// waiting (timers, retries, child processes), and a third worker fills those waits on a 2-core machine. Measured
// back to back on one: `npm test` took 322 and 341 s with two workers (89 % of both cores busy) and 302 and 305 s
// with three (96 %), every test passing: little is left for a fourth to fill. The hooks' and tests' timeout
// bounds a broken test, never a speed. JEST_WORKERS (a number or a percentage) overrides it; `-w`/`--runInBand`
// win over both.
const workers = process.env.JEST_WORKERS || String((os.availableParallelism?.() ?? os.cpus().length) + 1);

const projects = [
  // Unit tests beside the code.
  { ...shared, displayName: 'unit', roots: ['<rootDir>/common', '<rootDir>/gateway', '<rootDir>/subgraphs', '<rootDir>/clients', '<rootDir>/bench'] },
  // End-to-end tests: dist/ is brought up to date and a migrated, seeded database made once, before any file runs.
  {
    ...shared,
    displayName: 'e2e',
    roots: ['<rootDir>/test'],
    testEnvironment: '<rootDir>/test/support/e2e-environment.js',
    globalSetup: '<rootDir>/test/support/global-setup.js',
    globalTeardown: '<rootDir>/test/support/global-teardown.js',
  },
];

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: /%$/.test(workers) ? workers : Number(workers),
  // Bounds a broken test or hook (a platform start-up included), never a speed: parallel workers share the CPUs.
  testTimeout: 120000,
  // TEST_PROJECT=unit|e2e runs one of them (`npm run test:unit`, `npm run test:e2e`); jest's own
  // --selectProjects would swallow the file patterns passed after it.
  projects: projects.filter((p) => !process.env.TEST_PROJECT || p.displayName === process.env.TEST_PROJECT),
};
