// A flag a command would not read is refused, never accepted and ignored: `agent demo --tools …`,
// `agent trust --mode …`, `agent mcp serve --model …`, `--keep-grants` with nothing resumed,
// `--scripted` with a real provider; and an MCP server entry's unknown key is an error.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { parseCliArgs, UsageError } from './args.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Every option of the parser with a value it accepts (a flag: none). */
const everyOption: Record<string, string | undefined> = {
  '--output-format': 'json',
  '--input-format': 'stream-json',
  '--sandbox': 'off',
  '--provider': 'openai',
  '--model': 'm',
  '--base-url': 'http://127.0.0.1:1/v1',
  '--scripted': 's.json',
  '--system': 'be brief',
  '--cwd': '/tmp',
  '--mcp-config': 'm.json',
  '--mcp-log-level': 'info',
  '--mcp-timeout': '3',
  '--openapi': 'spec.yaml',
  '--mode': 'read-only',
  '--allow': 'read_file',
  '--ask': 'bash',
  '--deny': 'bash',
  '--max-turns': '2',
  '--save': 'x.json',
  '--resume': 'x.json',
  '--continue': undefined,
  '--keep-grants': undefined,
  '--trust': undefined,
  '--hosted-web-search': undefined,
  '--pass-env': 'GITHUB_TOKEN',
  '--code-mode': undefined,
  '--tools': 'default',
  '--http': undefined,
  '--port': '0',
  '--token-file': 't',
  '--no-auth': undefined,
};

const withValue = (option: string) => {
  const value = everyOption[option];
  return value === undefined ? [option] : [option, value];
};

describe('a command refuses the options it would ignore', () => {
  const commands: [string[], string, readonly string[]][] = [
    [['demo'], 'agent demo does not take', ['--code-mode']],
    [['trust'], 'agent trust does not take', ['--cwd']],
    [
      ['mcp', 'serve'],
      'agent mcp serve does not take',
      [
        '--cwd',
        '--mcp-config',
        '--mcp-timeout',
        '--openapi',
        '--sandbox',
        '--mode',
        '--allow',
        '--ask',
        '--deny',
        '--pass-env',
        '--tools',
        '--trust',
        '--http',
        '--port',
        '--token-file',
        '--no-auth',
      ],
    ],
    [
      ['mcp', 'login', 'docs'],
      'agent mcp login does not take',
      ['--cwd', '--mcp-config', '--mcp-timeout', '--trust'],
    ],
  ];
  for (const [command, refusal, reads] of commands) {
    it.each(Object.keys(everyOption).filter((option) => !reads.includes(option)))(
      `${command.join(' ')} %s`,
      (option) => {
        // --http/--port/--token-file/--no-auth have their own earlier refusals outside serve.
        const args = [...command, ...withValue(option)];
        expect(() => parseCliArgs(args)).toThrow(UsageError);
        if (!['--http', '--port', '--token-file', '--no-auth', '--output-format'].includes(option))
          expect(() => parseCliArgs(args)).toThrow(`${refusal} ${option}`);
      },
    );
    it(`${command.join(' ')} takes ${reads.join(' ')}`, () => {
      const args = [...command];
      for (const option of reads) if (option !== '--token-file') args.push(...withValue(option));
      expect(() => parseCliArgs(args)).not.toThrow();
    });
  }

  it('demo --tools says how to choose tools instead', () => {
    expect(() => parseCliArgs(['demo', '--tools=-bash'])).toThrow(
      /agent demo does not take --tools: it runs a fixed script over the built-in tools .*\(to choose the tools, run a session: agent -p "…" --tools …\); it takes --code-mode/,
    );
  });

  it('-p: trust refuses it; demo and mcp serve say it their way', () => {
    expect(() => parseCliArgs(['trust', '-p', 'x'])).toThrow('agent trust does not take --print');
    expect(() => parseCliArgs(['demo', '-p', 'x'])).toThrow('demo takes no -p');
    expect(() => parseCliArgs(['mcp', 'serve', '-p', 'x'])).toThrow('agent mcp serve takes no -p');
    expect(() => parseCliArgs(['mcp', 'login', 'docs', '-p', 'x'])).toThrow(
      'agent mcp login does not take --print',
    );
  });

  it('agent trust list reads no folder: --cwd is refused there', () => {
    expect(() => parseCliArgs(['trust', 'list', '--cwd', '/tmp'])).toThrow(
      'agent trust does not take --cwd: it lists every trusted folder; it takes no options',
    );
    expect(() => parseCliArgs(['trust', 'revoke', '--cwd', '/tmp'])).not.toThrow();
  });

  it('names every ignored option at once', () => {
    expect(() => parseCliArgs(['trust', '--model', 'm', '--mode', 'plan'])).toThrow(
      'agent trust does not take --model, --mode:',
    );
  });

  it('--help and --version still win over anything', () => {
    expect(parseCliArgs(['demo', '--tools', 'default', '--help']).command).toBe('help');
    expect(parseCliArgs(['mcp', 'serve', '--model', 'm', '--version']).command).toBe('version');
  });
});

