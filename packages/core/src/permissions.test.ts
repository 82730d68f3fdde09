import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import { AgentError } from './errors.js';
import { matchesSubjectPattern, type PermissionMode, PermissionPolicy } from './permissions.js';
import {
  bash,
  createIssue,
  ping,
  readFile,
  requestFor,
  scriptedApprover,
  writeFile,
} from './testing/permission-fixtures.js';

describe('PermissionPolicy: rule language', () => {
  it.each([
    ['bash(', 'closed by ")"'],
    ['bash(git *', 'closed by ")"'],
    ['bash(git *) now', 'closed by ")"'],
    ['(git *)', 'names no tool pattern'],
    ['', 'names no tool pattern'],
    ['bash()', 'subject pattern is empty'],
    ['!bash', 'is not a tool pattern'],
    ['ba sh', 'is not a tool pattern'],
    ['b*sh', 'is not a tool pattern'],
    ['@', 'is not a tool pattern'],
    ['@mcp:github/', 'is not a tool pattern'],
  ])('rejects %j at construction, naming the rule', (rule, why) => {
    for (const kind of ['allow', 'ask', 'deny'] as const) {
      const build = () => new PermissionPolicy({ [kind]: ['read_file', rule] });
      expect(build).toThrow(AgentError);
      expect(build).toThrow(`Invalid permission rule "${rule}" in ${kind}: `);
      expect(build).toThrow(why);
    }
  });

  it('accepts every documented rule form', () => {
    const policy = new PermissionPolicy({
      deny: [
        'bash',
        '*',
        'read_*',
        'bash(git *)',
        'bash(echo (hi))',
        'read_file(/home/me/project/*)',
        '@builtin',
        '@builtin/read_*',
        '@mcp:github(github/create_*)',
        '@openapi:petstore(DELETE *)',
      ],
    });
    expect(policy.mode).toBe('default');
  });

  it('rejects bad modes, disabledTools patterns and grants', () => {
    expect(() => new PermissionPolicy({ mode: 'yolo' as PermissionMode })).toThrow(
      'Invalid permission mode "yolo"',
    );
    expect(() => new PermissionPolicy({ disabledTools: ['bash(rm *)'] })).toThrow(
      'Invalid tool pattern "bash(rm *)" in disabledTools',
    );
    const grants = JSON.parse('[{"tool":"bash","decision":"maybe"}]');
    expect(() => new PermissionPolicy({ grants })).toThrow(
      'Invalid permission grant at index 0: "decision" must be "allow" or "deny"',
    );
    expect(() => new PermissionPolicy().setMode('all' as PermissionMode)).toThrow(
      'Invalid permission mode',
    );
  });

  it('matches subjects with an anchored glob where only * is special', () => {
    expect(matchesSubjectPattern('git status', 'git *')).toBe(true);
    // A pattern ending in ` *` also covers the bare command: `rm *` matches `rm`.
    expect(matchesSubjectPattern('git', 'git *')).toBe(true);
    expect(matchesSubjectPattern('gitk', 'git *')).toBe(false);
    expect(matchesSubjectPattern('sudo git push', 'git *')).toBe(false);
    expect(matchesSubjectPattern('/home/me/project/a/b.ts', '/home/me/project/*')).toBe(true);
    expect(matchesSubjectPattern('/home/me/projectx/a', '/home/me/project/*')).toBe(false);
    expect(matchesSubjectPattern('a?c', 'a?c')).toBe(true);
    expect(matchesSubjectPattern('abc', 'a?c')).toBe(false);
    expect(matchesSubjectPattern('a.c', 'a[.]c')).toBe(false);
    expect(matchesSubjectPattern('abcabc', '*abc')).toBe(true);
    expect(matchesSubjectPattern('ab', 'a*b*')).toBe(true);
    expect(matchesSubjectPattern('aXbYb', 'a*b*b')).toBe(true);
    expect(matchesSubjectPattern('ab', 'a*b*b')).toBe(false);
    expect(matchesSubjectPattern('aba', 'ab*ba')).toBe(false);
  });

  it('property: a string with * inserted anywhere matches it; a literal matches only itself', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '/', ' ', '.', '(', 'é') });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 5 }), (subject, cuts) => {
        let pattern = subject;
        for (const cut of cuts) {
          const at = cut % (pattern.length + 1);
          pattern = `${pattern.slice(0, at)}*${pattern.slice(at)}`;
        }
        expect(matchesSubjectPattern(subject, pattern)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(text, text, (subject, literal) => {
        expect(matchesSubjectPattern(subject, literal)).toBe(subject === literal);
      }),
    );
  });

  it('property: agrees with an equivalent regular expression', () => {
    const small = fc.string({ unit: fc.constantFrom('a', 'b', '*'), maxLength: 8 });
    const subjectText = fc.string({ unit: fc.constantFrom('a', 'b', '*'), maxLength: 10 });
    fc.assert(
      fc.property(small, subjectText, (pattern, subject) => {
        const source = pattern
          .split('*')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[\\s\\S]*');
        expect(matchesSubjectPattern(subject, pattern)).toBe(
          new RegExp(`^${source}$`).test(subject),
        );
      }),
    );
  });
});

