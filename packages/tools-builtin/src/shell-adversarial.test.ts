// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax, not templates
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, PermissionPolicy } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTools } from './default-tools.js';
import { analyzeShellCommand } from './shell-analysis.js';
import { corpus } from './shell-corpus.js';
import { makeTempDir } from './test-helpers.js';

// An adversarial corpus: lines that try to run a hidden `rm victim` (or another write) while
// looking like what the rules allow — `allow bash(echo *)`, `allow bash(git status*)`,
// `deny bash(rm *)`, `ask bash(git push*)`, no approver (a non-interactive run). Built from the
// classes found against this project (arithmetic over variable contents, ${x@P}, subscripts,
// parse errors falling back to a glob-matched line, coproc, case patterns, deep nesting, quotes in
// ${x:-…}, environment prefixes, git -c / aliases / global options, /bin/rm, xargs) and from
// published allow-list bypasses of other agents' CLIs (command substitution in allowed commands,
// process substitution, here-strings to shells, interpreter one-liners, wrapper commands).
// Every line runs through the real loop and the real bash tool: if the gate allowed a line that
// hides a command, bash would run it and `victim` would change.

// Lines the policy lets run without a question: their effect must be harmless.
const benign = ['echo hi', 'echo "hello world"', 'git status', 'git status --short', 'echo $HOME'];

const original = 'keep me\n';
let dir: string;

beforeAll(() => {
  dir = makeTempDir();
  fs.writeFileSync(path.join(dir, 'victim'), original);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function policy(): PermissionPolicy {
  return new PermissionPolicy({
    mode: 'default',
    allow: ['bash(echo *)', 'bash(git status*)'],
    deny: ['bash(rm *)'],
    ask: ['bash(git push*)'],
  });
}

async function runLine(line: string): Promise<{ kind: string | undefined; text: string }> {
  const tools = defaultTools({ cwd: dir, bash: { spillDir: path.join(dir, '.spill') } });
  const agent = new Agent({
    provider: createScriptedProvider([
      { toolCalls: [{ name: 'bash', arguments: { command: line } }] },
      { text: 'done' },
    ]),
    model: 'scripted',
    tools,
    permissionGate: policy().gate,
  });
  const result = await agent.run('go').result;
  const message = result.messages.find((entry) => entry.role === 'toolResult');
  if (message?.role !== 'toolResult') throw new Error('no tool result');
  const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { kind: message.errorKind, text };
}

describe('adversarial shell corpus', () => {
  it('has at least 150 lines', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
  });

  it('no line that hides a command is allowed without a question', () => {
    const allowed: string[] = [];
    const p = policy();
    for (const line of corpus) {
      const analysis = analyzeShellCommand(line);
      const outcome = p.evaluate({
        toolName: 'bash',
        tier: 'full-access',
        subjects: analysis.subjects,
        ...(analysis.opaque === undefined ? {} : { opaque: analysis.opaque }),
      });
      if (outcome.behavior === 'allow') allowed.push(line);
    }
    expect(allowed).toEqual([]);
  });

  it('through the real loop and bash tool, nothing denied or opaque runs: the victim is untouched', async () => {
    const harmed: string[] = [];
    for (const line of corpus) {
      const { kind } = await runLine(line);
      const victim = path.join(dir, 'victim');
      const intact = fs.existsSync(victim) && fs.readFileSync(victim, 'utf8') === original;
      if (!intact || kind !== 'denied') harmed.push(`${JSON.stringify(line)} → ${kind ?? 'ran'}`);
      if (!intact) fs.writeFileSync(victim, original);
    }
    expect(harmed).toEqual([]);
  });

  it('the lines the rules allow do run (the policy is not just denying everything)', async () => {
    for (const line of benign) {
      const { kind, text } = await runLine(line);
      expect(kind, `${line}: ${text}`).toBeUndefined();
      expect(text).toMatch(/Exit code: \d+/);
    }
    expect(fs.readFileSync(path.join(dir, 'victim'), 'utf8')).toBe(original);
  });
});
