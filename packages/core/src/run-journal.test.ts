import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentOptions, PermissionRequest } from './agent-options.js';
import { defineTool } from './define-tool.js';
import type { Message, ToolResultMessage } from './messages.js';
import type { Provider } from './provider.js';
import {
  interruptedCallMessage,
  isRepeatable,
  MemoryRunJournal,
  type RunJournal,
  runStepKey,
} from './run-journal.js';
import { sequential } from './strategy.js';
import { CrashableRunJournal } from './testing/crashable-journal.js';
import { createScriptedProvider, type ScriptedStep } from './testing/scripted-provider.js';
import { deferred, resultText, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool, ToolPolicy } from './tool.js';

/** Side effects per tool name, as a real tool would leave them (a charge, a file written). */
type Effects = Map<string, number>;

function countingTool(
  name: string,
  effects: Effects,
  options: { policy?: ToolPolicy; blockUntil?: Promise<void>; onStart?: () => void } = {},
): AnyAgentTool {
  return defineTool({
    name,
    description: `counts its calls (${name})`,
    input: z.object({ id: z.string() }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    execute: async ({ id }) => {
      effects.set(name, (effects.get(name) ?? 0) + 1);
      options.onStart?.();
      if (options.blockUntil !== undefined) await options.blockUntil;
      return `${name} did ${id}`;
    },
  });
}

/** A provider that fails the test if it is called: a replay must not pay for a model call. */
const unreachableProvider: Provider = {
  id: 'unreachable',
  stream: () => {
    throw new Error('the model was called during a replay');
  },
};

function agent(options: Partial<AgentOptions> & Pick<AgentOptions, 'provider'>): Agent {
  return new Agent({ model: 'test-model', ...options });
}

const batchTurn: ScriptedStep = {
  toolCalls: [
    { id: 'charge-1', name: 'charge', arguments: { id: 'a' } },
    { id: 'lookup-1', name: 'lookup', arguments: { id: 'b' } },
    { id: 'slow-1', name: 'slow_charge', arguments: { id: 'c' } },
  ],
};

describe('a journaled run replays without calling the model or the tools', () => {
  it('re-creates every message of a finished run', async () => {
    const effects: Effects = new Map();
    const journal = new MemoryRunJournal();
    const tools = [
      countingTool('charge', effects),
      countingTool('lookup', effects, { policy: { permission: 'read-only' } }),
      countingTool('slow_charge', effects),
    ];
    const first = agent({
      provider: createScriptedProvider([batchTurn, { text: 'all done' }]),
      tools,
      journal,
    });
    const live = await first.run('go').result;
    expect(live.stopReason).toBe('completed');
    expect(Object.fromEntries(effects)).toEqual({ charge: 1, lookup: 1, slow_charge: 1 });

    const replayEffects: Effects = new Map();
    const second = agent({
      provider: unreachableProvider,
      tools: [
        countingTool('charge', replayEffects),
        countingTool('lookup', replayEffects, { policy: { permission: 'read-only' } }),
        countingTool('slow_charge', replayEffects),
      ],
      journal,
    });
    const replayed = await second.run(undefined, { runId: live.runId }).result;
    expect(replayed.stopReason).toBe('completed');
    expect(replayed.runId).toBe(live.runId);
    expect(replayEffects.size).toBe(0);
    expect(withoutTimestamps(second.messages)).toEqual(withoutTimestamps(first.messages));
    expect(replayed.usage).toEqual(live.usage);
  });

  it('restores a structured-output submission without running the output tool again', async () => {
    const journal = new MemoryRunJournal();
    const output = z.object({ answer: z.number() });
    const first = agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'structured_output', arguments: { answer: 42 } }] },
      ]),
      output,
      journal,
    });
    const live = await first.run('answer').result;
    expect(live.output).toEqual({ answer: 42 });
    const replayed = await agent({ provider: unreachableProvider, output, journal }).run(
      undefined,
      {
        runId: live.runId,
      },
    ).result;
    expect(replayed.stopReason).toBe('completed');
    expect(replayed.output).toEqual({ answer: 42 });
  });

  it('replays a steered run: the same batches skipped, the same steering message taken in', async () => {
    const journal = new MemoryRunJournal();
    const effects: Effects = new Map();
    const started = deferred();
    const release = deferred();
    const steps: ScriptedStep[] = [
      {
        toolCalls: [
          { id: 'one', name: 'first', arguments: { id: '1' } },
          { id: 'two', name: 'second', arguments: { id: '2' } },
        ],
      },
      { text: 'noted' },
    ];
    const first = agent({
      provider: createScriptedProvider(steps),
      tools: [
        countingTool('first', effects, {
          onStart: () => started.resolve(),
          blockUntil: release.promise,
        }),
        countingTool('second', effects),
      ],
      toolExecution: sequential(),
      journal,
    });
    const run = first.run('go');
    await started.promise;
    first.steer('stop that');
    release.resolve();
    const live = await run.result;
    expect(effects.get('second')).toBeUndefined();

    const second = agent({
      provider: unreachableProvider,
      tools: [countingTool('first', new Map()), countingTool('second', new Map())],
      toolExecution: sequential(),
      journal,
    });
    await second.run(undefined, { runId: live.runId }).result;
    expect(withoutTimestamps(second.messages)).toEqual(withoutTimestamps(first.messages));
    expect(
      second.messages.some((message) => message.role === 'user' && message.content === 'stop that'),
    ).toBe(true);
  });
});