describe('PermissionPolicy: the order of steps', () => {
  it('lets each step decide, earlier steps winning', async () => {
    const { approver, asked } = scriptedApprover(['once']);
    const everything = {
      disabledTools: ['@mcp:github'],
      deny: ['bash(rm *)', 'github__create_issue'],
      ask: ['bash(git push*)', 'bash(rm -rf *)'],
      allow: ['bash(git *)', 'bash(rm *)'],
      mode: 'read-only' as const,
      grants: [
        { tool: 'bash', subject: 'git push', decision: 'deny' as const },
        { tool: 'bash', subject: 'make', decision: 'allow' as const },
        { tool: 'bash', subject: 'git status', decision: 'deny' as const },
      ],
      approver,
    };
    const policy = new PermissionPolicy(everything);

    // 1. Disabled beats the deny rule naming the same tool.
    expect(await policy.check(requestFor(createIssue, ['github/create_issue']))).toMatchObject({
      behavior: 'deny',
      decidedBy: 'disabled',
      reason: 'Tool "github__create_issue" is disabled',
    });
    // 2. A deny rule beats the ask rule and the allow rule that also match.
    expect(await policy.check(requestFor(bash, ['rm -rf /']))).toMatchObject({
      behavior: 'deny',
      decidedBy: 'deny-rule',
      reason: 'Denied by rule "bash(rm *)" for "rm -rf /"',
    });
    // 3. An ask rule beats the allow rule `bash(git *)`; the `never` grant then answers it.
    expect(await policy.check(requestFor(bash, ['git push']))).toMatchObject({
      behavior: 'deny',
      decidedBy: 'grant',
      reason: 'Denied: "never" earlier this session for "git push"',
    });
    // 2. A `never` grant beats the allow rule `bash(git *)` that covers `git status`.
    expect(await policy.check(requestFor(bash, ['git status']))).toMatchObject({
      behavior: 'deny',
      decidedBy: 'grant',
      reason: 'Denied: "never" earlier this session for "git status"',
    });
    // 5. The allow rule covers the rest of `git *`.
    expect(await policy.check(requestFor(bash, ['git log']))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'allow-rule',
      rules: ['bash(git *)'],
    });
    // 4. The mode covers a read-only tool.
    expect(await policy.check(requestFor(readFile, ['/etc/hosts']))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'mode',
    });
    // 5. An `always` grant allows without a question.
    expect(await policy.check(requestFor(bash, ['make']))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'grant',
    });
    expect(asked).toEqual([]);
    // 6. The approver decides the rest.
    expect(await policy.check(requestFor(bash, ['npm test']))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'approver',
    });
    expect(asked).toEqual(['bash:npm test']);
    // 7. Without an approver the same call is denied.
    const { approver: _unused, ...withoutApprover } = everything;
    expect(
      await new PermissionPolicy(withoutApprover).check(requestFor(bash, ['npm test'])),
    ).toEqual({
      behavior: 'deny',
      decidedBy: 'no-approver',
      reason: 'Tool "bash" needs approval; no approver configured',
    });
  });

  it('evaluate() reports the question without asking', () => {
    const policy = new PermissionPolicy({ ask: ['bash(git push*)'], mode: 'full-access' });
    expect(policy.evaluate(requestFor(bash, ['git push --force']))).toEqual({
      behavior: 'ask',
      askRule: 'bash(git push*)',
    });
    expect(policy.evaluate({ toolName: 'bash', tier: 'full-access', subjects: ['ls'] })).toEqual({
      behavior: 'allow',
      decidedBy: 'mode',
    });
  });

  it('forces a question on an ask rule even in full-access mode, with the rule in the context', async () => {
    const { approver, asked, contexts } = scriptedApprover(['always', 'once', { answer: 'deny' }]);
    const policy = new PermissionPolicy({
      mode: 'full-access',
      allow: ['bash'],
      ask: ['bash(git push*)'],
      approver,
    });
    expect(await policy.check(requestFor(bash, ['ls']))).toMatchObject({ decidedBy: 'mode' });
    expect(await policy.check(requestFor(bash, ['git push']))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'approver',
    });
    expect(contexts[0]?.askRule).toBe('bash(git push*)');
    // An ask rule asks every time: it comes before grants (DESIGN §4), so `always` does not end it.
    expect(await policy.check(requestFor(bash, ['git push']))).toMatchObject({
      decidedBy: 'approver',
    });
    expect(await policy.check(requestFor(bash, ['ls', 'git push origin']))).toEqual({
      behavior: 'deny',
      decidedBy: 'approver',
      reason: 'Denied by the user',
    });
    expect(asked).toEqual(['bash:git push', 'bash:git push', 'bash:ls|git push origin']);
  });

  it('auto-allows by tier according to the mode, and setMode changes it at runtime', async () => {
    const tools = [readFile, writeFile, bash];
    // Plan mode denies instead of asking: see plan-mode.test.ts.
    const expected: Record<Exclude<PermissionMode, 'plan'>, string[]> = {
      default: [],
      'read-only': ['read_file'],
      'workspace-write': ['read_file', 'write_file'],
      'full-access': ['read_file', 'write_file', 'bash'],
    };
    const policy = new PermissionPolicy();
    for (const mode of Object.keys(expected) as Exclude<PermissionMode, 'plan'>[]) {
      policy.setMode(mode);
      const allowed: string[] = [];
      for (const tool of tools) {
        const outcome = await policy.check(requestFor(tool, ['x']));
        if (outcome.behavior === 'allow') allowed.push(tool.name);
        else
          expect(outcome.reason).toBe(`Tool "${tool.name}" needs approval; no approver configured`);
      }
      expect(allowed, mode).toEqual(expected[mode]);
    }
  });
});

