// Front matter a hostile repository can write within the 1 MiB file limit: 60,000 keys held the
// agent's thread for 43 s at start-up (the YAML parser compares keys pairwise), deep flow
// nesting 1.5 s before the parser's stack gave out, and an unknown tag made the parser print a
// warning quoting the file's own line — escape sequences included — on the user's terminal.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverSkills, maxFrontMatterChars } from './skills.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'skill-front-matter-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function discover(frontMatter: string) {
  await mkdir(path.join(root, 'hostile'), { recursive: true });
  await writeFile(path.join(root, 'hostile', 'SKILL.md'), `---\n${frontMatter}\n---\nBody.\n`);
  return discoverSkills([root]);
}

const head = 'name: hostile\ndescription: A hostile skill.\n';

describe('front matter over the limit is skipped unparsed', () => {
  it.each([
    [
      '60,000 keys',
      `${head}${Array.from({ length: 60_000 }, (_, index) => `k${index}: v`).join('\n')}`,
    ],
    ['200,000 nested flow sequences', `${head}x: ${'['.repeat(200_000)}${']'.repeat(200_000)}`],
    ['100,000 nested flow maps', `${head}x: ${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}`],
    ['a 900 kB description', `name: hostile\ndescription: ${'d'.repeat(900_000)}`],
  ])('%s', async (_name, frontMatter) => {
    const { skills, warnings } = await discover(frontMatter);
    expect(skills).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `SKILL\\.md: skipped, its front matter is \\d+ characters \\(at most ${maxFrontMatterChars}\\)$`,
        ),
      ),
    ]);
  });

  it('front matter within the limit still loads, many keys included', async () => {
    const { skills } = await discover(
      `${head}${Array.from({ length: 1000 }, (_, index) => `k${index}: v`).join('\n')}`,
    );
    expect(skills.map((skill) => skill.name)).toEqual(['hostile']);
    expect(skills[0]?.metadata.k999).toBe('v');
  });
});

describe('the YAML parser prints nothing', () => {
  it('unknown tags (with escape sequences on their line) raise no process warning', async () => {
    const seen: string[] = [];
    const listener = (warning: Error) => seen.push(warning.message);
    process.on('warning', listener);
    try {
      const { skills } = await discover(
        `${head}x: !!js/function "f"\ny: !custom \u001b]0;pwned\u0007 1\nz: !<tag:evil> \u001b[2J`,
      );
      expect(skills.map((skill) => skill.name)).toEqual(['hostile']);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(seen).toEqual([]);
  });
});
