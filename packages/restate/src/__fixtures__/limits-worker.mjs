// A worker for limit-errors.test.ts: the agent session object with small limits, so a test
// reaches each of them with prompts of tens of kilobytes; the model answers "ok" at once.
//   node limits-worker.mjs   → prints "listening <port>"
import http2 from 'node:http2';
import { createScriptedProvider } from '@agent/core/testing';
import * as restate from '@restatedev/restate-sdk';
import { agentSession } from '../../dist/index.js';

const session = agentSession({
  agent: () => ({
    provider: {
      id: 'scripted',
      stream: (request, options) => createScriptedProvider([{ text: 'ok' }]).stream(request, options),
    },
    model: 'scripted',
    tools: [],
  }),
  maxStepBytes: 64 * 1024,
  maxSessionBytes: 150 * 1024,
  maxStateBytes: 160 * 1024,
});

const server = http2.createServer(restate.endpoint().bind(session).http2Handler());
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
