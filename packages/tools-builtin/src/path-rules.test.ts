import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  type AnyAgentTool,
  executeTool,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type ToolResultMessage,
} from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { findRipgrep } from './search-engines.js';
import { makeTempDir } from './test-helpers.js';

// Path rules over the real file tools in a real workspace: a rule on read_file covers every tool
// that reads, relative patterns resolve against the workspace, and search, glob and list_files
// leave covered files out — saying how many, by name only, never from what the files contain.

let ws: string;
const sessions: BackgroundTasks[] = [];

beforeAll(() => {
  ws = makeTempDir('path-rules-');
  const files: Record<string, string> = {
    'secret.txt': 'top secret\n',
    'public.txt': 'top public\n',
    'sub/secret.txt': 'top secret in sub\n',
    'secrets/a.txt': 'top secret a\n',
    'secrets/deep/b.txt': 'top secret b\n',
    'src/a.ts': 'export const top = 1;\n',
    '.env': 'TOKEN=top-token\n',
  };
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
    fs.writeFileSync(path.join(ws, name), content);
  }
  fs.symlinkSync(path.join(ws, 'secret.txt'), path.join(ws, 'link.txt'));
});
afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
});

const engines: ('typescript' | 'ripgrep')[] = [
  'typescript',
  ...(findRipgrep() === undefined ? [] : (['ripgrep'] as const)),
];
if (process.env.CI === 'true' && engines.length < 2)
  throw new Error('ripgrep (rg) is required under CI');

function session(rules: PermissionPolicyOptions, engine: 'typescript' | 'ripgrep' = 'typescript') {
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = defaultTools({
    cwd: ws,
    backgroundTasks,
    search: { engine },
    bash: { sandbox: 'off' },
  });
  const policy = new PermissionPolicy({ mode: 'full-access', workspaceRoot: ws, tools, ...rules });
  const byName = new Map<string, AnyAgentTool>(tools.map((tool) => [tool.name, tool]));
  return async (name: string, args: Record<string, unknown>) => {
    const tool = byName.get(name);
    if (tool === undefined) throw new Error(name);
    const message = await executeTool(tool, args, {
      permissionGate: policy.gate,
      isPathDenied: policy.isPathDenied,
    });
    return { message, text: textOf(message) };
  };
}

