/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testMatch: ['**/*.test.ts'],
  roots: ['<rootDir>/common', '<rootDir>/gateway', '<rootDir>/subgraphs', '<rootDir>/test'],
  setupFiles: ['reflect-metadata'],
  testTimeout: 60000,
};
