import { existsSync, linkSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-spill-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const uid = process.getuid?.() ?? 0;

/** The text of every tool result in a conversation saved with --save, in order. */
function toolResults(saved: string): string[] {
  const { messages } = JSON.parse(readFileSync(saved, 'utf8')) as {
    messages: { role: string; content: { type: string; text?: string }[] }[];
  };
  return messages
    .filter((message) => message.role === 'toolResult')
    .map((message) => message.content.map((part) => part.text ?? '').join('\n'));
}

describe('bash spill files of a CLI session', () => {
  it('sandboxed bash tails the spill file the notice names; nothing is left once the CLI exits', async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    // TMPDIR of the test's own: the per-user spill directory lives there.
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    const perUser = join(tmp, `agent-tools-builtin-${uid}`);
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 2000000' } }] },
      {
        toolCalls: [
          // The only session directory the sandbox shows is this session's.
          { name: 'bash', arguments: { command: `tail -n 3 ${perUser}/*/bash-*-stdout-*.log` } },
        ],
      },
      { text: 'Tailed it.' },
    ]);
    const saved = join(dir, 'saved.json');
    const { code } = await runCli(
      ['-p', 'count', '--scripted', script, '--cwd', workspace, '--mode', 'full-access'].concat([
        '--save',
        saved,
      ]),
      { env: cleanEnv({ TMPDIR: tmp }) },
    );
    expect(code).toBe(0);
    const results = toolResults(saved);
    const notice = new RegExp(`full output saved to ${perUser}/\\d+-[0-9a-f]{16}/bash-\\S+\\.log`);
    expect(results[0]).toMatch(notice);
    expect(results[0]).not.toContain('Blocked by the sandbox');
    expect(results[1]).toMatch(/^1999998\n1999999\n2000000\nExit code: 0$/);
    expect(existsSync(perUser)).toBe(true);
    expect(readdirSync(perUser)).toEqual([]);
  });
});

describe('path rules in a CLI session', () => {
  it("--deny 'read_file(secret.txt)' keeps secret.txt out of search, glob and list_files; rules that can never match warn", async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(join(workspace, 'sub'), { recursive: true });
    await writeFile(join(workspace, 'secret.txt'), 'top secret\n');
    await writeFile(join(workspace, 'public.txt'), 'top public\n');
    await writeFile(join(workspace, 'sub', 'notes.txt'), 'top notes\n');
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'search', arguments: { pattern: 'top' } },
          { name: 'grep', arguments: { pattern: 'secret', output_mode: 'files_with_matches' } },
          { name: 'glob', arguments: { pattern: '**/*.txt' } },
          { name: 'list_files', arguments: {} },
          { name: 'read_file', arguments: { path: './secret.txt' } },
          { name: 'search', arguments: { pattern: 'top', path: 'secret.txt' } },
        ],
      },
      { text: 'Looked.' },
    ]);
    const saved = join(dir, 'saved.json');
    const { code, stderr } = await runCli([
      '-p',
      'look',
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
      '--deny',
      'read_file(secret.txt)',
      '--ask',
      'todo_write(x)',
      '--deny',
      // Ours does not expand "~" (Claude Code's Read(~/.ssh/*) does: claude-code-config.test.ts).
      'read_file(~/.ssh/*)',
      '--save',
      saved,
    ]);
    expect(code).toBe(0);
    const warnings = stderr.split('\n').filter((line) => line.startsWith('warning: '));
    // One line per rule, allow then ask then deny rules, in the order given. (A --deny naming no
    // tool, such as read_fle(x), is refused instead: deny-flag-typo.test.ts.)
    expect(warnings).toEqual([
      'warning: ask rule "todo_write(x)" can never match: todo_write names no subjects (drop the parentheses to cover the tool)',
      'warning: deny rule "read_file(~/.ssh/*)" can never match: "~" is not expanded: write the absolute path',
    ]);
    const [search, grep, glob, list, read, direct] = toolResults(saved);
    expect(search).toContain('public.txt:1:top public');
    expect(search).toContain('sub/notes.txt:1:top notes');
    expect(search).not.toContain('top secret');
    expect(search).toContain('[1 file hidden by permission rules]');
    expect(grep).toBe('No matches found.\n[1 file hidden by permission rules]');
    expect(glob).toBe('public.txt\nsub/notes.txt\n[1 file hidden by permission rules]');
    expect(list).not.toMatch(/secret/);
    expect(list).toContain('[1 file hidden by permission rules]');
    expect(read).toContain('Denied by rule "read_file(secret.txt)"');
    expect(direct).toContain('Denied by rule "read_file(secret.txt)"');
    for (const result of [search, grep, glob, list, read, direct])
      expect(result).not.toContain('top secret');
  });
});

