// Files the user names on the command line or keeps in $AGENT_HOME are read only when they are
// regular files of a sane size: a FIFO or /dev/tty in their place hung the start where no signal
// but SIGKILL ended it (a thread of Node's pool blocked in open(), which process.exit waits for),
// `/dev/zero` read until memory ran out.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-named-files-');
  cleanups.push(dir.dispose);
  return dir.path;
}
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('a file the user names that is not a regular file', () => {
  it.for([
    ['--resume', 'the conversation'],
    ['--scripted', 'the script'],
    ['--mcp-config', 'the MCP config'],
  ] as const)(
    '%s: a FIFO, /dev/zero or a folder is a clear error at once',
    async ([option, what]) => {
      const dir = await scratch();
      execFileSync('mkfifo', [join(dir, 'pipe')]);
      const script = await writeScript(dir, [{ text: 'ok' }]);
      for (const [path, reason] of [
        [join(dir, 'pipe'), 'is not a regular file'],
        ['/dev/zero', 'is not a regular file'],
        [dir, 'is not a regular file'],
        [join(dir, 'missing.json'), 'no such file'],
      ] as const) {
        const args = [
          '-p',
          'go',
          option,
          path,
          ...(option === '--scripted' ? [] : ['--scripted', script]),
        ];
        const run = await runCli(args, { cwd: dir });
        expect(run.code, run.stderr).toBe(1);
        // A --resume that names no file may name a kept session: said its own way.
        if (option !== '--resume' || reason !== 'no such file')
          expect(run.stderr).toContain(`Cannot read ${what} ${path}: `);
        expect(run.stderr).toContain(reason);
      }
    },
  );

  it('$AGENT_HOME/AGENTS.md or an agent file that is a FIFO is left out, with a line saying so', async () => {
    const dir = await scratch();
    const home = join(dir, 'agent-home');
    mkdirSync(join(home, 'agents'), { recursive: true });
    execFileSync('mkfifo', [join(home, 'AGENTS.md')]);
    execFileSync('mkfifo', [join(home, 'agents', 'helper.md')]);
    const workspace = join(dir, 'work');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'README.md'), '# w\n');
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const run = await runCli(['-p', 'go', '--scripted', script], {
      cwd: workspace,
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('ok\n');
    expect(run.stderr).toContain(
      `${join(home, 'AGENTS.md')} is not a regular file; it is not used`,
    );
    expect(run.stderr).toContain(
      `${join(home, 'agents', 'helper.md')} is not a regular file; it is not used`,
    );
  });

  it('a byte-order mark (as Windows editors write) before the JSON of --scripted, --mcp-config or --resume is no error', async () => {
    const dir = await scratch();
    const bom = '\uFEFF';
    writeFileSync(join(dir, 'script.json'), `${bom}${JSON.stringify([{ text: 'ok' }])}`);
    writeFileSync(join(dir, 'mcp.json'), `${bom}{"mcpServers":{}}\r\n`);
    writeFileSync(
      join(dir, 'session.json'),
      `${bom}${JSON.stringify({ messages: [{ role: 'user', content: 'earlier', timestamp: 1 }] })}`,
    );
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        'script.json',
        '--mcp-config',
        'mcp.json',
        '--resume',
        'session.json',
      ],
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('ok\n');
  });
});

describe('a file the user names that is JSON as people write it', () => {
  // A comment (editors of JSON allow them), a trailing comma, a single quote: said as the settings
  // files' errors say them — line, column and the slip — and never a piece of the file's text,
  // which V8's own message quotes (the file may hold a token).
  it.for([
    ['--scripted', 'the script'],
    ['--mcp-config', 'the MCP config'],
    ['--resume', 'the conversation'],
  ] as const)('%s: the line, the column and the slip, no quoted text', async ([option, what]) => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const secret = 'sk-ant-secret-0123456789';
    for (const [text, slip] of [
      [
        '{\r\n  // mine\r\n  "a": 1\r\n}\r\n',
        'line 2, column 3: a comment, which JSON does not allow',
      ],
      [`{"env": {"TOKEN": "${secret}",}}`, 'a comma before the closing bracket'],
      [`{'env': "${secret}"}`, 'a single quote'],
    ] as const) {
      writeFileSync(join(dir, 'named.json'), text);
      const args = [
        '-p',
        'go',
        option,
        'named.json',
        ...(option === '--scripted' ? [] : ['--scripted', script]),
      ];
      const run = await runCli(args, { cwd: dir });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`Cannot read ${what} named.json: it is not valid JSON (line `);
      expect(run.stderr).toContain(slip);
      expect(run.stderr).not.toContain(secret.slice(0, 10));
      expect(run.stderr).not.toContain('mine');
    }
  });
});

describe('a path given as "~/…" (quoted, or by a launcher with no shell)', () => {
  // The shell expands an unquoted ~ only: "~/x" reached the CLI as a folder named ~ in the current
  // one (--save even advised `mkdir -p './~'`). It is the home, as the shell would have made it.
  it('--scripted, --mcp-config, --cwd, --save and --resume read ~ as the home', async () => {
    const dir = await scratch();
    const home = join(dir, 'home');
    mkdirSync(join(home, 'project'), { recursive: true });
    writeFileSync(
      join(home, 'turns.json'),
      JSON.stringify([{ text: 'first' }, { text: 'second' }]),
    );
    writeFileSync(join(home, 'mcp.json'), '{"mcpServers":{}}');
    const env = cleanEnv({ HOME: home, AGENT_HOME: join(home, '.agent') });
    const first = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        '~/turns.json',
        '--mcp-config',
        '~/mcp.json',
        '--cwd',
        '~/project',
        '--save',
        '~/saved.json',
      ],
      { cwd: dir, env },
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('first\n');
    expect(existsSync(join(home, 'saved.json'))).toBe(true);
    expect(existsSync(join(dir, '~'))).toBe(false);
    const second = await runCli(
      ['-p', 'again', '--scripted', '~/turns.json', '--resume', '~/saved.json'],
      { cwd: dir, env },
    );
    expect(second.code, second.stderr).toBe(0);
  });
});
