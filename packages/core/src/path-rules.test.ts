import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { resolvePathPattern } from './path-rules.js';
import { PermissionPolicy, type PermissionPolicyOptions, type PolicyTool } from './permissions.js';
import { eitherDenies } from './run-context.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import type { PathDenialCheck, PermissionTier, ToolContext, ToolPathAccess } from './tool.js';

// Path rules: relative patterns resolve against the workspace root, and a path rule on any tool
// of a family (readers; writers) covers every tool of that family.

const root = '/ws';
const subjects = () => [];

function pathTool(
  name: string,
  pathAccess: ToolPathAccess,
  aliases: string[] = [],
  permission: PermissionTier = 'read-only',
): PolicyTool {
  return {
    name,
    aliases,
    source: 'builtin',
    policy: { permission, pathAccess },
    permissionSubjects: subjects,
  };
}

const tools: PolicyTool[] = [
  pathTool('read_file', 'read', ['Read', 'view_file']),
  pathTool('search', 'read', ['Grep']),
  pathTool('glob', 'read', ['Glob']),
  pathTool('list_files', 'read', ['LS']),
  pathTool('lsp_hover', 'read'),
  pathTool('write_file', 'write', ['Write'], 'workspace-write'),
  pathTool('edit_file', 'read-write', ['Edit'], 'workspace-write'),
  pathTool('notebook_edit', 'read-write', ['NotebookEdit'], 'workspace-write'),
  {
    name: 'bash',
    aliases: ['Bash'],
    source: 'builtin',
    policy: { permission: 'full-access' },
    permissionSubjects: subjects,
  },
  { name: 'todo_write', source: 'builtin', policy: { permission: 'read-only' } },
];
const readers = [
  'read_file',
  'search',
  'glob',
  'list_files',
  'lsp_hover',
  'edit_file',
  'notebook_edit',
];
const writers = ['write_file', 'edit_file', 'notebook_edit'];
const readOnly = ['read_file', 'search', 'glob', 'list_files', 'lsp_hover'];

function policy(options: PermissionPolicyOptions): PermissionPolicy {
  return new PermissionPolicy({ workspaceRoot: root, tools, ...options });
}

function decide(target: PermissionPolicy, toolName: string, path: string) {
  const tool = tools.find((candidate) => candidate.name === toolName);
  if (tool === undefined) throw new Error(toolName);
  return target.evaluate({
    toolName,
    tier: tool.policy?.permission ?? 'full-access',
    subjects: [path],
    tool,
  }).behavior;
}

describe('resolvePathPattern', () => {
  it.each([
    ['secret.txt', '/ws/secret.txt'],
    ['./secret.txt', '/ws/secret.txt'],
    ['././a//b/./c', '/ws/a/b/c'],
    ['src/**', '/ws/src/**'],
    ['src/*.ts', '/ws/src/*.ts'],
    ['../other/x', '/other/x'],
    ['../../../../x', '/x'],
    ['/abs/./x/../y', '/abs/y'],
    ['//abs//y', '/abs/y'],
    ['*/secret.txt', '*/secret.txt'],
    ['**/.env', '**/.env'],
    ['*', '*'],
    ['/', '/'],
  ])('%s → %s', (pattern, expected) => {
    expect(resolvePathPattern(pattern, root)).toEqual({ ok: true, pattern: expected });
  });

  it.each([
    ['~/.ssh/*', '"~" is not expanded'],
    ['~', '"~" is not expanded'],
    ['src/', 'never ends with "/": write "src/*"'],
    ['/ws/src/', 'never ends with "/"'],
    ['src/*/../x', '".." after a wildcard'],
  ])('%s can never match a real path', (pattern, problem) => {
    const outcome = resolvePathPattern(pattern, root);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.problem).toContain(problem);
  });

  it('a relative pattern needs a root; an absolute one does not', () => {
    expect(resolvePathPattern('secret.txt', undefined)).toMatchObject({ ok: false });
    expect(resolvePathPattern('/ws/secret.txt', undefined)).toEqual({
      ok: true,
      pattern: '/ws/secret.txt',
    });
  });
});

