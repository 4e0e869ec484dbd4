/**
 * The fault suite: real processes, real PostgreSQL and Redis, failures made for real
 * (killed processes, stopped servers, hostile input). Slower than the main suite, so it has
 * its own command (`npm run test:faults`); each test prints its figure for docs/reliability.md.
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/faults'],
  testMatch: ['**/*.fault.test.ts'],
  testPathIgnorePatterns: [],
  testTimeout: 300000,
  maxWorkers: 1,
};
