/** Each test file gets its own database (cloned from a migrated template) and Redis prefix, so files run in parallel. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The fault suite runs on its own (npm run test:faults).
  testPathIgnorePatterns: ['/node_modules/', '\\.fault\\.test\\.ts$'],
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // jose, oidc-provider, openapi-fetch and cookie 2 (light-my-request's) ship ES modules only; jest's CommonJS
  // runtime needs them transformed. light-my-request is listed so that the cookie nested under it is reached.
  transformIgnorePatterns: ['/node_modules/(?!(jose|oidc-provider|openapi-fetch|light-my-request|cookie)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Generous: CI machines are shared, and the polling helpers' own deadlines should fire first with a clearer message.
  testTimeout: 60000,
  maxWorkers: 2,
};