describe('path families', () => {
  it.each([
    'read_file(*/secret.txt)',
    'read_file(secret.txt)',
    'read_file(./secret.txt)',
    'read_file(/ws/secret.txt)',
    'Read(secret.txt)',
    'search(**/secret.txt)',
    'glob(secret.txt)',
    'lsp_hover(./secret.txt)',
  ])('deny %s keeps every reader — and nothing that only writes — from /ws/secret.txt', (rule) => {
    const target = policy({ mode: 'full-access', deny: [rule] });
    for (const name of readers) expect(decide(target, name, '/ws/secret.txt'), name).toBe('deny');
    expect(decide(target, 'write_file', '/ws/secret.txt')).toBe('allow');
    expect(decide(target, 'bash', '/ws/secret.txt')).toBe('allow');
    for (const name of readers) expect(decide(target, name, '/ws/other.txt'), name).toBe('allow');
    expect(target.isPathDenied('/ws/secret.txt', 'read')).toBe(true);
    expect(target.isPathDenied('/ws/secret.txt', 'write')).toBe(false);
    expect(target.isPathDenied('/ws/public.txt', 'read')).toBe(false);
  });

  it('a relative pattern is anchored at the root: it does not match deeper or elsewhere', () => {
    const target = policy({ mode: 'full-access', deny: ['read_file(secret.txt)'] });
    for (const path of ['/ws/sub/secret.txt', '/other/secret.txt', '/ws/secret.txt.bak']) {
      expect(decide(target, 'search', path), path).toBe('allow');
      expect(target.isPathDenied(path, 'read'), path).toBe(false);
    }
    const tree = policy({ mode: 'full-access', deny: ['read_file(src/**)'] });
    expect(decide(tree, 'glob', '/ws/src/deep/a.ts')).toBe('deny');
    expect(decide(tree, 'glob', '/ws/srcx/a.ts')).toBe('allow');
  });

  it.each([
    'edit_file(/ws/locked/*)',
    'Edit(locked/*)',
    'write_file(locked/*)',
    'notebook_edit(./locked/*)',
  ])('deny %s keeps every writer from /ws/locked/a — and no read-only tool', (rule) => {
    const target = policy({ mode: 'full-access', deny: [rule] });
    for (const name of writers) expect(decide(target, name, '/ws/locked/a'), name).toBe('deny');
    for (const name of readOnly) expect(decide(target, name, '/ws/locked/a'), name).toBe('allow');
    expect(target.isPathDenied('/ws/locked/a', 'write')).toBe(true);
    expect(target.isPathDenied('/ws/locked/a', 'read')).toBe(false);
  });

  it('an ask rule on a reader makes every reader ask, and hides the path from many-path tools', () => {
    const target = policy({ mode: 'full-access', ask: ['read_file(.env)'] });
    for (const name of readers) expect(decide(target, name, '/ws/.env'), name).toBe('ask');
    expect(target.isPathDenied('/ws/.env', 'read')).toBe(true);
  });

  it('an allow rule on a reader allows every reader (by canonical name only)', () => {
    const target = policy({ mode: 'default', allow: ['read_file(src/*)'] });
    for (const name of readOnly) expect(decide(target, name, '/ws/src/a.ts'), name).toBe('allow');
    expect(decide(target, 'write_file', '/ws/src/a.ts')).toBe('ask');
    expect(decide(target, 'search', '/ws/lib/a.ts')).toBe('ask');
    // An alias never widens an allow: not for its own tool, not for the family. (`Read(…)` is
    // Claude Code's rule for every reader, not an alias: see claude-code-names.test.ts.)
    const byAlias = policy({ mode: 'default', allow: ['view_file(src/*)'] });
    for (const name of readOnly) expect(decide(byAlias, name, '/ws/src/a.ts'), name).toBe('ask');
  });

  it('precedence holds: a family deny beats an allow rule and the mode', () => {
    const target = policy({
      mode: 'full-access',
      allow: ['search', 'search(/ws/*)'],
      deny: ['read_file(secret.txt)'],
    });
    expect(decide(target, 'search', '/ws/secret.txt')).toBe('deny');
    expect(decide(target, 'search', '/ws/ok.txt')).toBe('allow');
  });

  it('isPathDenied.covers says whether any rule can cover a path of the family', () => {
    const reads = policy({ deny: ['read_file(*/secret.txt)'] });
    expect(reads.isPathDenied.covers?.('read')).toBe(true);
    expect(reads.isPathDenied.covers?.('write')).toBe(false);
    const none = policy({ deny: ['bash(rm *)', 'read_file'] });
    expect(none.isPathDenied.covers?.('read')).toBe(false);
  });

  it('a bare rule covers its own tool only (the family is for path rules)', () => {
    const target = policy({ mode: 'full-access', deny: ['read_file'] });
    expect(decide(target, 'read_file', '/ws/a')).toBe('deny');
    expect(decide(target, 'search', '/ws/a')).toBe('allow');
    expect(target.isPathDenied('/ws/a', 'read')).toBe(false);
  });

  it('a rule on a tool that is not a path tool never reaches the families', () => {
    const target = policy({ mode: 'full-access', deny: ['bash(*secret*)'] });
    expect(decide(target, 'read_file', '/ws/secret.txt')).toBe('allow');
    expect(target.isPathDenied('/ws/secret.txt', 'read')).toBe(false);
  });

  it('without the tools, a rule covers the tools it names only; setTools brings the families', () => {
    const target = new PermissionPolicy({
      mode: 'full-access',
      workspaceRoot: root,
      deny: ['read_file(secret.txt)'],
    });
    expect(decide(target, 'read_file', '/ws/secret.txt')).toBe('deny');
    expect(decide(target, 'search', '/ws/secret.txt')).toBe('allow');
    expect(target.isPathDenied('/ws/secret.txt', 'read')).toBe(false);
    target.setTools(tools);
    expect(decide(target, 'search', '/ws/secret.txt')).toBe('deny');
    expect(target.isPathDenied('/ws/secret.txt', 'read')).toBe(true);
  });

  it('subjects of tools that are not path tools are matched as written', () => {
    const target = policy({ mode: 'full-access', deny: ['bash(./run.sh)'] });
    expect(decide(target, 'bash', './run.sh')).toBe('deny');
    expect(decide(target, 'bash', '/ws/run.sh')).toBe('allow');
  });

  it('a workspace root must be absolute', () => {
    expect(() => new PermissionPolicy({ workspaceRoot: 'ws' })).toThrow('Invalid workspaceRoot');
  });
});

