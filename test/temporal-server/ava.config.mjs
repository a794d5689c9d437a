// The Temporal server flavour's suite (scripts/test.sh runs it last, once the
// test stack's Temporal is the server on PostgreSQL): it restarts Temporal, so
// one test at a time, nothing beside it.
export default {
  files: ['test/temporal-server/*.test.ts'],
  extensions: ['ts'],
  nodeArguments: ['--import=tsx'],
  timeout: '180s',
  concurrency: 1,
  workerThreads: false,
};