describe('a run resumed after its process died mid-batch', () => {
  async function crashMidBatch(slowPolicy: ToolPolicy | undefined) {
    const journal = new CrashableRunJournal();
    const effects: Effects = new Map();
    const slowStarted = deferred();
    const crashedAgent = agent({
      provider: createScriptedProvider([batchTurn, { text: 'unreachable' }]),
      tools: [
        countingTool('charge', effects),
        countingTool('lookup', effects, { policy: { permission: 'read-only' } }),
        countingTool('slow_charge', effects, {
          ...(slowPolicy === undefined ? {} : { policy: slowPolicy }),
          onStart: () => slowStarted.resolve(),
          blockUntil: new Promise(() => {}),
        }),
      ],
      journal,
    });
    const run = crashedAgent.run('charge three');
    await slowStarted.promise;
    // The process dies once the quick calls are recorded, with the slow one still running.
    await journal.recorded('tool-result/1/0/charge-1', 'tool-result/1/1/lookup-1');
    journal.crash();

    const resumedProvider = createScriptedProvider([{ text: 'resumed and done' }]);
    const resumed = agent({
      provider: resumedProvider,
      tools: [
        countingTool('charge', effects),
        countingTool('lookup', effects, { policy: { permission: 'read-only' } }),
        countingTool(
          'slow_charge',
          effects,
          slowPolicy === undefined ? {} : { policy: slowPolicy },
        ),
      ],
      journal: journal.inner,
    });
    const result = await resumed.run(undefined, { runId: run.runId }).result;
    return { effects, result, resumed, resumedProvider };
  }

  it('repeats no finished call, reports the running one as interrupted, and pays for no journaled model call', async () => {
    const { effects, result, resumed, resumedProvider } = await crashMidBatch(undefined);
    expect(result.stopReason).toBe('completed');
    expect(Object.fromEntries(effects)).toEqual({ charge: 1, lookup: 1, slow_charge: 1 });
    // One model call in the resumed process: the one after the batch, never the journaled first.
    expect(resumedProvider.calls).toBe(1);
    const results = toolResults(resumed.messages);
    expect(results.map((message) => message.toolCallId)).toEqual([
      'charge-1',
      'lookup-1',
      'slow-1',
    ]);
    const slow = results[2] as ToolResultMessage;
    expect(slow.isError).toBe(true);
    expect(slow.errorKind).toBe('interrupted');
    expect(resultText(slow)).toBe(interruptedCallMessage);
    // The model reads the interruption in the request that follows the batch.
    const request = resumedProvider.requests[0];
    const sent = request?.messages.find(
      (message) => message.role === 'toolResult' && message.toolCallId === 'slow-1',
    );
    expect(sent?.role === 'toolResult' && sent.errorKind).toBe('interrupted');
  });

  it.each([
    ['declares itself repeatable', { repeatable: true }],
    ['is read-only', { permission: 'read-only' as const }],
  ])('runs the interrupted call again when its tool %s', async (_, policy) => {
    const { effects, resumed } = await crashMidBatch(policy);
    expect(effects.get('slow_charge')).toBe(2);
    expect(effects.get('charge')).toBe(1);
    const slow = toolResults(resumed.messages)[2];
    expect(slow?.isError).toBe(false);
    expect(resultText(slow)).toBe('slow_charge did c');
  });

  it('still reports it when a read-only tool says it is not repeatable', async () => {
    const { effects, resumed } = await crashMidBatch({
      permission: 'read-only',
      repeatable: false,
    });
    expect(effects.get('slow_charge')).toBe(1);
    expect(toolResults(resumed.messages)[2]?.errorKind).toBe('interrupted');
  });
});