describe('unmatchableRules', () => {
  const problemsOf = (options: PermissionPolicyOptions, root?: string) =>
    new PermissionPolicy({
      ...(root === undefined ? {} : { workspaceRoot: root }),
      tools,
      ...options,
    }).unmatchableRules();

  it('is empty when every rule can match', () => {
    expect(
      problemsOf(
        {
          allow: ['read_file', 'read_file(src/*)', 'bash(git *)', '@builtin', 'lsp_*'],
          ask: ['Edit(*)', 'bash'],
          deny: ['read_file(*/secret.txt)', 'Read(./secret.txt)', 'search(/etc/*)', 'bash(~/x)'],
          disabledTools: ['glob'],
        },
        root,
      ),
    ).toEqual([]);
  });

  it.each<[string, PermissionPolicyOptions, string]>([
    [
      'a tool that does not exist',
      { deny: ['read_fle(x)'] },
      'deny rule "read_fle(x)" can never match: no tool of this session matches "read_fle" (did you mean read_file?)',
    ],
    [
      'a prefix that matches nothing',
      { ask: ['zzz_*'] },
      'ask rule "zzz_*" can never match: no tool of this session matches "zzz_*"',
    ],
    [
      'an unknown source',
      { deny: ['@mcp:github'] },
      'no tool of this session matches "@mcp:github"',
    ],
    [
      'an allow rule by alias',
      { allow: ['view_file(src/*)'] },
      '"view_file" is an alias of read_file, and allow rules name tools by their own name',
    ],
    [
      'a subject on a tool without subjects',
      { deny: ['todo_write(x)'] },
      'deny rule "todo_write(x)" can never match: todo_write names no subjects',
    ],
    ['"~" in a path rule', { deny: ['read_file(~/.ssh/*)'] }, '"~" is not expanded'],
    ['a trailing slash', { deny: ['read_file(src/)'] }, 'never ends with "/"'],
    [
      'a relative path without a root',
      { deny: ['read_file(secret.txt)'] },
      'needs the workspace root',
    ],
    [
      'a disabled tool that does not exist',
      { disabledTools: ['nope'] },
      'disabled-tool pattern "nope" can never match',
    ],
  ])('reports %s', (_name, options, message) => {
    const problems = problemsOf(options, message.includes('workspace root') ? undefined : root);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });

  it('checks the tools given to it, or those set', () => {
    const target = new PermissionPolicy({ deny: ['read_file(x)'], workspaceRoot: root });
    expect(target.unmatchableRules()).toEqual([
      'deny rule "read_file(x)" can never match: no tool of this session matches "read_file"',
    ]);
    expect(target.unmatchableRules(tools)).toEqual([]);
  });
});

