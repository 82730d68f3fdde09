import { describe, expect, it } from 'vitest';
import type { PermissionRequest } from './agent-options.js';
import { type ApprovalDecision, createPermissionGate, PermissionPolicy } from './permissions.js';
import {
  agentUnder,
  bash,
  ping,
  readFile,
  requestFor,
  scriptedApprover,
} from './testing/permission-fixtures.js';
import type { ScriptedStep } from './testing/scripted-provider.js';
import { deferred, resultText, runToEnd, toolResults } from './testing/test-helpers.js';

describe('PermissionPolicy: the approver and grants', () => {
  it('an unattended denial (no one could be asked) is not "Denied by the user"', async () => {
    const { approver } = scriptedApprover([
      { answer: 'deny', unattended: true, reason: 'No one could be asked: -p cannot ask' },
      { answer: 'deny', unattended: true },
      { answer: 'never', unattended: true },
      { answer: 'once', unattended: true },
    ]);
    const policy = new PermissionPolicy({ approver });
    expect(await policy.check(requestFor(bash, ['rm x']))).toEqual({
      behavior: 'deny',
      decidedBy: 'no-approver',
      reason: 'No one could be asked: -p cannot ask',
    });
    expect(await policy.check(requestFor(bash, ['rm y']))).toEqual({
      behavior: 'deny',
      decidedBy: 'no-approver',
      reason: 'Tool "bash" needs approval, and no one could be asked',
    });
    // A "never" still becomes a grant; only the wording of who decided changes.
    expect(await policy.check(requestFor(bash, ['rm z']))).toMatchObject({
      behavior: 'deny',
      decidedBy: 'no-approver',
    });
    expect(policy.grants).toEqual([{ tool: 'bash', subject: 'rm z', decision: 'deny' }]);
    expect(await policy.check(requestFor(bash, ['ls']))).toEqual({
      behavior: 'allow',
      decidedBy: 'approver',
    });
  });

  it('remembers always/never as grants that survive a save and reload', async () => {
    const { approver, asked } = scriptedApprover([
      'always',
      'never',
      { answer: 'deny', reason: 'use git fetch' },
    ]);
    const policy = new PermissionPolicy({ approver });
    const calls = [
      requestFor(bash, ['git status', 'make']),
      requestFor(bash, ['curl evil']),
      requestFor(bash, ['git pull']),
    ];
    const first = [];
    for (const call of calls) first.push(await policy.check(call));
    expect(first.map((outcome) => outcome.behavior)).toEqual(['allow', 'deny', 'deny']);
    expect(first[2]).toMatchObject({ reason: 'Denied by the user: use git fetch' });
    expect(asked).toHaveLength(3);

    // Asked again: the grants answer, the plain `deny` asks anew.
    const again = await Promise.all(calls.map((call) => policy.check(call)));
    expect(again.map((outcome) => [outcome.behavior, outcome.decidedBy])).toEqual([
      ['allow', 'grant'],
      ['deny', 'grant'],
      ['deny', 'approver'],
    ]);
    expect(asked).toHaveLength(4);

    const saved = JSON.parse(JSON.stringify(policy.grants));
    expect(saved).toEqual([
      { tool: 'bash', subject: 'git status', decision: 'allow' },
      { tool: 'bash', subject: 'make', decision: 'allow' },
      { tool: 'bash', subject: 'curl evil', decision: 'deny' },
    ]);
    const reloaded = new PermissionPolicy({ grants: saved });
    expect(reloaded.evaluate(calls[0] as PermissionRequest)).toEqual({
      behavior: 'allow',
      decidedBy: 'grant',
    });
    expect(reloaded.evaluate(calls[1] as PermissionRequest)).toMatchObject({
      behavior: 'deny',
      decidedBy: 'grant',
    });
    expect(reloaded.evaluate(calls[2] as PermissionRequest)).toEqual({ behavior: 'ask' });
    reloaded.clearGrants();
    expect(reloaded.grants).toEqual([]);
    expect(reloaded.evaluate(calls[0] as PermissionRequest)).toEqual({ behavior: 'ask' });
  });

  it('asks one question at a time, in call order, and queued calls re-check grants first', async () => {
    const questions: { subjects: string; answer: (decision: ApprovalDecision) => void }[] = [];
    const asked = [deferred(), deferred()];
    let open = 0;
    let maxOpen = 0;
    const policy = new PermissionPolicy({
      approver: async (request) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        const answer = deferred<ApprovalDecision>();
        questions.push({ subjects: request.subjects.join('|'), answer: answer.resolve });
        asked[questions.length - 1]?.resolve();
        const decision = await answer.promise;
        open--;
        return decision;
      },
    });
    const outcomes = Promise.all([
      policy.check(requestFor(bash, ['make'])),
      policy.check(requestFor(bash, ['make'])),
      policy.check(requestFor(bash, ['make test'])),
      policy.check(requestFor(bash, ['make'])),
    ]);
    await asked[0]?.promise;
    expect(questions.map((entry) => entry.subjects)).toEqual(['make']);
    questions[0]?.answer('always');
    // The next question is `make test`: the two queued `make` calls were answered by the grant.
    await asked[1]?.promise;
    expect(questions.map((entry) => entry.subjects)).toEqual(['make', 'make test']);
    questions[1]?.answer('once');
    expect((await outcomes).map((outcome) => outcome.decidedBy)).toEqual([
      'approver',
      'grant',
      'approver',
      'grant',
    ]);
    expect(questions).toHaveLength(2);
    expect(maxOpen).toBe(1);
  });

  it('denies with the message when the approver throws or answers nonsense, and keeps going', async () => {
    let calls = 0;
    const policy = new PermissionPolicy({
      approver: () => {
        calls++;
        if (calls === 1) throw new Error('terminal closed');
        if (calls === 2) return 'sure' as ApprovalDecision;
        return 'once';
      },
    });
    expect(await policy.check(requestFor(bash, ['ls']))).toEqual({
      behavior: 'deny',
      decidedBy: 'approver',
      reason: 'The approver failed: terminal closed',
    });
    expect(await policy.check(requestFor(bash, ['ls']))).toMatchObject({
      behavior: 'deny',
      reason: 'The approver gave no valid answer ("sure")',
    });
    expect(await policy.check(requestFor(bash, ['ls']))).toMatchObject({ behavior: 'allow' });
    expect(policy.grants).toEqual([]);
  });

  it('denies cleanly when the signal aborts while waiting, without asking queued calls', async () => {
    const controller = new AbortController();
    const asked: string[] = [];
    const seenSignal = deferred<AbortSignal | undefined>();
    const policy = new PermissionPolicy({
      approver: (request, context) => {
        asked.push(request.subjects.join('|'));
        seenSignal.resolve(context.signal);
        // Answers only when the prompt is dismissed; the answer comes too late to count.
        return new Promise<ApprovalDecision>((resolve) => {
          context.signal?.addEventListener('abort', () => resolve('always'), { once: true });
        });
      },
    });
    const waiting = policy.check(requestFor(bash, ['first']), { signal: controller.signal });
    const queued = policy.check(requestFor(bash, ['second']), { signal: controller.signal });
    expect(await seenSignal.promise).toBe(controller.signal);
    controller.abort();
    const cancelled = {
      behavior: 'deny',
      decidedBy: 'cancelled',
      reason: 'Cancelled while waiting for approval',
    };
    expect(await waiting).toEqual(cancelled);
    expect(await queued).toEqual(cancelled);
    expect(await policy.check(requestFor(bash, ['third']), { signal: controller.signal })).toEqual(
      cancelled,
    );
    expect(asked).toEqual(['first']);
    expect(policy.grants).toEqual([]);
  });
});