describe('approvals across a restart', () => {
  it('does not ask an answered question again, and asks again the one left open', async () => {
    const journal = new CrashableRunJournal();
    const asked: string[] = [];
    const effects: Effects = new Map();
    const secondAsked = deferred();
    const steps: ScriptedStep[] = [
      {
        toolCalls: [
          { id: 'p1', name: 'pay', arguments: { id: '1' } },
          { id: 'p2', name: 'pay', arguments: { id: '2' } },
        ],
      },
      { text: 'paid' },
    ];
    const first = agent({
      provider: createScriptedProvider(steps),
      tools: [countingTool('pay', effects)],
      journal,
      permissionGate: (request: PermissionRequest) => {
        asked.push(`first:${request.toolCallId}`);
        if (request.toolCallId === 'p1') return { behavior: 'allow' };
        secondAsked.resolve();
        return new Promise(() => {});
      },
    });
    const run = first.run('pay twice');
    await secondAsked.promise;
    journal.crash();

    const resumed = agent({
      provider: createScriptedProvider([{ text: 'paid' }]),
      tools: [countingTool('pay', effects)],
      journal: journal.inner,
      permissionGate: (request: PermissionRequest) => {
        asked.push(
          `resumed:${request.toolCallId}${request.approvedEarlier === true ? ':answered' : ''}`,
        );
        return { behavior: 'allow' };
      },
    });
    const result = await resumed.run(undefined, { runId: run.runId }).result;
    expect(result.stopReason).toBe('completed');
    // p1 is put to the gate of now (its rules may have tightened) as it is about to run, told it
    // was answered: a PermissionPolicy takes that answer instead of asking (journal-recheck.test.ts).
    expect(asked).toEqual(['first:p1', 'first:p2', 'resumed:p2', 'resumed:p1:answered']);
    // Neither call had started when the process died: both run, once.
    expect(effects.get('pay')).toBe(2);
  });

  it('keeps a denial: the denied call is not asked about or run on replay', async () => {
    const journal = new MemoryRunJournal();
    const effects: Effects = new Map();
    const first = agent({
      provider: createScriptedProvider([
        { toolCalls: [{ id: 'p1', name: 'pay', arguments: { id: '1' } }] },
        { text: 'ok' },
      ]),
      tools: [countingTool('pay', effects)],
      journal,
      permissionGate: () => ({ behavior: 'deny', reason: 'no money today' }),
    });
    const live = await first.run('pay').result;
    const second = agent({
      provider: unreachableProvider,
      tools: [countingTool('pay', effects)],
      journal,
      permissionGate: () => {
        throw new Error('asked again');
      },
    });
    await second.run(undefined, { runId: live.runId }).result;
    expect(effects.size).toBe(0);
    expect(toolResults(second.messages)[0]?.errorKind).toBe('denied');
  });
});