function textOf(message: ToolResultMessage): string {
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

describe.each(engines)('search (%s engine) leaves covered files out', (engine) => {
  it.each([
    ['read_file(secret.txt)', 1],
    ['read_file(./secret.txt)', 1],
    ['Read(/WS/secret.txt)', 1],
    ['read_file(*/secret.txt)', 2],
    ['search(**/secret.txt)', 2],
  ])('deny %s', async (rule, hidden) => {
    const call = session({ deny: [rule.replace('/WS', ws)] }, engine);
    for (const output_mode of ['content', 'files_with_matches', 'count']) {
      const { message, text } = await call('search', { pattern: 'top', output_mode });
      expect(message.isError, text).toBeFalsy();
      expect(text).toContain('public.txt');
      expect(text).not.toMatch(/^secret\.txt/m);
      // Not through the link to it either (search does not follow links).
      expect(text).not.toMatch(/:top secret$/m);
      expect(text).not.toMatch(/^link\.txt/m);
      if (hidden === 2) expect(text).not.toContain('sub/secret.txt');
      else expect(text).toContain('sub/secret.txt');
      expect(text).toContain(
        `[${hidden} file${hidden === 1 ? '' : 's'} hidden by permission rules]`,
      );
      expect(message.details).toMatchObject({ hiddenByRules: { files: hidden, directories: 0 } });
    }
  });

  it('the count is by name: the same whether or not a covered file matches (no content oracle)', async () => {
    const call = session({ deny: ['read_file(secret.txt)'] }, engine);
    const notes = new Set<string>();
    for (const pattern of ['^top secret$', '^top s', '^x', 'secret', 'NOTHING-MATCHES']) {
      const { text } = await call('search', { pattern, output_mode: 'files_with_matches' });
      expect(text).not.toMatch(/^secret\.txt$/m);
      notes.add(text.split('\n').at(-1) ?? '');
    }
    expect([...notes]).toEqual(['[1 file hidden by permission rules]']);
    // A glob that leaves the covered file out of the search leaves it out of the count.
    const typed = await call('search', { pattern: 'top', include: '*.ts' });
    expect(typed.text).toBe('src/a.ts:1:export const top = 1;');
  });

  it('a covered directory hides everything in it, counted once', async () => {
    const call = session({ deny: ['read_file(secrets)'] }, engine);
    const { text } = await call('search', { pattern: 'top', output_mode: 'files_with_matches' });
    expect(text).not.toContain('secrets/');
    expect(text).toContain('[1 directory hidden by permission rules]');
    const inside = session({ deny: ['read_file(secrets/**)'] }, engine);
    const files = await inside('search', { pattern: 'top', output_mode: 'files_with_matches' });
    expect(files.text).not.toContain('secrets/');
    // `secrets/**` covers secrets/a.txt and the directory secrets/deep (not entered).
    expect(files.text).toContain('[1 file and 1 directory hidden by permission rules]');
  });

  it('an ask rule hides too: a many-path tool cannot ask about each file', async () => {
    const call = session({ ask: ['read_file(.env)'] }, engine);
    const { text } = await call('search', { pattern: 'top' });
    expect(text).not.toContain('top-token');
    expect(text).toContain('[1 file hidden by permission rules]');
  });

  it('no note and nothing hidden without rules on paths', async () => {
    const call = session({ deny: ['bash(rm *)', 'read_file'] }, engine);
    const { text, message } = await call('search', { pattern: 'top secret$' });
    expect(text).toBe('secret.txt:1:top secret');
    expect(message.details).not.toHaveProperty('hiddenByRules');
  });
});

describe('glob and list_files leave covered files out', () => {
  it('glob', async () => {
    const call = session({ deny: ['read_file(*/secret.txt)'] });
    const all = await call('glob', { pattern: '**/*.txt' });
    expect(all.text.split('\n')).toEqual([
      'link.txt',
      'public.txt',
      'secrets/a.txt',
      'secrets/deep/b.txt',
      '[2 files hidden by permission rules]',
    ]);
    // Covered files the pattern would not have shown are not counted.
    const typed = await call('glob', { pattern: '**/*.ts' });
    expect(typed.text).toBe('src/a.ts');
    const none = await call('glob', { pattern: 'secret.txt' });
    expect(none.text).toBe('No files found.\n[1 file hidden by permission rules]');
  });

  it('list_files', async () => {
    const call = session({ deny: ['read_file(secret.txt)', 'glob(secrets)'] });
    const { text, message } = await call('list_files', { depth: 3 });
    expect(text).not.toMatch(/^ {2}secret\.txt$/m);
    expect(text).not.toContain('secrets/');
    expect(text).not.toContain('a.txt');
    expect(text).toMatch(/^ {4}secret\.txt$/m); // sub/secret.txt: not covered by a root-relative rule
    expect(text).toContain('[1 file and 1 directory hidden by permission rules]');
    expect(message.details).toMatchObject({ hiddenByRules: { files: 1, directories: 1 } });
  });
});

describe('the gate applies a rule on one reader to every reader', () => {
  it.each([
    ['read_file', { path: 'secret.txt' }],
    ['read_file', { path: './secret.txt' }],
    ['read_file', { path: 'link.txt' }], // the subject is the real path
    ['read_file', { path: 'sub/../secret.txt' }],
    ['search', { pattern: 'top', path: 'secret.txt' }],
    ['edit_file', { path: 'secret.txt', old_string: 'top', new_string: 'x' }],
    ['notebook_edit', { path: 'secret.txt', edit_mode: 'delete', cell_index: 0 }],
  ])('deny read_file(secret.txt): %s %j is denied', async (name, args) => {
    const call = session({ deny: ['read_file(secret.txt)'] });
    const { message, text } = await call(name, args);
    expect(message.isError).toBe(true);
    expect(text).toContain('Denied by rule "read_file(secret.txt)"');
    expect(fs.readFileSync(path.join(ws, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('a read rule stops Kiro’s fs_write commands on write_file (they read the file), not plain writes', async () => {
    const call = session({ deny: ['read_file(secret.txt)'] });
    for (const args of [
      { command: 'str_replace', path: 'secret.txt', old_str: 'top', new_str: 'x' },
      { command: 'append', path: 'secret.txt', new_str: 'more' },
      { command: 'insert', path: 'secret.txt', insert_line: 0, new_str: 'x' },
    ]) {
      const { message, text } = await call('write_file', args);
      expect(message).toMatchObject({ isError: true, errorKind: 'denied' });
      expect(text).toContain('covered by a rule on reading it');
    }
    expect(fs.readFileSync(path.join(ws, 'secret.txt'), 'utf8')).toBe('top secret\n');
    const written = await call('write_file', { path: 'secret.txt', content: 'top secret\n' });
    expect(written.message.isError).toBeFalsy();
  });

  it('a read rule does not stop writes, nor reads elsewhere; a write rule stops every writer', async () => {
    const call = session({ deny: ['read_file(secret.txt)', 'Edit(src/*)'] });
    expect((await call('read_file', { path: 'sub/secret.txt' })).text).toContain(
      'top secret in sub',
    );
    const written = await call('write_file', { path: 'secret.txt', content: 'top secret\n' });
    expect(written.message.isError).toBeFalsy();
    for (const [name, args] of [
      ['write_file', { path: 'src/a.ts', content: 'x' }],
      ['edit_file', { path: 'src/a.ts', old_string: 'top', new_string: 'x' }],
    ] as const) {
      const denied = await call(name, args);
      expect(denied.text).toContain('Denied by rule "Edit(src/*)"');
    }
    expect((await call('read_file', { path: 'src/a.ts' })).text).toContain('export const top');
    expect(fs.readFileSync(path.join(ws, 'src/a.ts'), 'utf8')).toBe('export const top = 1;\n');
  });
});

describe('path rules cover the files a bash line names', () => {
  // Each line reads secret.txt (or the secrets directory) by a name the rule covers: as written,
  // through ./ and .., an absolute path, a symlink to it, a glob, an option's value, a redirection,
  // inside bash -c, after another command, as a copy's source. Run for real when allowed.
  const readers = [
    'cat secret.txt',
    'cat ./secret.txt',
    'cat sub/../secret.txt',
    'cat WS/secret.txt',
    'cat link.txt',
    'cat secre*.txt',
    'cat s?cret.txt',
    'head -n 1 < secret.txt',
    'grep top secret.txt',
    'grep -r top secrets',
    'grep --file=secret.txt public.txt',
    'echo ok; tac secret.txt',
    'bash -c "cat secret.txt"',
    'cp secret.txt copy.txt',
    'sed -n p secret.txt',
    'cat "secret.txt"',
    "cat 'secret'.txt",
  ];

  it.each([
    ['read-only', []],
    ['full-access', []],
    ['full-access', ['bash(*)']],
  ] as const)(
    'deny read_file(secret.txt) and read_file(secrets) in %s mode (allow %j): every reader is denied',
    async (mode, allow) => {
      const call = session({
        mode,
        allow: [...allow],
        deny: ['read_file(secret.txt)', 'Read(./secrets)'],
      });
      const leaked: string[] = [];
      for (const line of readers) {
        // Quoted: a workspace under a TMPDIR with a space stays one word.
        const command = line.replace('WS', `'${ws}'`);
        const { message, text } = await call('bash', { command });
        if (message.errorKind !== 'denied' || text.includes('top secret'))
          leaked.push(`${command} → ${message.errorKind ?? 'ran'}: ${text.slice(0, 80)}`);
      }
      expect(leaked).toEqual([]);
      expect(fs.existsSync(path.join(ws, 'copy.txt'))).toBe(false);
    },
  );

  it('an ask rule asks (denied without an approver); a write rule covers redirections', async () => {
    const asked = session({ ask: ['Read(./secret.txt)'] });
    const { message, text } = await asked('bash', { command: 'cat secret.txt' });
    expect(message.errorKind, text).toBe('denied');
    const call = session({ deny: ['Edit(src/*)'] });
    for (const command of [
      'echo x > src/a.ts',
      'echo x >> src/a.ts',
      'echo x &> src/new.ts',
      'echo x >| src/a.ts',
    ]) {
      const outcome = await call('bash', { command });
      expect(outcome.message.errorKind, command).toBe('denied');
      expect(outcome.text).toContain('Denied by rule "Edit(src/*)"');
    }
    expect(fs.readFileSync(path.join(ws, 'src/a.ts'), 'utf8')).toBe('export const top = 1;\n');
    expect(fs.existsSync(path.join(ws, 'src/new.ts'))).toBe(false);
  });

  it('a file named after a cd is resolved from there too', async () => {
    const call = session({ deny: ['read_file(**/sub/secret.txt)'] });
    for (const command of [
      'cd sub && cat secret.txt',
      'cd sub; cat ./secret.txt',
      'pushd sub >/dev/null && cat secret.txt',
      'cd ./sub/ && tac secret.txt',
      'cd sub && cat < secret.txt',
      'cd /tmp && cd WS/sub && cat secret.txt',
    ]) {
      const { message, text } = await call('bash', { command: command.replace('WS', `'${ws}'`) });
      expect(message.errorKind, `${command}: ${text}`).toBe('denied');
      expect(text).not.toContain('top secret in sub');
    }
  });

  it('a write rule covers the files a command that may write names, not only redirections', async () => {
    const call = session({ deny: ['Edit(src/*)'] });
    for (const command of [
      "sed -i 's/top/x/' src/a.ts",
      'cp public.txt src/a.ts',
      'tee src/a.ts < public.txt',
      'truncate -s0 src/a.ts',
      'rm src/a.ts',
      'touch src/new.ts',
      'cp public.txt src/new.ts',
      'cd src && rm a.ts',
      'mv public.txt src/b.ts',
      'ln -sf /dev/null src/a.ts',
    ]) {
      const { message, text } = await call('bash', { command });
      expect(message.errorKind, `${command}: ${text}`).toBe('denied');
    }
    expect(fs.readFileSync(path.join(ws, 'src/a.ts'), 'utf8')).toBe('export const top = 1;\n');
    expect(fs.existsSync(path.join(ws, 'src/new.ts'))).toBe(false);
    expect(fs.existsSync(path.join(ws, 'public.txt'))).toBe(true);
    // Reading them stays allowed: a write rule is about writing.
    const read = await call('bash', { command: 'cat src/a.ts && grep top src/a.ts' });
    expect(read.message.isError, read.text).toBeFalsy();
  });

  it('lines that name no covered path still run', async () => {
    const call = session({ deny: ['read_file(secret.txt)', 'Edit(src/*)'] });
    for (const command of ['cat public.txt', 'cat sub/secret.txt', 'echo secret.txt is here']) {
      const { message, text } = await call('bash', { command });
      expect(message.isError, `${command}: ${text}`).toBeFalsy();
    }
  });
});
