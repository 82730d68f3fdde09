// Loaded with `node --import` in front of the CLI by its tests: SIGUSR2 makes the process fail
// with an uncaught error (or, with AGENT_TEST_FAILURE=rejection, an unhandled rejection), so a
// test can fail the CLI at the moment it chooses.
process.on('SIGUSR2', () => {
  if (process.env.AGENT_TEST_FAILURE === 'rejection')
    void Promise.reject(new Error('injected unhandled rejection (test)'));
  else throw new Error('injected uncaught error (test)');
});
