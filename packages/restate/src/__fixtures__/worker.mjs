// A worker process for the tests: serves the agent session object over HTTP/2 on a free port,
// with a scripted model and tools that record what they do in a log file (synced), so the test
// can count model calls and side effects across worker crashes.
//   SIDE_EFFECTS_LOG=<file> node worker.mjs   → prints "listening <port>"
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import http2 from 'node:http2';
import { createScriptedProvider } from '@agent/core/testing';
import * as restate from '@restatedev/restate-sdk';
import { agentSession } from '../../dist/index.js';

const log = process.env.SIDE_EFFECTS_LOG;
if (log === undefined) throw new Error('SIDE_EFFECTS_LOG is not set');
const maxPauseMs = Number(process.env.TOOL_PAUSE_MS ?? '30');
const minPauseMs = Number(process.env.TOOL_MIN_PAUSE_MS ?? '0');

/** Appends one line to the log, synced: it survives this process being killed right after. */
function record(line) {
  const fd = openSync(log, 'a');
  writeSync(fd, `${line}\n`);
  fsyncSync(fd);
  closeSync(fd);
}

/** The script of a session: a batch of three calls, then one call, then the answer. */
function turnFor(sessionId, turn) {
  if (sessionId.startsWith('approve-')) {
    return [
      { toolCalls: [{ id: 'r', name: 'refund', arguments: { id: 'r' } }] },
      { text: `refund handled for ${sessionId}` },
    ][turn];
  }
  return [
    {
      toolCalls: [
        { id: 'a', name: 'charge', arguments: { id: 'a' } },
        { id: 'b', name: 'lookup', arguments: { id: 'b' } },
        { id: 'c', name: 'charge', arguments: { id: 'c' } },
      ],
    },
    { toolCalls: [{ id: 'd', name: 'charge', arguments: { id: 'd' } }] },
    { text: `all charged for ${sessionId}` },
  ][turn];
}

function provider(sessionId) {
  return {
    id: 'scripted',
    stream(request, options) {
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      record(`${sessionId} model ${turn}`);
      return createScriptedProvider([turnFor(sessionId, turn) ?? { text: 'past the script' }]).stream(
        request,
        options,
      );
    },
  };
}

function countingTool(sessionId, name, permission) {
  return {
    name,
    description: name,
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    policy: { permission },
    execute: async ({ id }) => {
      record(`${sessionId} effect ${name} ${id}`);
      // A pause after the effect: a kill can land while the call runs.
      await new Promise((resolve) =>
        setTimeout(resolve, minPauseMs + Math.random() * (maxPauseMs - minPauseMs)),
      );
      return { content: [{ type: 'text', text: `${name} ${id} done` }] };
    },
  };
}

const session = agentSession({
  agent: ({ sessionId }) => ({
    provider: provider(sessionId),
    model: 'scripted',
    tools: [
      countingTool(sessionId, 'charge', 'full-access'),
      countingTool(sessionId, 'lookup', 'read-only'),
      countingTool(sessionId, 'refund', 'full-access'),
    ],
  }),
  needsApproval: (request) => request.toolName === 'refund',
  // Quick retries: a killed worker's invocations move to another one within a second.
  options: {
    retryPolicy: { initialInterval: 50, maxInterval: 1000, maxAttempts: 10_000 },
  },
});

const server = http2.createServer(restate.endpoint().bind(session).http2Handler());
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