describe('read rules reach bash in a CLI session', () => {
  it("--deny 'Read(./secret.txt)' and 'read_file(keys/**)': bash cannot read them by any name — the rule denies the names a line gives, the sandbox hides the files from the rest", async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(join(workspace, 'keys'), { recursive: true });
    await writeFile(join(workspace, 'secret.txt'), 'top secret\n');
    await writeFile(join(workspace, 'keys', 'id'), 'top key\n');
    await writeFile(join(workspace, 'public.txt'), 'top public\n');
    const lines = [
      // Named: denied by the rule.
      'cat secret.txt',
      'cat keys/id',
      // Not named (known only at run time, or through a cd): the sandbox hides the files.
      'cat $(echo secret.txt) $(echo keys/id)',
      'cd keys && cat id; cd .. && cat ../ws/secret.txt',
      'f=secret; cat "$f.txt"',
      'python3 -c "print(open(\'secret.txt\').read())"',
      'grep -r top . | sort',
      // What no rule covers still reads.
      'cat public.txt',
    ];
    const script = await writeScript(dir, [
      { toolCalls: lines.map((command) => ({ name: 'bash', arguments: { command } })) },
      { text: 'Looked.' },
    ]);
    const saved = join(dir, 'saved.json');
    const { code } = await runCli([
      '-p',
      'look',
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
      '--deny',
      'Read(./secret.txt)',
      '--deny',
      'read_file(keys/**)',
      '--save',
      saved,
    ]);
    const results = toolResults(saved);
    // 4: the python line is opaque, so asked, and -p has no one to ask.
    expect(code, results.join('\n---\n')).toBe(4);
    expect(results).toHaveLength(lines.length);
    expect(results[2]).toMatch(/cat: secret\.txt: Permission denied/);
    expect(results[0]).toContain('Denied by rule "Read(./secret.txt)"');
    expect(results[1]).toContain('Denied by rule "read_file(keys/**)"');
    for (const [index, result] of results.entries())
      expect(result, lines[index]).not.toMatch(/top secret|top key/);
    expect(results.at(-1)).toContain('top public');
    expect(results.at(-2)).toContain('top public');
  });
});

describe('read rules by pattern reach bash in a CLI session', () => {
  it("--deny 'Read(*.pem)', 'Read(**/.env)', 'read_file(config/*.secret)': no command reads what they cover, by any name, nor through a hard link made before", async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(join(workspace, 'sub', 'deep'), { recursive: true });
    await mkdir(join(workspace, 'config'), { recursive: true });
    await writeFile(join(workspace, 'key.pem'), 'top key\n');
    await writeFile(join(workspace, 'sub', 'deep', 'other.pem'), 'top other key\n');
    await writeFile(join(workspace, '.env'), 'top env\n');
    await writeFile(join(workspace, 'sub', '.env'), 'top sub env\n');
    await writeFile(join(workspace, 'config', 'app.secret'), 'top app secret\n');
    await writeFile(join(workspace, 'public.txt'), 'top public\n');
    linkSync(join(workspace, 'config', 'app.secret'), join(workspace, 'notes.txt'));
    const lines = [
      // Named: denied by the rules.
      'cat key.pem',
      // Not named: the sandbox hides what the patterns cover.
      'grep -r top . | sort',
      'e=pem; cat key.$e sub/deep/other.$e',
      'cat $(echo sub/.env) $(echo config/app).secret notes.txt',
      'tar cf - . | strings | grep top',
      // A file of the pattern one command makes is hidden from the next.
      'echo top made > made.txt && mv made.txt made.pem && echo moved',
      'cat made.$(echo pem)',
    ];
    const script = await writeScript(dir, [
      ...lines.map((command) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] })),
      { text: 'Looked.' },
    ]);
    const saved = join(dir, 'saved.json');
    await runCli([
      '-p',
      'look',
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
      '--deny',
      'Read(*.pem)',
      '--deny',
      'Read(**/.env)',
      '--deny',
      'read_file(config/*.secret)',
      '--save',
      saved,
    ]);
    const results = toolResults(saved);
    expect(results).toHaveLength(lines.length);
    expect(results[0]).toContain('Denied by rule "Read(*.pem)"');
    for (const [index, result] of results.entries())
      expect(result, lines[index]).not.toMatch(/top (key|other key|env|sub env|app secret|made)/);
    expect(results[1]).toContain('top public');
    expect(results[5]).toContain('moved');
    expect(results[6]).toMatch(/made\.pem: Permission denied/);
  });
});

