// The configuration files of other AI tools hold the user's keys in plain text: MCP servers' `env`
// (Cursor, Windsurf, Claude Desktop, VS Code, Gemini CLI, Codex, Qwen Code, Claude Code), API keys
// (aider, llm, aichat, fabric, goose) and `.env` files inside tool folders (~/.gemini/.env, which
// Gemini CLI reads for GEMINI_API_KEY). A sandboxed command, and the file tools, read none of them.
// Real CLI processes, a scripted model, bubblewrap; the home under /var/tmp (the sandbox's /tmp is
// private, which would hide it whatever the CLI does).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Where each tool keeps keys, relative to the home. */
const files = [
  '.cursor/mcp.json',
  '.codeium/windsurf/mcp_config.json',
  '.config/Claude/claude_desktop_config.json',
  '.config/Code/User/mcp.json',
  '.config/Code/User/settings.json',
  '.gemini/settings.json',
  '.gemini/.env',
  '.codex/config.toml',
  '.qwen/settings.json',
  '.qwen/.env',
  '.claude/settings.json',
  '.aider.conf.yml',
  '.aider/oauth-keys.env',
  '.config/io.datasette.llm/keys.json',
  '.config/aichat/config.yaml',
  '.config/fabric/.env',
  '.config/goose/secrets.yaml',
  '.config/pnpm/rc',
  '.config/npm/npmrc',
];

const keyOf = (index: number) => `sk-proj-${String(index).padStart(2, '0')}${'Hd9x'.repeat(10)}`;

describe('other tools’ configuration files with keys', () => {
  it('are hidden from sandboxed commands and from the file tools', async (context) => {
    skipWithout('bwrap')(context);
    const dir = await mkdtemp('/var/tmp/agent-cli-other-tools-');
    cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }));
    const home = join(dir, 'home');
    const workspace = join(dir, 'ws');
    await mkdir(workspace, { recursive: true });
    for (const [index, file] of files.entries()) {
      await mkdir(dirname(join(home, file)), { recursive: true });
      await writeFile(join(home, file), `api_key = "${keyOf(index)}"\n`, { mode: 0o600 });
    }
    // A control: the folders stay usable, only the files with keys are hidden.
    await writeFile(join(home, '.config/Code/User/keybindings.json'), 'keybindings-visible\n');
    const probe = [...files, '.config/Code/User/keybindings.json']
      .map((file) => `cat ~/${file} >> seen.txt 2>&1`)
      .join('; ');
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'bash', arguments: { command: probe } },
          ...files.map((file, index) => ({
            id: `read-${index}`,
            name: 'read_file',
            arguments: { path: join(home, file) },
          })),
        ],
      },
      { text: 'done' },
    ]);
    const saved = join(dir, 'saved.json');
    const run = await runCli(
      [
        '-p',
        'look around',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--sandbox',
        'required',
        '--save',
        saved,
      ],
      { env: cleanEnv({ HOME: home, AGENT_HOME: join(dir, 'state') }) },
    );
    expect(run.code, run.stderr).toBe(0);
    const seen = await readFile(join(workspace, 'seen.txt'), 'utf8');
    // The file tools' answers: in the saved conversation (no key of the environment to redact).
    const answers = await readFile(saved, 'utf8');
    const readable = files.filter(
      (_file, index) => seen.includes(keyOf(index)) || answers.includes(keyOf(index)),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('keybindings-visible');
  });
});
