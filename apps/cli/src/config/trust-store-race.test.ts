// Two CLIs trusting folders at once (two terminals, a script trusting several clones): each read
// the store, added its folder and wrote the file back, and the later write lost the other's
// entry (12 at once kept 11). The store's changes now hold a lock file.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('the trust store with several CLIs at once', () => {
  it('12 `agent trust` at once keep 12 entries; a lock left by a dead process is taken over', async () => {
    const dir = await tempDir('agent-cli-trust-race-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    await mkdir(home, { mode: 0o700 });
    const env = cleanEnv({ AGENT_HOME: home });
    const folders = Array.from({ length: 12 }, (_, i) => join(dir.path, `f${i}`));
    for (const folder of folders) await mkdir(folder);
    const runs = await Promise.all(
      folders.map((folder) => runCli(['trust', '--cwd', folder], { env })),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const listed = await runCli(['trust', 'list'], { env });
    for (const folder of folders) expect(listed.stdout).toContain(`${folder}  trusted`);

    // A CLI killed while it held the lock: the next one takes it over.
    await writeFile(join(home, 'trusted-folders.json.lock'), '999999999 0\n', { mode: 0o600 });
    const after = join(dir.path, 'after');
    await mkdir(after);
    const run = await runCli(['trust', '--cwd', after], { env });
    expect(run.code, run.stderr).toBe(0);
    expect((await runCli(['trust', 'list'], { env })).stdout).toContain(`${after}  trusted`);
  });
});