describe('write rules by pattern reach bash in a CLI session', () => {
  it("--deny 'Edit(**/*.lock)': no command changes a lock file, by any name; other files are written", async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(join(workspace, 'packages', 'a'), { recursive: true });
    await writeFile(join(workspace, 'yarn.lock'), 'original\n');
    await writeFile(join(workspace, 'packages', 'a', 'pnpm.lock'), 'original\n');
    const lines = [
      'l=lock; echo changed >> yarn.$l',
      'cd packages/a && cp /dev/null "pnpm.$(echo lock)"',
      'rm -f $(ls *.lock)',
      'echo written > notes.txt',
    ];
    const script = await writeScript(dir, [
      ...lines.map((command) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] })),
      { text: 'Tried.' },
    ]);
    const saved = join(dir, 'saved.json');
    await runCli([
      '-p',
      'try',
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
      '--deny',
      'Edit(**/*.lock)',
      '--save',
      saved,
    ]);
    const results = toolResults(saved);
    expect(results).toHaveLength(lines.length);
    expect(readFileSync(join(workspace, 'yarn.lock'), 'utf8'), results.join('\n---\n')).toBe(
      'original\n',
    );
    expect(readFileSync(join(workspace, 'packages', 'a', 'pnpm.lock'), 'utf8')).toBe('original\n');
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('written\n');
  });
});

describe('write rules reach bash in a CLI session', () => {
  it("--deny 'Edit(src/**)': no command changes src, by any name — the rule denies the names a line gives, the sandbox keeps src read-only for the rest", async () => {
    const dir = await scratch();
    const workspace = join(dir, 'ws');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await writeFile(join(workspace, 'src', 'a.ts'), 'original\n');
    const lines = [
      // Named: denied by the rule.
      "sed -i 's/original/changed/' src/a.ts",
      // Not named: the sandbox keeps src read-only.
      'd=src; echo changed > "$d/a.ts"',
      "python3 -c \"open('src/a.ts', 'w').write('changed')\"",
      'cd src && rm -f a.ts',
      'f=$(echo src/new.ts); touch "$f"',
      'cp /dev/null "$(echo src/a.ts)"',
      'printf changed | tee "$(echo src)/a.ts"',
      // What no rule covers is still written.
      'echo written > other.txt',
    ];
    const script = await writeScript(dir, [
      { toolCalls: lines.map((command) => ({ name: 'bash', arguments: { command } })) },
      { text: 'Tried.' },
    ]);
    const saved = join(dir, 'saved.json');
    await runCli([
      '-p',
      'try',
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
      '--deny',
      'Edit(src/**)',
      '--save',
      saved,
    ]);
    const results = toolResults(saved);
    expect(results).toHaveLength(lines.length);
    expect(results[0]).toContain('Denied by rule "Edit(src/**)"');
    expect(readFileSync(join(workspace, 'src', 'a.ts'), 'utf8'), results.join('\n---\n')).toBe(
      'original\n',
    );
    expect(existsSync(join(workspace, 'src', 'new.ts'))).toBe(false);
    expect(readFileSync(join(workspace, 'other.txt'), 'utf8')).toBe('written\n');
  });
});