describe('the order in which a run asks its journal', () => {
  it('asks for the results of a parallel batch in call order, before any call waits for a lock', async () => {
    const journal = new CrashableRunJournal();
    const keyed = (name: string) =>
      defineTool({
        name,
        description: 'keyed',
        input: z.object({ id: z.string(), ms: z.number() }),
        policy: { resourceKey: () => 'one-file' },
        execute: async ({ id, ms }) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          return id;
        },
      });
    const calls = [
      { id: 'c0', name: 'edit', arguments: { id: '0', ms: 20 } },
      { id: 'c1', name: 'edit', arguments: { id: '1', ms: 0 } },
      { id: 'c2', name: 'other', arguments: { id: '2', ms: 5 } },
      { id: 'c3', name: 'edit', arguments: { id: '3', ms: 1 } },
    ];
    await agent({
      provider: createScriptedProvider([{ toolCalls: calls }, { text: 'done' }]),
      tools: [keyed('edit'), keyed('other')],
      journal,
    }).run('edit').result;
    expect(journal.asked.filter((key) => key.startsWith('tool-result'))).toEqual(
      calls.map((call, index) => `tool-result/1/${index}/${call.id}`),
    );
    expect(journal.asked[0]).toBe('run-input');
    expect(journal.asked.at(-1)).toBe('run-end');
  });
});

describe('calls a tool makes through ctx.callTool', () => {
  it('run inside their parent step: only the parent is journaled, and a replay runs neither', async () => {
    const journal = new CrashableRunJournal();
    const effects: Effects = new Map();
    const inner = countingTool('inner', effects);
    const script = defineTool({
      name: 'script',
      description: 'calls inner twice',
      input: z.object({}),
      execute: async (_, ctx) => {
        if (ctx.callTool === undefined) throw new Error('no callTool');
        await ctx.callTool(inner, { id: 'x' });
        await ctx.callTool(inner, { id: 'y' });
        return 'ran the script';
      },
    });
    const live = await agent({
      provider: createScriptedProvider([
        { toolCalls: [{ id: 's1', name: 'script', arguments: {} }] },
        { text: 'done' },
      ]),
      tools: [script],
      journal,
    }).run('go').result;
    expect(effects.get('inner')).toBe(2);
    expect(journal.asked.filter((key) => key.startsWith('tool-'))).toEqual(['tool-result/1/0/s1']);
    const replay = agent({
      provider: unreachableProvider,
      tools: [script],
      journal: journal.inner,
    });
    expect((await replay.run(undefined, { runId: live.runId }).result).stopReason).toBe(
      'completed',
    );
    expect(effects.get('inner')).toBe(2);
  });
});

describe('compaction in a journaled run', () => {
  it('replays the compactions made for a model call, without the summary calls', async () => {
    const note = (n: number) => `note ${n}\n${`line of note ${n} `.repeat(120)}`;
    const readNote = defineTool({
      name: 'read_note',
      description: 'Reads a note',
      input: z.object({ n: z.number() }),
      policy: { permission: 'read-only' },
      execute: async ({ n }) => note(n),
    });
    let worked = 0;
    const provider = createScriptedProvider(
      [
        (request) => {
          if (request.tools === undefined) return { text: 'Summary: read some notes.' };
          worked++;
          return worked <= 10
            ? { toolCalls: [{ id: `r${worked}`, name: 'read_note', arguments: { n: worked } }] }
            : { text: 'All read.' };
        },
      ],
      { whenExhausted: 'repeat-last' },
    );
    const journal = new MemoryRunJournal();
    const compaction = { contextWindow: 4_000, keepRecentTokens: 1_000 };
    const first = agent({ provider, tools: [readNote], compaction, journal });
    const live = await first.run('Read the notes.').result;
    expect(first.compactions.length).toBeGreaterThan(0);

    const replay = agent({ provider: unreachableProvider, tools: [readNote], compaction, journal });
    const replayed = await replay.run(undefined, { runId: live.runId }).result;
    expect(replayed.stopReason).toBe('completed');
    expect(replay.compactions).toEqual(first.compactions);
    expect(withoutTimestamps(replay.messages)).toEqual(withoutTimestamps(first.messages));
  });
});