describe('path families (property)', () => {
  const segment = fc.constantFrom('a', 'b', 'src', '.env', 'secret.txt', '..', '.', '');
  const relative = fc
    .array(segment, { minLength: 1, maxLength: 5 })
    .map((parts) => parts.join('/'))
    .filter((text) => text !== '' && !text.endsWith('/') && !text.startsWith('/'));
  const path = fc
    .array(fc.constantFrom('a', 'b', 'src', '.env', 'secret.txt'), { minLength: 1, maxLength: 4 })
    .map((parts) => `/ws/${parts.join('/')}`);
  const readerName = fc.constantFrom(...readers.filter((name) => !writers.includes(name)));

  /** POSIX normalisation of `root/relative`, the reference for folding. */
  function normalise(relativePath: string): string {
    const kept: string[] = [];
    for (const part of `${root}/${relativePath}`.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') kept.pop();
      else kept.push(part);
    }
    return `/${kept.join('/')}`;
  }

  it('a relative pattern without wildcards matches the normalised path and what is below it, for every reader', () => {
    fc.assert(
      fc.property(relative, readerName, path, (pattern, named, other) => {
        const target = policy({ mode: 'full-access', deny: [`${named}(${pattern})`] });
        const exact = normalise(pattern);
        expect(resolvePathPattern(pattern, root)).toEqual({ ok: true, pattern: exact });
        for (const name of readers) expect(decide(target, name, exact)).toBe('deny');
        expect(target.isPathDenied(exact, 'read')).toBe(true);
        expect(decide(target, 'write_file', exact)).toBe('allow');
        const expected = other === exact || other.startsWith(`${exact}/`) ? 'deny' : 'allow';
        for (const name of readers) expect(decide(target, name, other)).toBe(expected);
      }),
    );
  });

  it('every reader gets the same answer for a path, and isPathDenied agrees with the deny rules', () => {
    const pattern = fc.oneof(
      relative,
      path,
      path.map((text) => `${text}/*`),
      fc.constantFrom('*/secret.txt', '**/.env', '*', 'src/**'),
    );
    const rule = fc
      .tuple(fc.constantFrom(...tools.map((tool) => tool.name), 'Read', 'Grep', 'Write'), pattern)
      .map(([name, subject]) => `${name}(${subject})`);
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 4 }),
        fc.array(rule, { maxLength: 2 }),
        path,
        (deny, ask, target) => {
          const subject = policy({ mode: 'full-access', deny, ask });
          const readOnlyAnswers = new Set(readOnly.map((name) => decide(subject, name, target)));
          expect(readOnlyAnswers.size).toBe(1);
          const writerAnswers = new Set(
            ['write_file'].map((name) => decide(subject, name, target)),
          );
          expect(writerAnswers.size).toBe(1);
          // Hidden exactly when a read-only reader would not be allowed outright.
          expect(subject.isPathDenied(target, 'read')).toBe(
            decide(subject, 'read_file', target) !== 'allow',
          );
          expect(subject.isPathDenied(target, 'write')).toBe(
            decide(subject, 'write_file', target) !== 'allow',
          );
        },
      ),
    );
  });
});

