// A JSON file the user wrote by hand (settings, --mcp-config, --scripted, --resume) with a slip V8
// names without a place: "Unexpected token" errors quote the text instead of saying where, so a
// comment on the first line (`// my settings`, as VS Code's settings.json has), `/* … */`, a
// `# comment`, a YAML-looking file or an unquoted value got "it is not valid JSON" and nothing more.
// Now the line, the column and the slip are said, whatever V8 gives; the place is the scanner's
// (json-error-place.ts), which agrees with V8 wherever V8 gives one.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { jsonErrorOffset } from './json-error-place.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-json-slips-');
  cleanups.push(dir.dispose);
  return dir.path;
}
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** V8's offset, where its message gives one. */
function v8Offset(text: string): number | 'valid' | undefined {
  try {
    JSON.parse(text);
    return 'valid';
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message);
    return position === null ? undefined : Number(position[1]);
  }
}

describe('jsonErrorOffset', () => {
  it('is undefined for JSON, a place for anything JSON.parse refuses, V8’s where V8 says one', () => {
    // JSON texts, and the same cut, spliced and corrupted.
    const texts = fc.oneof(
      fc.json(),
      fc
        .tuple(fc.json(), fc.nat(), fc.nat({ max: 4 }), fc.string({ maxLength: 3 }))
        .map(
          ([text, at, cut, insert]) =>
            text.slice(0, at % (text.length + 1)) +
            insert +
            text.slice((at % (text.length + 1)) + cut),
        ),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const offset = jsonErrorOffset(text);
        const v8 = v8Offset(text);
        if (v8 === 'valid') expect(offset).toBeUndefined();
        else {
          expect(offset).toBeTypeOf('number');
          if (v8 !== undefined) expect(offset).toBe(v8);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('follows deep nesting without recursion', () => {
    expect(jsonErrorOffset(`${'['.repeat(200_000)}x`)).toBe(200_000);
    expect(jsonErrorOffset(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toBeUndefined();
  });
});

describe('a settings file with a slip V8 gives no place for', () => {
  it.each([
    [
      '// my settings\n{ "model": "x" }\n',
      'line 1, column 1: a comment, which JSON does not allow',
    ],
    ['/* mine */ { "model": "x" }', 'line 1, column 1: a comment'],
    ['# settings\n{}\n', 'line 1, column 1: a comment'],
    ['model: claude-sonnet-4-6\n', 'line 1, column 1: a JSON file starts with { (or [)'],
    ['{\n  "sandbox": auto\n}\n', 'line 2, column 14: a value without double quotes'],
    ['{\n  "model": "a\nb"\n}\n', 'line 2, column 14: a line break inside a quoted text'],
    [
      '{ "permissions": { "deny": ["bash(rm *)",] } }',
      'column 42: a comma before the closing bracket',
    ],
  ])(
    '%j: the line, the column and the slip',
    async (text, problem) => {
      const home = await scratch();
      await writeFile(join(home, 'settings.json'), text);
      const run = await runCli(['-p', 'hi'], { env: cleanEnv({ AGENT_HOME: home }) });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${join(home, 'settings.json')}: it is not valid JSON (`);
      expect(run.stderr).toContain(problem);
    },
    60_000,
  );

  it('--mcp-config and --resume files say the same', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const file = join(dir, 'named.json');
    await writeFile(file, '// servers\n{ "mcpServers": {} }\n');
    for (const flag of ['--mcp-config', '--resume']) {
      const run = await runCli(['--scripted', script, '--cwd', dir, flag, file, '-p', 'hi'], {
        env: cleanEnv({ AGENT_HOME: join(dir, 'home') }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('it is not valid JSON (line 1, column 1: a comment');
    }
  }, 60_000);
});