describe('PermissionPolicy: a tool whose subject is code (subjectsAreCode)', () => {
  const cell = defineTool({
    name: 'cell',
    description: 'runs code',
    input: z.object({ code: z.string() }),
    policy: { permission: 'full-access', subjectsAreCode: true },
    permissionSubjects: ({ code }) => [code],
    execute: async () => 'ran',
  });
  const decide = (rules: { allow?: string[]; deny?: string[] }, code: string) =>
    new PermissionPolicy({ mode: 'workspace-write', ...rules }).evaluate(requestFor(cell, [code]))
      .behavior;

  it('an allow rule covers only the code written in it: `*` inside is a character', () => {
    // As globs, each of these allowed the code after it.
    expect(decide({ allow: ['cell(6 *)'] }, '6 * 7; rm()')).toBe('ask');
    expect(decide({ allow: ['cell(len(*)'] }, 'len(x); rm()')).toBe('ask');
    expect(decide({ allow: ['cell(*7)'] }, 'rm(); 7')).toBe('ask');
    expect(decide({ allow: ['cell(6 *)'] }, '6 * 7')).toBe('ask');
    expect(decide({ allow: ['cell(6 * 7)'] }, '6 * 7')).toBe('allow');
    // The bare name and `cell(*)` mean every call.
    expect(decide({ allow: ['cell'] }, 'rm()')).toBe('allow');
    expect(decide({ allow: ['cell(*)'] }, 'rm()')).toBe('allow');
    // Deny rules still match as patterns: the safe direction.
    expect(decide({ allow: ['cell'], deny: ['cell(*rm*)'] }, 'x; rm()')).toBe('deny');
  });

  it('a tool without it keeps glob allow rules', () => {
    expect(
      new PermissionPolicy({ allow: ['bash(git *)'] }).evaluate(requestFor(bash, ['git status']))
        .behavior,
    ).toBe('allow');
  });
});

