// A child process for file-run-journal.test.ts: runs (or resumes) a journaled agent run whose
// tools count their side effects in a file, and SIGKILLs itself at a chosen point of the journal.
//   node journaled-run.mjs <journal> <effects> <killAt|-1> [runId]
// Prints one JSON line at the end: { runId, stopReason, providerCalls, results }.
import { appendFileSync, closeSync, fsyncSync, openSync } from 'node:fs';
import { Agent } from '../../../dist/index.js';
import { FileRunJournal } from '../../../dist/file-journal/index.js';
import { createScriptedProvider } from '../../../dist/testing/index.js';

const [journalPath, effectsPath, killAtText, runId] = process.argv.slice(2);
const killAt = Number(killAtText);
let events = 0;
/** Counts journal events (a step about to run, a step recorded); dies at the chosen one. */
function tick() {
  events++;
  if (events === killAt) process.kill(process.pid, 'SIGKILL');
}

function effect(line) {
  const fd = openSync(effectsPath, 'a');
  appendFileSync(fd, `${line}\n`);
  fsyncSync(fd);
  closeSync(fd);
}

const turns = [
  {
    toolCalls: [
      { id: 'a', name: 'charge', arguments: { id: 'a' } },
      { id: 'b', name: 'lookup', arguments: { id: 'b' } },
      { id: 'c', name: 'charge', arguments: { id: 'c' } },
    ],
  },
  { toolCalls: [{ id: 'd', name: 'charge', arguments: { id: 'd' } }] },
  { text: 'all charged' },
];
let providerCalls = 0;
// The step is picked from the conversation (how many answers the model gave so far), so a
// resumed process continues the script where the journal left it.
const provider = {
  id: 'scripted',
  stream(request, options) {
    providerCalls++;
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    return createScriptedProvider([turns[turn] ?? { text: 'past the script' }]).stream(
      request,
      options,
    );
  },
};

function countingTool(name, permission) {
  return {
    name,
    description: name,
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    policy: { permission },
    execute: async ({ id }) => {
      effect(`${name} ${id}`);
      // Time for a sibling to start and a kill to land while this call runs.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { content: [{ type: 'text', text: `${name} ${id} done` }] };
    },
  };
}

const file = await FileRunJournal.open(journalPath);
const journal = {
  async step(step, run) {
    const value = await file.step(step, async (attempt) => {
      tick();
      return run(attempt);
    });
    tick();
    return value;
  },
};
const agent = new Agent({
  provider,
  model: 'scripted',
  tools: [countingTool('charge', 'full-access'), countingTool('lookup', 'read-only')],
  journal,
});
const result = await agent.run(runId === undefined ? 'charge a, c and d' : undefined, {
  ...(runId === undefined ? {} : { runId }),
}).result;
await file.close();
process.stdout.write(
  `${JSON.stringify({
    runId: result.runId,
    stopReason: result.stopReason,
    providerCalls,
    events,
    results: agent.messages
      .filter((message) => message.role === 'toolResult')
      .map((message) => ({ id: message.toolCallId, errorKind: message.errorKind ?? null })),
  })}\n`,
);
