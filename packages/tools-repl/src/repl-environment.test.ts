import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executeTool } from '@agent/core';
import { createSandbox, type Sandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

// What code in a REPL sees of the environment: the interpreters start without the credentials
// of their environment (unless passEnv names them), sandboxed or not.

const anthropicKey = `sk-ant-api03-${'xY9_'.repeat(20)}`;
const environment = {
  ...process.env,
  ANTHROPIC_API_KEY: anthropicKey,
  OPENAI_API_KEY: `sk-proj-${'Ab3'.repeat(16)}`,
  MY_SECRET: 'hunter2-but-longer',
  INNOCENT_LOOKING: `ghp_${'A1b2'.repeat(9)}`,
  ORDINARY_SETTING: 'kept-value',
};
const hasPython = findExecutable('python3') !== undefined;

let cwd: string;
let repl: ReplTools | undefined;
let sandbox: Sandbox | undefined;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-env-'));
});
afterEach(async () => {
  await repl?.close();
  await sandbox?.close();
  repl = undefined;
  sandbox = undefined;
  await rm(cwd, { recursive: true, force: true });
});

async function run(name: string, code: string): Promise<string> {
  const tool = repl?.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name}`);
  const result = await executeTool(tool, { code });
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

const jsProbe =
  'JSON.stringify(["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MY_SECRET", "INNOCENT_LOOKING", "ORDINARY_SETTING", "PATH"].map((name) => [name, process.env[name] !== undefined]))';
const pyProbe =
  'import os\n[(name, name in os.environ) for name in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MY_SECRET", "INNOCENT_LOOKING", "ORDINARY_SETTING", "PATH"]]';

describe.each([
  ['unsandboxed', false],
  ['sandboxed', true],
] as const)('REPL environment, %s', (_label, sandboxed) => {
  if (sandboxed) beforeEach(skipWithout('bwrap'));
  function make(passEnv?: readonly string[]) {
    if (sandboxed) sandbox = createSandbox({ mode: 'required', writableRoots: [cwd] });
    repl = createReplTools({
      cwd,
      env: environment,
      ...(hasPython ? {} : { languages: ['javascript'] }),
      ...(sandbox === undefined ? {} : { sandbox }),
      ...(passEnv === undefined ? {} : { passEnv }),
    });
  }

  it('js_repl: process.env has no credential, ordinary variables stay', async () => {
    make();
    expect(await run('js_repl', jsProbe)).toContain(
      `'[["ANTHROPIC_API_KEY",false],["OPENAI_API_KEY",false],["MY_SECRET",false],["INNOCENT_LOOKING",false],["ORDINARY_SETTING",true],["PATH",true]]'`,
    );
    expect(await run('js_repl', 'String(process.env.ANTHROPIC_API_KEY)')).toBe("=> 'undefined'");
  });

  it('js_repl: passEnv passes the named variable with its value', async () => {
    make(['ANTHROPIC_API_KEY']);
    expect(await run('js_repl', 'process.env.ANTHROPIC_API_KEY')).toContain(`'${anthropicKey}'`);
    expect(await run('js_repl', 'String(process.env.MY_SECRET)')).toBe("=> 'undefined'");
  });

  it('python_repl: os.environ has no credential', async (context) => {
    skipWithout('python3')(context);
    make();
    expect(await run('python_repl', pyProbe)).toContain(
      "[('ANTHROPIC_API_KEY', False), ('OPENAI_API_KEY', False), ('MY_SECRET', False), ('INNOCENT_LOOKING', False), ('ORDINARY_SETTING', True), ('PATH', True)]",
    );
  });
});

describe('the agent process itself', () => {
  // A cell without a sandbox can read /proc/<parent>/environ (see the README: the filter is not
  // a boundary on its own); in the sandbox no process of the host is visible at all.
  it('is not visible from a sandboxed cell: no /proc entry of the host, parent is PID 1', async (context) => {
    skipWithout('bwrap')(context);
    sandbox = createSandbox({ mode: 'required', writableRoots: [cwd] });
    repl = createReplTools({ cwd, env: environment, languages: ['javascript'], sandbox });
    const seen = await run(
      'js_repl',
      `const fs = require('node:fs');
       const pids = fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name));
       const lines = pids.map((pid) => { try { return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').replaceAll('\\0', ' ') } catch { return '' } });
       let parentEnvironment = 'unreadable';
       try { parentEnvironment = fs.readFileSync('/proc/' + process.ppid + '/environ', 'utf8') } catch {}
       JSON.stringify({ ppid: process.ppid, host: lines.some((line) => line.includes('vitest')), key: parentEnvironment.includes('sk-') })`,
    );
    expect(seen).toContain(`'{"ppid":1,"host":false,"key":false}'`);
  });
});
