// A repository's agent files are read whole and kept as system prompts: thousands of them (1 MiB
// each is a few kB of git objects, compressed) were all read at every start — gigabytes of
// memory. At most maximumProjectAgentFiles files and maximumProjectAgentBytes characters are
// used, the rest named in one line.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../testing/test-support.js';
import {
  loadAgentDefinitions,
  maximumProjectAgentBytes,
  maximumProjectAgentFiles,
} from './agents.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function repository(files: number, bodyChars: number) {
  const dir = await tempDir('agent-cli-agents-many-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const folder = join(repo, '.agent', 'agents');
  await mkdir(folder, { recursive: true });
  await mkdir(join(dir.path, 'home'));
  const body = 'x'.repeat(bodyChars);
  for (let index = 0; index < files; index++) {
    const name = `a${String(index).padStart(5, '0')}`;
    await writeFile(
      join(folder, `${name}.md`),
      `---\nname: ${name}\ndescription: Agent ${index}.\n---\n${body}\n`,
    );
  }
  return { repo, folder, home: join(dir.path, 'home') };
}

describe("a repository's many agent files", () => {
  it(`more than ${maximumProjectAgentFiles}: the first by name, the rest named`, async () => {
    const { repo, folder, home } = await repository(maximumProjectAgentFiles + 50, 10);
    const lines: string[] = [];
    const agents = await loadAgentDefinitions(repo, { home, log: (line) => lines.push(line) });
    expect(agents).toHaveLength(maximumProjectAgentFiles);
    expect(lines).toContain(
      `agent: 50 of the ${maximumProjectAgentFiles + 50} agent files in ${folder} are not used (at most ${maximumProjectAgentFiles}, by name)`,
    );
  });

  it(`more than ${maximumProjectAgentBytes} characters in all: those after are left out`, async () => {
    const { repo, home } = await repository(12, 1024 * 1024 - 100);
    const lines: string[] = [];
    const agents = await loadAgentDefinitions(repo, { home, log: (line) => lines.push(line) });
    const total = agents.reduce((sum, agent) => sum + agent.prompt.length, 0);
    expect(total).toBeLessThanOrEqual(maximumProjectAgentBytes);
    expect(agents.length).toBeLessThan(12);
    expect(
      lines.some((line) => line.includes(`together they are over ${maximumProjectAgentBytes}`)),
    ).toBe(true);
  });
});
