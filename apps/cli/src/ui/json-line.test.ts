// stream-json and json output are watched on terminals and in log viewers: JSON.stringify wrote
// the C1 controls (an 8-bit CSI, NEL), DEL, the bidirectional controls and the line separators of
// a model's text as they were. Each must arrive escaped, and parse back to the same text.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { jsonLine } from './json-line.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const text =
  'csi \u009b2J nel \u0085 del \u007f rlo \u202egnp.exe pdi \u2069 ls \u2028 ps \u2029 alm \u061c end';

/** The characters of `output` that JSON.stringify leaves raw and a terminal may act on. */
function raw(output: string): string[] {
  return [...output]
    .map((char) => char.charCodeAt(0))
    .filter(
      (code) =>
        (code >= 0x7f && code <= 0x9f) ||
        code === 0x061c ||
        (code >= 0x2028 && code <= 0x202e) ||
        (code >= 0x2066 && code <= 0x2069),
    )
    .map((code) => `U+${code.toString(16)}`);
}

describe('JSON output holds no character a terminal acts on', () => {
  it('jsonLine escapes them and parses back to the same value', () => {
    const line = jsonLine({ text });
    expect(raw(line)).toEqual([]);
    expect(JSON.parse(line)).toEqual({ text });
  });

  it.each(['stream-json', 'json'])('--output-format %s', async (format) => {
    const dir = await tempDir('agent-cli-json-line-');
    cleanups.push(dir.dispose);
    const script = await writeScript(dir.path, [{ text }]);
    const run = await runCli(['-p', 'hi', '--scripted', script, '--output-format', format], {
      cwd: dir.path,
      env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(raw(run.stdout)).toEqual([]);
    expect(run.stdout).toContain('\\u009b2J');
    for (const line of run.stdout.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });
});