describe('a journal that hands back a batch only when all of it is recorded', () => {
  it('still cancels the siblings of a failing abortsSiblingsOnError call at once', async () => {
    // Like an engine that awaits a batch's steps together: no result returns before all do.
    const inner = new MemoryRunJournal();
    let current: Promise<unknown>[] | undefined;
    const together: RunJournal = {
      step: (step, run) => {
        const value = inner.step(step, run);
        if (step.type !== 'tool-result') return value;
        // The steps asked for in one tick are one batch, handed back when all are recorded.
        current ??= [];
        const batch = current;
        batch.push(value);
        queueMicrotask(() => {
          if (current === batch) current = undefined;
        });
        return Promise.resolve()
          .then(() => Promise.all(batch))
          .then(() => value);
      },
    };
    const failing = defineTool({
      name: 'fail_fast',
      description: 'fails',
      input: z.object({}),
      policy: { abortsSiblingsOnError: true },
      execute: async () => {
        throw new Error('broken');
      },
    });
    const slow = defineTool({
      name: 'slow',
      description: 'waits for its signal',
      input: z.object({}),
      execute: (_, ctx) =>
        new Promise<string>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        }),
    });
    const subject = agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'f', name: 'fail_fast', arguments: {} },
            { id: 's', name: 'slow', arguments: {} },
          ],
        },
        { text: 'done' },
      ]),
      tools: [failing, slow],
      journal: together,
    });
    await subject.run('go').result;
    expect(resultText(toolResults(subject.messages)[1])).toContain("sibling 'fail_fast' failed");
  });
});

describe('a journal that cannot record', () => {
  it('ends the run with an error, and the call still gets its one result', async () => {
    const failing: RunJournal = {
      step: async (step, run) => {
        const value = await run({ interrupted: false });
        if (step.type === 'tool-result') throw new Error('disk full');
        return value;
      },
    };
    const effects: Effects = new Map();
    const subject = agent({
      provider: createScriptedProvider([
        { toolCalls: [{ id: 'c1', name: 'charge', arguments: { id: '1' } }] },
        { text: 'unreachable' },
      ]),
      tools: [countingTool('charge', effects)],
      journal: failing,
    });
    const result = await subject.run('charge').result;
    expect(result.stopReason).toBe('error');
    expect(result.error).toContain('disk full');
    const results = toolResults(subject.messages);
    expect(results).toHaveLength(1);
    expect(resultText(results[0])).toContain('could not record this call');
  });
});

describe('isRepeatable', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ permission: 'read-only' as const }, true],
    [{ permission: 'workspace-write' as const }, false],
    [{ permission: 'full-access' as const, repeatable: true }, true],
    [{ permission: 'read-only' as const, repeatable: false }, false],
  ])('policy %j → %s', (policy, expected) => {
    const tool = countingTool('t', new Map(), policy === undefined ? {} : { policy });
    expect(isRepeatable(tool)).toBe(expected);
  });
});

describe('runStepKey', () => {
  it('keeps apart two calls with one id in one message, and the same call in two turns', () => {
    const keys = [
      runStepKey({ type: 'tool-result', runId: 'r', turn: 1, index: 0, toolCallId: 'x' }),
      runStepKey({ type: 'tool-result', runId: 'r', turn: 1, index: 1, toolCallId: 'x' }),
      runStepKey({ type: 'tool-result', runId: 'r', turn: 2, index: 0, toolCallId: 'x' }),
      runStepKey({ type: 'tool-decision', runId: 'r', turn: 1, index: 0, toolCallId: 'x' }),
      runStepKey({ type: 'queued-messages', runId: 'r', turn: 1, point: 'after-tools' }),
      runStepKey({ type: 'queued-messages', runId: 'r', turn: 1, point: 'before-stop' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

function withoutTimestamps(messages: readonly Message[]): unknown[] {
  return messages.map((message) => {
    const { timestamp: _, ...rest } = message as Message & { timestamp?: number };
    return rest;
  });
}
