// A worker process for the hostile-environment tests: each session id's prefix picks a script
// (one tool call, then an answer), and the tools record what they do in a synced log file.
//   SIDE_EFFECTS_LOG=<file> node hostile-worker.mjs   → prints "listening <port>"
// sleep-…   runs `sleep 600` as a child process (a long bash command); records its pid
// ask-…     the same, once a person approved it
// big-N-…   returns N characters
// many-K-N-… K calls in one turn, each returning N characters
// secret-…  returns the value of AGENT_TEST_API_KEY (a credential of the worker's environment)
// compact-… 8,000 characters a prompt in a 6,000-token window: compactions
// odd-…     a read-only tool whose details JSON cannot hold (a BigInt, a cycle)
// repeat-…  an idempotent tool that records the key it was given, then pauses PAUSE_MS
// anything else (plain-…) answers at once
import { spawn } from 'node:child_process';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import http2 from 'node:http2';
import { createScriptedProvider } from '@agent/core/testing';
import * as restate from '@restatedev/restate-sdk';
import { agentSession } from '../../dist/index.js';

const log = process.env.SIDE_EFFECTS_LOG;
if (log === undefined) throw new Error('SIDE_EFFECTS_LOG is not set');
const pauseMs = Number(process.env.PAUSE_MS ?? '0');

/** Appends one line to the log, synced: it survives this process being killed right after. */
function record(line) {
  const fd = openSync(log, 'a');
  writeSync(fd, `${line}\n`);
  fsyncSync(fd);
  closeSync(fd);
}

function callFor(sessionId) {
  if (sessionId.startsWith('ask-'))
    return { name: 'guarded_shell', arguments: { command: 'sleep 600' } };
  if (sessionId.startsWith('sleep-')) return { name: 'shell', arguments: { command: 'sleep 600' } };
  if (sessionId.startsWith('compact-')) return { name: 'big', arguments: { chars: 8000 } };
  if (sessionId.startsWith('big-'))
    return { name: 'big', arguments: { chars: Number(sessionId.split('-')[1]) } };
  if (sessionId.startsWith('secret-')) return { name: 'env', arguments: {} };
  if (sessionId.startsWith('odd-')) return { name: 'odd', arguments: {} };
  if (sessionId.startsWith('repeat-')) return { name: 'pay', arguments: { cents: 500 } };
  return undefined;
}

function provider(sessionId) {
  return {
    id: 'scripted',
    stream(request, options) {
      if (request.systemPrompt?.startsWith('You write the working memory')) {
        record(`${sessionId} summary`);
        return createScriptedProvider([{ text: `SUMMARY of ${sessionId}` }]).stream(request, options);
      }
      // Turns of this prompt: every prompt runs the same script.
      const lastPrompt = request.messages.findLastIndex(
        (message) => message.role === 'user' && typeof message.content === 'string',
      );
      const turn = request.messages
        .slice(lastPrompt)
        .filter((message) => message.role === 'assistant').length;
      record(`${sessionId} model ${turn}`);
      const call = callFor(sessionId);
      const many = /^many-(\d+)-(\d+)-/.exec(sessionId);
      const script =
        turn === 0 && many !== null
          ? {
              toolCalls: Array.from({ length: Number(many[1]) }, (_, index) => ({
                id: `call-${index}`,
                name: 'big',
                arguments: { chars: Number(many[2]) + index },
              })),
            }
          : turn === 0 && call !== undefined
            ? { toolCalls: [{ id: `call-${sessionId}`, ...call }] }
            : { text: `done ${sessionId}` };
      return createScriptedProvider([script]).stream(request, options);
    },
  };
}

const object = { type: 'object', properties: {}, additionalProperties: true };

function shell(sessionId, name) {
  return {
      name,
      description: 'runs a command',
      parameters: object,
      policy: { permission: 'full-access' },
      execute: (_args, context) =>
        new Promise((resolve) => {
          const child = spawn('sleep', ['600'], { stdio: 'ignore' });
          record(`${sessionId} started ${child.pid}`);
          const stop = () => child.kill('SIGKILL');
          context.signal.addEventListener('abort', stop, { once: true });
          child.on('exit', (code, signal) => {
            context.signal.removeEventListener('abort', stop);
            record(`${sessionId} exited ${child.pid} ${signal ?? code}`);
            resolve({ content: [{ type: 'text', text: `exit ${signal ?? code}` }] });
          });
        }),
  };
}

function tools(sessionId) {
  return [
    shell(sessionId, 'shell'),
    shell(sessionId, 'guarded_shell'),
    {
      name: 'big',
      description: 'a big result',
      parameters: object,
      policy: { permission: 'read-only' },
      execute: async ({ chars }) => {
        record(`${sessionId} effect big`);
        return { content: [{ type: 'text', text: 'x'.repeat(chars) }] };
      },
    },
    {
      name: 'env',
      description: 'reads the token',
      parameters: object,
      policy: { permission: 'read-only' },
      execute: async () => ({
        content: [{ type: 'text', text: `the token is ${process.env.AGENT_TEST_API_KEY}` }],
      }),
    },
    {
      name: 'odd',
      description: 'details JSON cannot hold',
      parameters: object,
      policy: { permission: 'read-only' },
      execute: async () => {
        record(`${sessionId} effect odd`);
        const circular = { big: 10n };
        circular.self = circular;
        return { content: [{ type: 'text', text: 'odd done' }], details: circular };
      },
    },
    {
      name: 'pay',
      description: 'pays, idempotently',
      parameters: object,
      policy: { permission: 'full-access', repeatable: true },
      execute: async (_args, context) => {
        record(`${sessionId} effect pay ${context.run?.runId}:${context.toolCallId}`);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        return { content: [{ type: 'text', text: 'paid' }] };
      },
    },
  ];
}

const session = agentSession({
  agent: ({ sessionId }) => ({
    provider: provider(sessionId),
    model: 'scripted',
    tools: tools(sessionId),
    // A small window: a few prompts of 8,000 characters each need a summary.
    ...(sessionId.startsWith('compact-')
      ? { compaction: { contextWindow: 6_000, keepRecentTokens: 1_000 } }
      : {}),
  }),
  needsApproval: (request) => request.toolName === 'guarded_shell',
  options: {
    retryPolicy: { initialInterval: 50, maxInterval: 1000, maxAttempts: 10_000 },
    // Short, so a question waiting for an answer suspends the invocation within the test.
    inactivityTimeout: Number(process.env.INACTIVITY_MS ?? 60_000),
  },
});

const server = http2.createServer(restate.endpoint().bind(session).http2Handler());
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
