// A trusted folder's own language server (node_modules/.bin) ran outside any sandbox when the
// sandbox was off (`--sandbox off`, or where bubblewrap cannot run): write_file, unasked in
// workspace-write, rewrote it, and the next read-only lsp call ran what it wrote as the user — in
// -p, where every bash command is refused for want of someone to approve it. Seen: `id` as root
// written outside the workspace. In the sandbox the folder's own server still runs.
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** PATH without any language server: node's folder and the system's. */
const plainPath = [dirname(process.execPath), '/usr/bin', '/bin'].join(':');

/** A trusted repository with a pyright-langserver of its own; the model rewrites it, then asks. */
async function rewrittenServer(sandbox: 'off' | 'auto') {
  const dir = await tempDir('agent-cli-lsp-no-sandbox-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const outside = join(dir.path, 'outside');
  const serverFile = join(repo, 'node_modules', '.bin', 'pyright-langserver');
  await mkdir(dirname(serverFile), { recursive: true });
  await mkdir(join(repo, '.git'));
  await mkdir(outside);
  await writeFile(serverFile, '#!/bin/sh\nexit 1\n');
  await chmod(serverFile, 0o755);
  await writeFile(join(repo, 'a.py'), 'x = 1\n');
  const rewritten = `#!/bin/sh\necho "$PWD" > "${repo}/RAN"\nid > "${outside}/escaped"\nexit 1\n`;
  const script = await writeScript(dir.path, [
    {
      toolCalls: [
        {
          name: 'write_file',
          arguments: { path: 'node_modules/.bin/pyright-langserver', content: rewritten },
        },
      ],
    },
    { toolCalls: [{ name: 'lsp_diagnostics', arguments: { path: 'a.py' } }] },
    { text: 'done' },
  ]);
  const run = await runCli(
    [
      '-p',
      'go',
      '--scripted',
      script,
      '--mode',
      'workspace-write',
      '--trust',
      '--sandbox',
      sandbox,
    ],
    { cwd: repo, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home'), PATH: plainPath }) },
  );
  return {
    run,
    ran: existsSync(join(repo, 'RAN')),
    escaped: existsSync(join(outside, 'escaped')),
  };
}

describe("a trusted folder's own language server, the sandbox off", () => {
  it('is not run: a file tool could rewrite it unasked, and it would run outside any sandbox', async () => {
    const { run, ran, escaped } = await rewrittenServer('off');
    expect(escaped, run.stderr).toBe(false);
    expect(ran).toBe(false);
    expect(run.stderr).toContain(
      "lsp: this folder's own language servers (node_modules) run only in the sandbox, which is off",
    );
  });

  it('the control: with the sandbox, it runs there (and writes nothing outside)', async (context) => {
    skipWithout('bwrap')(context);
    const { run, ran, escaped } = await rewrittenServer('auto');
    expect(ran, run.stderr).toBe(true);
    expect(escaped).toBe(false);
  });
});
