// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax, not templates
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, PermissionPolicy } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { skipWithout } from '@agent/tooling-system-tools';
import { beforeEach, describe, expect, it } from 'vitest';
import { defaultTools } from './default-tools.js';
import { analyzeShellCommand } from './shell-analysis.js';
import { makeTempDir } from './test-helpers.js';

// A substring expansion's offset and length are arithmetic, and so is the subscript of an
// element whose length is taken (`${#a[y]}`): `${HOME:y}` evaluates y, and a y
// holding `a[$(cmd)]` runs cmd — as `$((y))` does, which was already opaque. printf's escapes
// make such a y without a `$(` in the line: `printf -v y '\x61[\x24\x28cmd\x29]'; echo
// "${HOME:y}"` passed for two reading commands and ran cmd unasked in read-only and plan mode.

/** y made by printf's escapes (no `$(` in the line), then evaluated as `${HOME:y}`'s offset. */
const printfOffset = 'printf -v y \'\\x61[\\x24\\x28touch pwned\\x29]\'; echo "${HOME:y}"';

describe('a substring expansion whose offset or length names a variable is opaque', () => {
  it.each([
    'echo ${HOME:y}',
    'echo "${HOME:0:y}"',
    'echo ${HOME: y}',
    'echo ${HOME:1+y}',
    'echo ${HOME:$y}',
    'echo ${@:y}',
    'echo ${1:0:y}',
    'echo ${a[@]:y:1}',
    'echo ${a[0]:y}',
    printfOffset,
  ])('%s', (line) => {
    expect(analyzeShellCommand(line).opaque).toMatch(/arithmetic over variables/);
  });

  it.each(['echo ${#a[y]}', 'echo ${#HOME[y]}', 'echo "${#a[$i]}"', '[ "${#a[y]}" -eq 0 ]'])(
    '%s (the length of an element whose subscript names a variable) is opaque',
    (line) => {
      expect(analyzeShellCommand(line).opaque).toBe('an array subscript');
    },
  );

  it.each([
    'echo ${#a[0]}',
    'echo ${#a[@]}',
    'echo ${#HOME}',
    'echo ${HOME:-y}',
    'echo ${name:=y}',
    'echo ${HOME:+y}',
    'echo ${HOME:?y}',
    'echo ${HOME:1:2}',
    'echo ${HOME: -3}',
    'echo ${HOME:0:-1}',
    'echo ${HOME}',
  ])('%s is not', (line) => {
    expect(analyzeShellCommand(line).opaque).toBeUndefined();
  });
});

describe('in read-only mode, through the real loop, bash tool and sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  it.each([
    printfOffset,
    // `${#HOME[y]}`: the subscript of a set variable is evaluated when its length is taken.
    'printf -v y \'\\x61[\\x24\\x28touch pwned\\x29]\'; echo "${#HOME[y]}"',
  ])('%s is asked (denied without an approver), and runs nothing', async (line) => {
    const dir = makeTempDir();
    const agent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'bash', arguments: { command: line } }] },
        { text: 'done' },
      ]),
      model: 'scripted',
      tools: defaultTools({ cwd: dir, bash: { sandbox: 'required' } }),
      permissionGate: new PermissionPolicy({ mode: 'read-only' }).gate,
    });
    const result = await agent.run('go').result;
    const message = result.messages.find((entry) => entry.role === 'toolResult');
    expect(message?.role === 'toolResult' ? message.errorKind : 'none').toBe('denied');
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });
});