describe('a session refuses flags that would choose nothing', () => {
  it('--keep-grants needs something resumed', () => {
    expect(() => parseCliArgs(['-p', 'x', '--keep-grants'])).toThrow(
      '--keep-grants gives a resumed session its "always" answers back: use it with --resume or --continue',
    );
    for (const resumed of [['--continue'], ['--resume', 'a.json'], ['--resume']])
      expect(() => parseCliArgs(['-p', 'x', '--keep-grants', ...resumed])).not.toThrow();
  });

  it.each([
    [['--provider', 'openai'], '--provider'],
    [['--base-url', 'http://127.0.0.1:1/v1', '--model', 'm'], '--base-url'],
    [
      ['--provider', 'openai', '--base-url', 'http://h/v1', '--model', 'm'],
      '--provider and --base-url',
    ],
  ])('--scripted with %j is refused', (extra, named) => {
    expect(() => parseCliArgs(['-p', 'x', '--scripted', 's.json', ...extra])).toThrow(
      `--scripted replays the turns of a file, so ${named} would choose nothing`,
    );
  });
});

describe('through the built CLI', () => {
  it('agent demo --tools=-bash exits 2 before running anything', async () => {
    const run = await runCli(['demo', '--tools=-bash']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('agent demo does not take --tools');
  });

  it('an MCP server entry with an unknown key stops the start, naming file, server and key; "disabled" leaves it out', async () => {
    const dir = await tempDir('agent-cli-unused-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const started = join(dir.path, 'started');
    const toolsFile = join(dir.path, 'tools.json');
    await writeFile(toolsFile, JSON.stringify([{ name: 'one', description: 'One.' }]));
    const server = {
      command: process.execPath,
      args: [join(appDir, 'src/__fixtures__/shifting-server.mjs'), toolsFile, started],
    };
    const config = join(dir.path, 'mcp.json');
    const script = await writeScript(dir.path, [{ text: 'done' }]);
    const run = (content: unknown) =>
      writeFile(config, JSON.stringify({ mcpServers: content })).then(() =>
        runCli(['-p', 'hi', '--scripted', script, '--cwd', workspace, '--mcp-config', config], {
          env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
        }),
      );
    const typo = await run({ srv: { ...server, arg: ['x'] } });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(
      `${config}: server "srv" has an unknown key "arg" (known: command, args, env, cwd, sandbox, url, headers, type, disabled)`,
    );
    expect(existsSync(started)).toBe(false);
    const disabled = await run({ srv: { ...server, disabled: true } });
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(existsSync(started)).toBe(false);
    const typed = await run({ srv: { ...server, type: 'stdio', autoApprove: ['one'] } });
    expect(typed.code, typed.stderr).toBe(0);
    expect(existsSync(started)).toBe(true);
  });
});