describe('PermissionPolicy: names and subjects', () => {
  it('matches deny and disabled patterns whatever name the model or the rule used', async () => {
    const byCanonical = new PermissionPolicy({ deny: ['bash(rm *)'], mode: 'full-access' });
    const byAlias = new PermissionPolicy({ deny: ['shell(rm *)'], mode: 'full-access' });
    for (const policy of [byCanonical, byAlias]) {
      for (const requestedName of ['bash', 'shell']) {
        expect(await policy.check(requestFor(bash, ['rm -rf /'], { requestedName }))).toMatchObject(
          { behavior: 'deny', decidedBy: 'deny-rule' },
        );
      }
    }
    const disabled = new PermissionPolicy({ disabledTools: ['shell'], mode: 'full-access' });
    expect(await disabled.check(requestFor(bash, [], { requestedName: 'bash' }))).toMatchObject({
      reason: 'Tool "bash" is disabled',
    });
    // An allow rule names the canonical tool only: an alias never widens what is allowed.
    const allowAlias = new PermissionPolicy({ allow: ['shell'] });
    expect(await allowAlias.check(requestFor(bash, ['ls']))).toMatchObject({
      decidedBy: 'no-approver',
    });
  });

  it('keys grants by the canonical name, so an alias cannot dodge a "never"', async () => {
    const { approver, asked } = scriptedApprover(['never']);
    const policy = new PermissionPolicy({ approver });
    expect(await policy.check(requestFor(bash, ['curl x'], { requestedName: 'shell' }))).toEqual({
      behavior: 'deny',
      decidedBy: 'approver',
      reason: 'Denied by the user',
    });
    expect(await policy.check(requestFor(bash, ['curl x'], { requestedName: 'bash' }))).toEqual({
      behavior: 'deny',
      decidedBy: 'grant',
      reason: 'Denied: "never" earlier this session for "curl x"',
    });
    expect(policy.grants).toEqual([{ tool: 'bash', subject: 'curl x', decision: 'deny' }]);
    expect(asked).toHaveLength(1);
  });

  it('matches deny/ask rules on any subject but allows only when every subject is covered', async () => {
    const policy = new PermissionPolicy({
      deny: ['bash(rm *)'],
      ask: ['bash(sudo *)'],
      allow: ['bash(ls*)', 'bash(cat *)', 'bash(sudo ls)'],
    });
    expect(await policy.check(requestFor(bash, ['ls', 'rm x', 'cat y']))).toMatchObject({
      behavior: 'deny',
      reason: 'Denied by rule "bash(rm *)" for "rm x"',
    });
    expect(policy.evaluate(requestFor(bash, ['ls', 'sudo ls']))).toEqual({
      behavior: 'ask',
      askRule: 'bash(sudo *)',
    });
    expect(policy.evaluate(requestFor(bash, ['ls -l', 'cat y']))).toEqual({
      behavior: 'allow',
      decidedBy: 'allow-rule',
      rules: ['bash(ls*)', 'bash(cat *)'],
    });
    expect(policy.evaluate(requestFor(bash, ['ls -l', 'make']))).toEqual({ behavior: 'ask' });
  });

  it('covers calls without subjects only with bare rules and subject-less grants', async () => {
    expect(new PermissionPolicy({ allow: ['ping(*)'] }).evaluate(requestFor(ping, []))).toEqual({
      behavior: 'ask',
    });
    expect(new PermissionPolicy({ allow: ['ping'] }).evaluate(requestFor(ping, []))).toMatchObject({
      behavior: 'allow',
      decidedBy: 'allow-rule',
    });
    expect(
      new PermissionPolicy({ deny: ['ping(*)'], mode: 'full-access' }).evaluate(
        requestFor(ping, []),
      ),
    ).toMatchObject({ behavior: 'allow' });
    expect(
      new PermissionPolicy({ deny: ['*'], mode: 'full-access' }).evaluate(requestFor(ping, [])),
    ).toMatchObject({ behavior: 'deny', reason: 'Denied by rule "*"' });

    const { approver, asked } = scriptedApprover(['always']);
    const policy = new PermissionPolicy({ approver });
    await policy.check(requestFor(ping, []));
    expect(policy.grants).toEqual([{ tool: 'ping', decision: 'allow' }]);
    expect(await policy.check(requestFor(ping, []))).toMatchObject({ decidedBy: 'grant' });
    // A subject-less grant does not cover calls of the tool that do have subjects.
    expect(policy.evaluate(requestFor(ping, ['something']))).toEqual({ behavior: 'ask' });
    expect(asked).toEqual(['ping:']);
  });

  it('combines allow rules and grants subject by subject', async () => {
    const policy = new PermissionPolicy({
      allow: ['bash(git *)'],
      grants: [{ tool: 'bash', subject: 'npm test', decision: 'allow' }],
    });
    expect(policy.evaluate(requestFor(bash, ['git log', 'npm test']))).toEqual({
      behavior: 'allow',
      decidedBy: 'grant',
    });
    expect(policy.evaluate(requestFor(bash, ['git log', 'npm ci']))).toEqual({ behavior: 'ask' });
  });

  it('matches @source rules for MCP and OpenAPI-style subjects', () => {
    const policy = new PermissionPolicy({
      allow: ['@mcp:github(github/create_*)'],
      deny: ['@openapi:petstore(DELETE *)'],
    });
    expect(policy.evaluate(requestFor(createIssue, ['github/create_issue']))).toMatchObject({
      behavior: 'allow',
    });
    const deletePet = { ...createIssue, name: 'deletePet', source: 'openapi:petstore' };
    expect(policy.evaluate(requestFor(deletePet, ['DELETE /pets/{petId}']))).toMatchObject({
      behavior: 'deny',
      reason: 'Denied by rule "@openapi:petstore(DELETE *)" for "DELETE /pets/{petId}"',
    });
    expect(policy.evaluate(requestFor(deletePet, ['GET /pets']))).toEqual({ behavior: 'ask' });
  });
});
