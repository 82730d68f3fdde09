// A tool's `details` are free metadata: a BigInt, a cycle, a getter that throws, nesting JSON
// cannot write. Before, the journal's write of such a result failed, and a failed journal write
// ends the run ("Do not know how to serialize a BigInt"). Now the run goes on, the file holds what
// can be replayed, and a later process replays the run without running the tool again. Real
// files, the real loop.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent.js';
import type { Provider } from '../provider.js';
import { createScriptedProvider } from '../testing/scripted-provider.js';
import { resultText, toolResults } from '../testing/test-helpers.js';
import type { AnyAgentTool } from '../tool.js';
import { FileRunJournal } from './file-run-journal.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-journal-details-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cyclic(): unknown {
  const node: Record<string, unknown> = { name: 'root' };
  node.self = node;
  node.children = [{ parent: node }];
  return node;
}

function deep(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < levels; level++) value = { inner: value };
  return value;
}

/** Every kind of value JSON cannot write (or writes as something else), as a tool's details. */
const awkward: [string, () => unknown][] = [
  ['a BigInt', () => ({ bytes: 12n })],
  [
    'BigInts in an array and a nested object',
    () => ({ sizes: [1n, 2n ** 70n], inner: { n: -5n } }),
  ],
  ['a cycle', cyclic],
  [
    'a getter that throws',
    () => ({
      get broken() {
        throw new Error('getter blew up');
      },
    }),
  ],
  [
    'a toJSON that throws',
    () => ({
      toJSON: () => {
        throw new Error('toJSON blew up');
      },
    }),
  ],
  ['nesting 200,000 deep', () => deep(200_000)],
  [
    'a Map, a Set, a function and a symbol',
    () => ({
      map: new Map([['a', 1]]),
      set: new Set([1]),
      run: () => 1,
      tag: Symbol('x'),
    }),
  ],
  ['a BigInt and a cycle together', () => ({ big: 1n, loop: cyclic() })],
];

function toolWith(details: () => unknown, runs: { count: number }): AnyAgentTool {
  return {
    name: 'inspect',
    label: 'inspect',
    description: 'Returns a result with unusual details.',
    parameters: { type: 'object', properties: {} },
    execute: async () => {
      runs.count += 1;
      return { content: [{ type: 'text', text: 'inspected: 3 files' }], details: details() };
    },
  };
}

/** A provider that fails the test if it is called: a replay must not pay for a model call. */
const unreachableProvider: Provider = {
  id: 'unreachable',
  stream: () => {
    throw new Error('the model was called during a replay');
  },
};

/** A transform like the CLI's redaction: walks every value, so a cycle overflows its stack. */
function walkingTransform(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(walkingTransform);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, walkingTransform(item)]),
    );
  return typeof value === 'string' ? value.replaceAll('secret', '[redacted]') : value;
}

describe('a tool result whose details JSON cannot hold', () => {
  it.each(
    awkward.flatMap(([name, details]) => [
      { name, details, transform: undefined, with: 'no transform' },
      { name, details, transform: walkingTransform, with: 'a transform that walks values' },
    ]),
  )(
    '$name ($with): the run completes, and replays without running the tool',
    async ({ details, transform }) => {
      const path = join(dir, 'run.jsonl');
      const options = transform === undefined ? {} : { transform };
      const journal = await FileRunJournal.open(path, options);
      const runs = { count: 0 };
      const first = new Agent({
        provider: createScriptedProvider(
          [{ toolCalls: [{ name: 'inspect', arguments: {} }] }, { text: 'done' }],
          // Its record of requests deep-copies them, details and all (a provider never sends them).
          { recordRequests: false },
        ),
        model: 'test-model',
        tools: [toolWith(details, runs)],
        journal,
      });
      const live = await first.run('go').result;
      expect(live.error).toBeUndefined();
      expect(live.stopReason).toBe('completed');
      expect(runs.count).toBe(1);
      await journal.close();

      // Every line of the file is JSON: the journal is not damaged for the next process.
      const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();

      const reopened = await FileRunJournal.open(path, options);
      const second = new Agent({
        provider: unreachableProvider,
        model: 'test-model',
        tools: [toolWith(details, runs)],
        journal: reopened,
      });
      const replayed = await second.run(undefined, { runId: live.runId }).result;
      await reopened.close();
      expect(replayed.stopReason).toBe('completed');
      expect(runs.count).toBe(1);
      const [result] = toolResults(second.messages);
      expect(result === undefined ? '' : resultText(result)).toMatch(
        /^(inspected: 3 files|\[The result could not be journaled: .+\])$/,
      );
    },
  );

  it('keeps what JSON can say of a BigInt and a cycle (digits, "[circular]")', async () => {
    const path = join(dir, 'run.jsonl');
    const journal = await FileRunJournal.open(path);
    const runs = { count: 0 };
    const agent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'inspect', arguments: {} }] },
        { text: 'done' },
      ]),
      model: 'test-model',
      tools: [toolWith(() => ({ bytes: 2n ** 70n, loop: cyclic() }), runs)],
      journal,
    });
    await agent.run('go').result;
    await journal.close();
    const text = await readFile(path, 'utf8');
    expect(text).toContain('"bytes":"1180591620717411303424"');
    expect(text).toContain('"self":"[circular]"');
    expect(text).toContain('inspected: 3 files');
  });
});
