// Slips at the command line a new user makes, through the built CLI: `agent help <command>` as git
// and npm take it, a prompt given twice with -p (the first was dropped without a word), and a short
// option typed in the other case (`-P`, Caps Lock).
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../testing/test-support.js';
import { parseCliArgs } from './args.js';
import { repeatedOptionNotice } from './args-slips.js';

beforeAll(() => assertBuilt());

describe('agent help <command>', () => {
  it.each([
    [['help', 'demo'], 'Usage: agent demo'],
    [['help', 'trust'], 'Usage: agent trust [list|revoke]'],
    [['help', 'mcp'], 'Usage: agent mcp serve'],
    [['help', 'mcp', 'serve'], 'Usage: agent mcp serve'],
    [['help', 'mcp', 'login'], 'Usage: agent mcp login <server>'],
  ])('agent %s prints that command’s help', async (args, heading) => {
    const run = await runCli(args);
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith(heading)).toBe(true);
    expect(run.stderr).toBe('');
  });

  it.each([[['help', 'me', 'fix', 'it']], [['help', 'demo', 'please']], [['--', 'help', 'demo']]])(
    'agent %s stays a prompt',
    (args) => {
      const options = parseCliArgs(args);
      expect(options.command).toBe('run');
      expect(options.initialPrompt).toBe(args.filter((word) => word !== '--').join(' '));
    },
  );
});

describe('-p given twice', () => {
  it.each([
    [['-p', 'first', '-p', 'second']],
    [['-p', 'first', '--print', 'second']],
    [['--print=first', '-p', 'second']],
    [['-p', 'first', '--model', 'm', '-p']],
    [['-p', '--model', 'm', '-p', 'second']],
  ])('%j: a usage error, not the last prompt alone', async (args) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agent: -p is given twice: give one prompt/);
    expect(run.stdout).toBe('');
  });

  it('-p after -- is part of the prompt words, not a second -p', () => {
    expect(() => parseCliArgs(['-p', 'first', '--', '-p'])).not.toThrow(/given twice/);
  });
});

describe('a short option in the other case, or with two dashes', () => {
  it.each([
    ['-P', '-p (--print)'],
    ['-H', '-h (--help)'],
    ['-V', '-v (--version)'],
    // Two dashes on a short option: was "Unknown option --p" with no guess.
    ['--p', '-p (--print)'],
    ['--c', '-c (--continue)'],
    ['--h', '-h (--help)'],
  ])('%s: did you mean %s', async (typed, meant) => {
    const run = await runCli([typed, 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`Unknown option ${typed}: did you mean ${meant}?`);
  });
});

describe('a short option glued to -p', () => {
  it.each([
    [['-pp', 'fix the bug'], 'give -p once: agent -p "your prompt"'],
    [['-pp'], 'give -p once'],
    [['-pc', 'go on'], 'to go on with the last session: agent -c -p "your prompt"'],
    [['-pv'], 'for the version: agent --version'],
    [['--model', 'm', '-ph'], 'for the options: agent --help'],
  ])('%j: refused, naming the slip (was: one letter sent as the prompt)', async (args, next) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    const typed = args.find((arg) => arg.startsWith('-p')) ?? '';
    expect(run.stderr).toContain(
      `agent: ${typed}: -p takes the text right after it as the prompt, so "${typed.slice(2)}" alone would be sent to the model; ${next}`,
    );
  });

  it('-p with a glued prompt of more letters, and -cp, stay as they were', () => {
    expect(parseCliArgs(['-pfix']).prompt).toBe('fix');
    expect(parseCliArgs(['-cp', 'go on']).prompt).toBe('go on');
  });
});

describe('-p with an empty prompt', () => {
  it.each(['', '   '])(
    '-p %j (an unset variable) says so, and how stdin becomes the prompt',
    async (prompt) => {
      const run = await runCli(['-p', prompt], { input: 'list the files\n' });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `agent: -p was given an empty prompt (${JSON.stringify(prompt)}: an unset shell variable?)`,
      );
      expect(run.stderr).toContain('-p alone (or -p -) to make what is piped in the prompt');
    },
  );
});

describe('a word after a command that takes none', () => {
  it.each([
    [
      ['mcp', 'serve', 'extra'],
      'agent mcp serve takes no arguments ("extra"): its options are in agent mcp serve --help',
    ],
    [['mcp', 'serve', '8080'], 'agent mcp serve takes no arguments ("8080")'],
  ])('agent %s: named, with where the options are', async (args, expected) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`agent: ${expected}`);
  });
});

describe('an option of one value given twice', () => {
  it('different values: the last is used, and that is said', async () => {
    const run = await runCli([
      '--mode',
      'read-only',
      '--model',
      'a',
      '--mode=full-access',
      '--model',
      'a',
      '--help',
    ]);
    expect(run.code).toBe(0);
    // --help prints no notes; a session start does (no key here: it stops after the note).
    expect(run.stderr).toBe('');
    const started = await runCli(['--mode', 'read-only', '--mode=full-access', '-p', 'hi']);
    expect(started.stderr).toContain('No model provider configured');
    expect(started.stderr).toContain(
      'note: --mode is given 2 times ("read-only", "full-access"): the last, "full-access", is used',
    );
  });

  it('the same value twice, a repeatable option, or words after --: no note', () => {
    expect(repeatedOptionNotice(['--model', 'a', '--model', 'a'])).toBeUndefined();
    expect(repeatedOptionNotice(['--allow', 'read_file', '--allow', 'bash(ls)'])).toBeUndefined();
    expect(repeatedOptionNotice(['-p', 'x', '--', '--model', 'a', '--model', 'b'])).toBeUndefined();
    expect(repeatedOptionNotice(['--cwd', '/a', '--cwd=/b'])).toContain(
      '--cwd is given 2 times ("/a", "/b")',
    );
  });
});

describe('an empty value (an unset variable)', () => {
  it.each([
    [
      ['--provider', '', '-p', 'hi'],
      '--provider was given an empty value (an unset shell variable?): it needs anthropic, openai or google',
    ],
    [
      ['--tools', '', '-p', 'hi'],
      '--tools was given an empty value (an unset shell variable?): it needs a list of tools',
    ],
    [['--tools=', '-p', 'hi'], '--tools was given an empty value'],
  ])('%j: said as such, not as an unknown value', async (args, expected) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`agent: ${expected}`);
    expect(run.stderr).not.toContain('unknown tool ""');
  });
});
