import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('REPL tools in the CLI', () => {
  it('keeps a JavaScript session across calls; asked (denied in -p) unless a rule allows it', async () => {
    const dir = await tempDir('agent-cli-repl-');
    cleanups.push(dir.dispose);
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'js_repl', arguments: { code: 'const rates = { EUR: 1.1 }' } }] },
      { toolCalls: [{ name: 'js_repl', arguments: { code: '100 * rates.EUR' } }] },
      { text: 'About 110 dollars.' },
    ]);
    const env = cleanEnv({ AGENT_HOME: join(dir.path, 'home') });
    const allowed = await runCli(
      ['-p', 'convert', '--scripted', script, '--cwd', dir.path, '--allow', 'js_repl(*)'],
      { env },
    );
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain('✓ js_repl: [new javascript session]');
    expect(allowed.stderr).toMatch(/✓ js_repl: => 110\.00000000000001|✓ js_repl: => 110/);
    const denied = await runCli(['-p', 'convert', '--scripted', script, '--cwd', dir.path], {
      env,
    });
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/✗ js_repl \[denied\]/);
  });
});