describe('ctx.isPathDenied', () => {
  /** A tool that reports, for each path it is given, whether the context hides it. */
  function probe(seen: (ctx: ToolContext) => void) {
    return defineTool({
      name: 'probe',
      description: 'probe',
      input: z.object({}),
      execute: async (_args, ctx) => {
        seen(ctx);
        const hidden = ['/ws/a', '/ws/b'].filter((path) => ctx.isPathDenied?.(path, 'read'));
        return { content: [{ type: 'text', text: hidden.join(',') || 'none' }] };
      },
    });
  }
  const denyA: PathDenialCheck = (path) => path === '/ws/a';
  const denyB: PathDenialCheck = (path) => path === '/ws/b';

  it('is unset without the option, so tools run as before', async () => {
    let present: boolean | undefined;
    const result = await executeTool(
      probe((ctx) => {
        present = ctx.isPathDenied !== undefined;
      }),
      {},
    );
    expect(present).toBe(false);
    expect(result.content).toEqual([{ type: 'text', text: 'none' }]);
  });

  it('executeTool and the agent hand the option to tools', async () => {
    const direct = await executeTool(
      probe(() => undefined),
      {},
      { isPathDenied: denyA },
    );
    expect(direct.content).toEqual([{ type: 'text', text: '/ws/a' }]);
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'probe', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [probe(() => undefined)],
      isPathDenied: denyA,
    });
    const run = await agent.run('go').result;
    const result = run.messages.find((message) => message.role === 'toolResult');
    expect(result?.content).toEqual([{ type: 'text', text: '/ws/a' }]);
  });

  it("a sub-agent applies its own and its parent's", async () => {
    let child: string | undefined;
    const spawner = defineTool({
      name: 'spawn',
      description: 'starts a child run',
      input: z.object({}),
      execute: async (_args, ctx) => {
        if (ctx.run === undefined) throw new Error('no run context');
        const agent = new Agent({
          provider: createScriptedProvider([
            { toolCalls: [{ name: 'probe', arguments: {} }] },
            { text: 'child done' },
          ]),
          model: 'm',
          tools: [probe(() => undefined)],
          isPathDenied: denyB,
          parentRun: { context: ctx.run, name: 'child' },
        });
        const run = await agent.run('go').result;
        const message = run.messages.find((entry) => entry.role === 'toolResult');
        const part = message?.content[0];
        child = part?.type === 'text' ? part.text : undefined;
        return { content: [{ type: 'text', text: 'spawned' }] };
      },
    });
    const parent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'spawn', arguments: {} }] },
        { text: 'done' },
      ]),
      model: 'm',
      tools: [spawner],
      isPathDenied: denyA,
    });
    await parent.run('go').result;
    expect(child).toBe('/ws/a,/ws/b');
    const neither: PathDenialCheck = Object.assign(() => false, { covers: () => false });
    const combined = eitherDenies(neither, denyA);
    expect(combined?.covers?.('read')).toBe(true);
    expect(eitherDenies(neither, neither)?.covers?.('read')).toBe(false);
  });
});

describe('paths a call also touches (a shell line’s files) are under the path rules', () => {
  const bash = tools.find((tool) => tool.name === 'bash');
  const query = (paths: { read?: string[]; write?: string[] }, tier: PermissionTier) => ({
    toolName: 'bash',
    tier,
    subjects: ['cat x'],
    paths,
    ...(bash === undefined ? {} : { tool: bash }),
  });

  it.each([
    [{ deny: ['read_file(secret.txt)'] }, { read: ['/ws/secret.txt'] }, 'deny'],
    [{ deny: ['Read(./secrets/**)'] }, { read: ['/ws/a', '/ws/secrets/k'] }, 'deny'],
    [{ deny: ['Read(secret.txt)'], mode: 'full-access' }, { read: ['/ws/secret.txt'] }, 'deny'],
    [{ deny: ['read_file(secret.txt)'], allow: ['bash(*)'] }, { read: ['/ws/secret.txt'] }, 'deny'],
    [{ ask: ['read_file(secret.txt)'], mode: 'full-access' }, { read: ['/ws/secret.txt'] }, 'ask'],
    [{ deny: ['Edit(src/**)'], mode: 'full-access' }, { write: ['/ws/src/a.ts'] }, 'deny'],
    // A read rule does not cover a write, nor a write rule a read.
    [
      { deny: ['read_file(secret.txt)'], mode: 'full-access' },
      { write: ['/ws/secret.txt'] },
      'allow',
    ],
    [{ deny: ['write_file(src/**)'], mode: 'full-access' }, { read: ['/ws/src/a.ts'] }, 'allow'],
    // A rule on bash itself is about its subjects, not about paths.
    [
      { deny: ['bash(/ws/secret.txt)'], mode: 'full-access' },
      { read: ['/ws/secret.txt'] },
      'allow',
    ],
    [{ deny: ['read_file(secret.txt)'], mode: 'read-only' }, { read: ['/ws/public.txt'] }, 'allow'],
  ] as const)('%j with %j → %s', (options, paths, expected) => {
    const target = policy(options as PermissionPolicyOptions);
    const tier: PermissionTier = 'read-only';
    expect(target.evaluate(query({ ...paths } as never, tier)).behavior).toBe(expected);
  });
});

