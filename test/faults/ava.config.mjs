// Fault tests (scripts/test.sh runs them after the rest): they kill workers and
// restart the Temporal server, so one file at a time, nothing beside them.
export default {
  files: ['test/faults/*.test.ts'],
  extensions: ['ts'],
  nodeArguments: ['--import=tsx'],
  timeout: '180s',
  concurrency: 1,
  workerThreads: false,
};
