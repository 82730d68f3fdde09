// A run resumed from its journal runs no call on a verdict the session of now would not give.
// The journal keeps each call's permission verdict so an answered question is not asked twice;
// but the user who kills a run (or finds it crashed) may tighten the session before resuming —
// a deny rule, a disabled tool, plan mode, a narrower mode — and a call that runs live after the
// resume (one that had not started, or a repeatable one that was running) must meet those.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentOptions } from './agent-options.js';
import { defineTool } from './define-tool.js';
import type { PermissionMode } from './permission-types.js';
import { PermissionPolicy } from './permissions.js';
import type { MemoryRunJournal } from './run-journal.js';
import { CrashableRunJournal } from './testing/crashable-journal.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { deferred, resultText, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool, ToolPolicy } from './tool.js';

type Effects = string[];

function tool(
  name: string,
  effects: Effects,
  options: { policy?: ToolPolicy; onStart?: () => void; block?: boolean } = {},
): AnyAgentTool {
  return defineTool({
    name,
    description: `records its calls (${name})`,
    input: z.object({ id: z.string() }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    execute: async ({ id }) => {
      effects.push(`${name}:${id}`);
      options.onStart?.();
      if (options.block === true) await new Promise(() => {});
      return `${name} did ${id}`;
    },
  });
}

interface Session {
  mode?: PermissionMode;
  deny?: string[];
  disabledTools?: string[];
  /** Answers every question; records that it was asked. */
  answer?: 'once' | 'deny';
  /** A beforeToolExecution hook's verdict on pay (a user's guard hook). */
  payHook?: { action: 'skip'; reason: string } | { action: 'replace'; args: { id: string } };
}

/**
 * A first process runs one batch of [slow (blocks), pay] one call at a time and dies while slow
 * runs — pay's "allow" is in the journal, pay never started. A second process, with `resumed`'s
 * session, resumes the run.
 */
async function crashThenResume(
  first: Session,
  resumed: Session,
  options: {
    slowPolicy?: ToolPolicy;
    payPolicy?: ToolPolicy;
    /** Changes what the crash left behind before the resume (a hand-edited journal). */
    edit?: (journal: MemoryRunJournal, runId: string) => void;
  } = {},
) {
  const journal = new CrashableRunJournal();
  const effects: Effects = [];
  const asked: string[] = [];
  const slowStarted = deferred();
  const tools = (block: boolean) => [
    tool('slow', effects, {
      // Exclusive: the batch runs one call at a time, every verdict taken before the first runs.
      policy: options.slowPolicy ?? { exclusive: true },
      onStart: () => slowStarted.resolve(),
      block,
    }),
    tool('pay', effects, options.payPolicy === undefined ? {} : { policy: options.payPolicy }),
  ];
  const policyOf = (session: Session, who: string) =>
    new PermissionPolicy({
      mode: session.mode ?? 'default',
      deny: session.deny ?? [],
      disabledTools: session.disabledTools ?? [],
      ...(session.answer === undefined
        ? {}
        : {
            approver: (request) => {
              asked.push(`${who}:${request.toolName}`);
              return session.answer ?? 'deny';
            },
          }),
    });
  const common = (session: Session, who: string): Partial<AgentOptions> => ({
    model: 'test-model',
    permissionGate: policyOf(session, who).gate,
    ...(session.payHook === undefined
      ? {}
      : {
          hooks: {
            beforeToolExecution: (call) => (call.toolName === 'pay' ? session.payHook : undefined),
          },
        }),
  });
  const crashed = new Agent({
    ...common(first, 'first'),
    model: 'test-model',
    provider: createScriptedProvider([
      {
        toolCalls: [
          { id: 's1', name: 'slow', arguments: { id: 'a' } },
          { id: 'p1', name: 'pay', arguments: { id: 'b' } },
        ],
      },
      { text: 'the first process never gets here' },
    ]),
    tools: tools(true),
    journal,
  });
  const run = crashed.run('go');
  await slowStarted.promise;
  journal.crash();
  options.edit?.(journal.inner, run.runId);
  const effectsBefore = [...effects];

  const again = new Agent({
    ...common(resumed, 'resumed'),
    model: 'test-model',
    provider: createScriptedProvider([{ text: 'resumed' }]),
    tools: tools(false),
    journal: journal.inner,
  });
  const result = await again.run(undefined, { runId: run.runId }).result;
  expect(result.stopReason).toBe('completed');
  const results = toolResults(again.messages);
  return {
    effectsBefore,
    ranOnResume: effects.slice(effectsBefore.length),
    asked,
    pay: results.find((message) => message.toolCallId === 'p1'),
    slow: results.find((message) => message.toolCallId === 's1'),
  };
}

describe('a journaled allow meets the session it is resumed in', () => {
  it.each<[string, Session]>([
    ['a deny rule on the tool', { mode: 'full-access', deny: ['pay'] }],
    ['the tool disabled', { mode: 'full-access', disabledTools: ['pay'] }],
    ['plan mode', { mode: 'plan' }],
    ['a narrower mode with nobody to ask', { mode: 'read-only' }],
    ['a narrower mode whose question is answered no', { mode: 'default', answer: 'deny' }],
  ])('a call that had not started is refused under %s', async (_, session) => {
    const outcome = await crashThenResume({ mode: 'full-access' }, session);
    expect(outcome.effectsBefore).toEqual(['slow:a']);
    expect(outcome.ranOnResume).toEqual([]);
    expect(outcome.pay?.isError).toBe(true);
    expect(outcome.pay?.errorKind).toBe('denied');
    // The call that was running is still reported as interrupted, not run again.
    expect(outcome.slow?.errorKind).toBe('interrupted');
  });

  it('a repeatable call that was running is refused under a deny rule added since', async () => {
    const outcome = await crashThenResume(
      { mode: 'full-access' },
      { mode: 'full-access', deny: ['slow'] },
      { slowPolicy: { permission: 'read-only' } },
    );
    expect(outcome.ranOnResume).not.toContain('slow:a');
    expect(outcome.slow?.errorKind).toBe('denied');
  });

  it('the same session runs them, and a mode-allowed call is not asked about', async () => {
    const outcome = await crashThenResume(
      { mode: 'full-access' },
      { mode: 'full-access', answer: 'deny' },
    );
    expect(outcome.ranOnResume).toEqual(['pay:b']);
    expect(resultText(outcome.pay)).toBe('pay did b');
    expect(outcome.asked).toEqual([]);
  });

  it('an answered question is not asked again, and still yields to a deny rule added since', async () => {
    const kept = await crashThenResume({ answer: 'once' }, { answer: 'deny' });
    // Both calls were answered in the first process; only pay runs on resume, unasked.
    expect(kept.asked).toEqual(['first:slow', 'first:pay']);
    expect(kept.ranOnResume).toEqual(['pay:b']);

    const tightened = await crashThenResume({ answer: 'once' }, { answer: 'once', deny: ['pay'] });
    expect(tightened.ranOnResume).toEqual([]);
    expect(tightened.pay?.errorKind).toBe('denied');
  });

  it('an allow the mode gave is asked about when the mode has narrowed', async () => {
    const outcome = await crashThenResume({ mode: 'full-access' }, { answer: 'once' });
    expect(outcome.asked).toEqual(['resumed:pay']);
    expect(outcome.ranOnResume).toEqual(['pay:b']);
  });

  it('a guard hook added since skips it; one that now rewrites it runs what the gate allows', async () => {
    const skipped = await crashThenResume(
      { mode: 'full-access' },
      { mode: 'full-access', payHook: { action: 'skip', reason: 'no more payments' } },
    );
    expect(skipped.ranOnResume).toEqual([]);
    expect(resultText(skipped.pay)).toContain('no more payments');

    const rewritten = await crashThenResume(
      { mode: 'full-access' },
      { mode: 'full-access', payHook: { action: 'replace', args: { id: 'refund' } } },
    );
    expect(rewritten.ranOnResume).toEqual(['pay:refund']);
  });
});

/** Rewrites the first turn's recorded `pay` call (p1) as `change` says. */
function editPayCall(change: (call: { name: string; arguments: string }) => void) {
  return (journal: MemoryRunJournal, runId: string) => {
    const entry = journal.entries(runId).get('model-response/1');
    const message = (entry?.value as { message?: { content?: unknown[] } } | undefined)?.message;
    const call = message?.content?.find((block) => (block as { id?: unknown }).id === 'p1') as
      | { name: string; arguments: string }
      | undefined;
    if (call === undefined) throw new Error('no recorded call p1');
    change(call);
  };
}

/** Drops the fingerprint of pay's recorded answer (a journal written before it was kept). */
function withoutFingerprint(journal: MemoryRunJournal, runId: string) {
  const entry = journal.entries(runId).get('tool-decision/1/1/p1');
  const value = entry?.value as { answeredCall?: string } | undefined;
  if (value?.answeredCall === undefined) throw new Error('no fingerprint recorded');
  delete value.answeredCall;
}

describe('an answer stands for the call it was given for, not only its id', () => {
  it.each<[string, (journal: MemoryRunJournal, runId: string) => void]>([
    [
      'other arguments under the same id',
      editPayCall((call) => {
        call.arguments = '{"id":"everything"}';
      }),
    ],
    [
      'the same arguments written otherwise',
      editPayCall((call) => {
        call.arguments = '{ "id": "b" }';
      }),
    ],
    [
      'another tool under the same id',
      editPayCall((call) => {
        call.name = 'slow';
      }),
    ],
    ['a recorded answer without its fingerprint', withoutFingerprint],
  ])('%s: asked again (before: taken as answered)', async (_, edit) => {
    const outcome = await crashThenResume({ answer: 'once' }, { answer: 'deny' }, { edit });
    expect(outcome.asked).toEqual(['first:slow', 'first:pay', expect.stringMatching(/^resumed:/)]);
    expect(outcome.ranOnResume).toEqual([]);
    expect(outcome.pay?.errorKind).toBe('denied');
  });

  it('the very call it answered runs unasked', async () => {
    const outcome = await crashThenResume(
      { answer: 'once' },
      { answer: 'deny' },
      { edit: editPayCall(() => {}) },
    );
    expect(outcome.asked).toEqual(['first:slow', 'first:pay']);
    expect(outcome.ranOnResume).toEqual(['pay:b']);
  });
});