describe('pathsToHide: what an OS sandbox hides for the rules', () => {
  it('names the paths read rules cover as a whole, and leaves out patterns naming no one path', () => {
    const target = policy({
      deny: [
        'Read(./secret.txt)',
        'read_file(keys/**)',
        'search(/etc/ssl/private/*)',
        'read_file(**/.env)',
        'read_file(*.pem)',
        'Edit(src/**)',
        'bash(cat *)',
      ],
      ask: ['read_file(/ws/asked)', 'list_files(/ws/a*b)'],
    });
    expect(target.pathsToHide('read').sort()).toEqual(
      ['/etc/ssl/private', '/ws/asked', '/ws/keys', '/ws/secret.txt'].sort(),
    );
    expect(target.pathsToHide('write')).toEqual(['/ws/src']);
    // What names no one path, as patterns for the sandbox to look for.
    expect(target.pathPatternsToHide('read').sort()).toEqual(
      ['**/.env', '*.pem', '/ws/a*b'].sort(),
    );
    expect(target.pathPatternsToHide('write')).toEqual([]);
    // Allow rules hide nothing; without the tools no rule is known to be about reading.
    expect(policy({ allow: ['read_file(x)'] }).pathsToHide()).toEqual([]);
    expect(
      new PermissionPolicy({ workspaceRoot: root, deny: ['read_file(x)'] }).pathsToHide(),
    ).toEqual([]);
  });
});

describe('accented names spelt two ways (NFC and NFD) are one name to deny and ask rules', () => {
  const composed = 'caf\u00e9.txt';
  const decomposed = 'cafe\u0301.txt';
  it.each([
    [composed, decomposed],
    [decomposed, composed],
    [`d\u00e9j\u00e0/**`, 'de\u0301ja\u0300/x.txt'],
  ])('deny read_file(%s) covers /ws/%s', (rule, file) => {
    const denied = policy({ mode: 'full-access', deny: [`read_file(${rule})`] });
    expect(decide(denied, 'read_file', `/ws/${file}`)).toBe('deny');
    expect(denied.isPathDenied(`/ws/${file}`, 'read')).toBe(true);
    const asked = policy({ mode: 'full-access', ask: [`Read(${rule})`] });
    expect(decide(asked, 'search', `/ws/${file}`)).toBe('ask');
  });

  it('pathsToHide names both spellings, for the sandbox to hide whichever is on disk', () => {
    const target = policy({ deny: [`read_file(${composed})`] });
    expect(target.pathsToHide().sort()).toEqual([`/ws/${composed}`, `/ws/${decomposed}`].sort());
  });

  it('an allow rule is not widened', () => {
    const allowed = policy({ allow: [`read_file(${composed})`] });
    expect(decide(allowed, 'read_file', `/ws/${composed}`)).toBe('allow');
    expect(decide(allowed, 'read_file', `/ws/${decomposed}`)).toBe('ask');
  });
});

describe('a deny or ask rule on a directory covers what is inside it', () => {
  it.each([
    ['Read(./secrets)', '/ws/secrets/a.txt'],
    ['read_file(secrets)', '/ws/secrets/deep/b.txt'],
    ['read_file(/ws/secrets)', '/ws/secrets/a.txt'],
    ['read_file(*/keys)', '/ws/x/keys/id'],
  ])('deny %s covers %s', (rule, file) => {
    const denied = policy({ mode: 'full-access', deny: [rule] });
    expect(decide(denied, 'read_file', file)).toBe('deny');
    expect(decide(denied, 'search', file)).toBe('deny');
    expect(denied.isPathDenied(file, 'read')).toBe(true);
    const asked = policy({ mode: 'full-access', ask: [rule] });
    expect(decide(asked, 'read_file', file)).toBe('ask');
  });

  it('by whole segments, and an allow rule is not widened', () => {
    const denied = policy({ mode: 'full-access', deny: ['Read(./secrets)'] });
    expect(decide(denied, 'read_file', '/ws/secrets2/a.txt')).toBe('allow');
    expect(decide(denied, 'read_file', '/ws/secret')).toBe('allow');
    const allowed = policy({ allow: ['read_file(src)'] });
    expect(decide(allowed, 'read_file', '/ws/src')).toBe('allow');
    expect(decide(allowed, 'read_file', '/ws/src/a.ts')).toBe('ask');
  });
});