describe('PermissionPolicy in the agent loop', () => {
  it('createPermissionGate builds the same gate from options, validating them', async () => {
    const gate = createPermissionGate({ deny: ['ping'], mode: 'full-access' });
    expect(await gate(requestFor(ping, []))).toMatchObject({
      behavior: 'deny',
      reason: 'Denied by rule "ping"',
    });
    expect(await gate(requestFor(bash, ['ls']))).toMatchObject({ behavior: 'allow' });
    expect(() => createPermissionGate({ allow: ['bash(ls'] })).toThrow(
      'Invalid permission rule "bash(ls" in allow',
    );
  });

  it('sends the denial to the model as a denied result naming the rule', async () => {
    const policy = new PermissionPolicy({ mode: 'full-access', deny: ['bash(rm *)'] });
    const { agent, provider } = agentUnder(
      [
        {
          toolCalls: [
            { id: 'a', name: 'shell', arguments: { command: 'ls && rm -rf /' } },
            { id: 'b', name: 'bash', arguments: { command: 'ls' } },
          ],
        },
        { text: 'done' },
      ],
      [bash],
      policy,
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(
      results.map((result) => [result.toolName, result.errorKind, resultText(result)]),
    ).toEqual([
      ['bash', 'denied', 'Permission denied: Denied by rule "bash(rm *)" for "rm -rf /"'],
      ['bash', undefined, 'ran: ls'],
    ]);
    const sent = provider.requests[1]?.messages.filter((message) => message.role === 'toolResult');
    expect(sent?.map((message) => message.isError)).toEqual([true, false]);
  });

  it('answers a parallel batch of identical calls with one "always"', async () => {
    const { approver, asked } = scriptedApprover(['always']);
    const policy = new PermissionPolicy({ approver, mode: 'read-only' });
    const command = { command: 'npm test && git status' };
    const { agent } = agentUnder(
      [
        {
          toolCalls: [
            { id: 'a', name: 'bash', arguments: command },
            { id: 'b', name: 'read_file', arguments: { path: '/x' } },
            { id: 'c', name: 'shell', arguments: command },
            { id: 'd', name: 'bash', arguments: command },
          ],
        },
        { text: 'done' },
      ],
      [bash, readFile],
      policy,
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('completed');
    expect(toolResults(agent.messages).map(resultText)).toEqual([
      'ran: npm test && git status',
      'read /x',
      'ran: npm test && git status',
      'ran: npm test && git status',
    ]);
    expect(asked).toEqual(['bash:npm test|git status']);
  });

  it('aborting the run frees a call waiting for an approver that never answers', async () => {
    let askedSignal: AbortSignal | undefined;
    const asking = deferred<void>();
    const policy = new PermissionPolicy({
      approver: (_request, context) => {
        askedSignal = context.signal;
        asking.resolve();
        return new Promise<never>(() => {});
      },
    });
    const { agent } = agentUnder(
      [
        {
          toolCalls: [
            { id: 'a', name: 'ping', arguments: {} },
            { id: 'b', name: 'ping', arguments: {} },
          ],
        },
        { text: 'never reached' },
      ],
      [ping],
      policy,
    );
    const run = agent.run('go');
    await asking.promise;
    agent.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(askedSignal?.aborted).toBe(true);
    expect(toolResults(agent.messages).map((message) => message.errorKind)).toEqual([
      'cancelled',
      'cancelled',
    ]);
  });

  it('denies in the loop when there is no approver or it throws', async () => {
    const steps: ScriptedStep[] = [
      { toolCalls: [{ id: 'a', name: 'ping', arguments: {} }] },
      { text: 'done' },
    ];
    const noApprover = agentUnder(steps, [ping], new PermissionPolicy());
    await runToEnd(noApprover.agent, 'go');
    const throwing = agentUnder(
      steps,
      [ping],
      new PermissionPolicy({
        approver: () => {
          throw new Error('no tty');
        },
      }),
    );
    await runToEnd(throwing.agent, 'go');
    expect(
      [noApprover.agent, throwing.agent].map((agent) => {
        const result = toolResults(agent.messages)[0];
        return [result?.errorKind, resultText(result)];
      }),
    ).toEqual([
      ['denied', 'Permission denied: Tool "ping" needs approval; no approver configured'],
      ['denied', 'Permission denied: The approver failed: no tty'],
    ]);
  });
});
