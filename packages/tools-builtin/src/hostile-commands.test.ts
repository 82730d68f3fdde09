/**
 * Regular expressions that read what the model writes (a command line, a sed or awk script), what
 * a command prints, and a repository's `.git` file, each against the input that made JavaScript's
 * engine backtrack for seconds to hours (a sed script of 100 characters: 40 s) on the thread that
 * must notice an abort. A test here that hangs is the failure; each also checks the answer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutNotice } from './bash-output-format.js';
import { classifyReadOnly } from './read-only-commands.js';
import { gitConfigRefusal } from './read-only-git.js';
import { analyzeShellCommand } from './shell-analysis.js';
import { makeTempDir } from './test-helpers.js';
import { awsOptionName } from './use-aws.js';

describe('a sed script', () => {
  it('of many blank-separated commands is classified at once (exponential before)', () => {
    const hostile = `$${'\r=;$'.repeat(40)}\u0000`;
    expect(classifyReadOnly(`sed -n '${hostile}' a.txt`)).toMatchObject({ readOnly: false });
  });

  it.each([
    ['p', true],
    ['1,$p', true],
    [' 2 , /x\\/y/ ! s/a/b/g ; $d ;', true],
    ['/x/ d;p', true],
    ['p; ', false],
    ['s/a/b/w out', false],
    ['s/a/b/e', false],
    ['1e date', false],
    ['p;;', false],
  ])('%j read-only: %s', (script, readOnly) => {
    expect(classifyReadOnly(`sed -n '${script}' a.txt`).readOnly).toBe(readOnly);
  });

  it('that runs a command is opaque, also after 100,000 newlines', () => {
    expect(analyzeShellCommand(`sed '}${'\n'.repeat(100_000)}' a`).opaque).toBeUndefined();
    expect(analyzeShellCommand(`sed '}${'\n'.repeat(100_000)}e date' a`).opaque).toBe(
      'sed runs a command (e)',
    );
    expect(analyzeShellCommand("sed 's/a/b/e' a").opaque).toBe('sed runs a command (e)');
  });
});

/** What an analysis found beyond the line itself (its first subject). */
const found = (source: string) => {
  const { subjects, opaque } = analyzeShellCommand(source);
  return { opaque, nested: subjects.slice(1) };
};

describe('shell analysis of a long command line', () => {
  it('arithmetic: 200,000 $[ without a ]', () => {
    expect(analyzeShellCommand(`echo ${'$['.repeat(200_000)}`).opaque).toBeUndefined();
    expect(analyzeShellCommand('echo $[x+1]').opaque).toBeDefined();
    expect(analyzeShellCommand('echo $((1+2))').opaque).toBeUndefined();
    expect(analyzeShellCommand('echo $((y+2))').opaque).toBeDefined();
  });

  it('[[ … -eq … ]]: 50,000 [[ without a ]]', () => {
    expect(analyzeShellCommand(`echo '${'t[['.repeat(50_000)}t'`).opaque).toBeUndefined();
    expect(analyzeShellCommand(`echo '${'[['.repeat(50_000)}][[$'`).opaque).toBeUndefined();
    expect(analyzeShellCommand('[[ $x -eq 1 ]] && ls').opaque).toBeDefined();
  });

  it('an assignment with a subscript of 100,000 [', () => {
    expect(found(`A[${'['.repeat(100_000)}=1 ls`)).toEqual(found('A[[[=1 ls'));
    expect(analyzeShellCommand('a[$i]=1 ls').opaque).toBe('an array subscript');
    expect(analyzeShellCommand('a[1]=1 ls').opaque).toBeUndefined();
  });

  it('awk: a program of 60,000 getlineprint', () => {
    expect(
      analyzeShellCommand(`awk '${'getlineprint'.repeat(60_000)}getline' f`).opaque,
    ).toBeUndefined();
    expect(analyzeShellCommand(`awk '${'getlineprint'.repeat(10_000)}|' f`).opaque).toBe(
      'awk runs a command',
    );
    expect(analyzeShellCommand(`awk '${'printx'.repeat(20_000)}' f`).opaque).toBeUndefined();
    expect(analyzeShellCommand('awk \'{ print $1 | "sh" }\' f').opaque).toBe('awk runs a command');
  });

  it('bash -ccc… and env -SSS… with 100,000 letters', () => {
    expect(found(`bash -${'c'.repeat(100_000)}x 'rm -rf a'`)).toEqual(found("bash -cx 'rm -rf a'"));
    expect(found("bash -cx 'rm -rf a'").nested).toEqual(['rm -rf a']);
    expect(found(`bash -${'c'.repeat(100_000)}\u0000 'rm -rf a'`)).toEqual(
      found("bash -c\u0000 'rm -rf a'"),
    );
    const letters = `-${'S'.repeat(100_000)}`;
    expect(found(`env ${letters}'ls -l'`)).toEqual(found("env -S'ls -l'"));
    expect(found(`env ${letters}'ls -l\n'`)).toEqual(found("env -S'ls -l\n'"));
    expect(analyzeShellCommand("bash -c 'rm -rf a'").subjects).toContain('rm -rf a');
    expect(analyzeShellCommand("env -iS'rm -rf a'").subjects).toContain('rm -rf a');
  });
});

describe('output and files', () => {
  it('the truncation notice is taken out of output that repeats its opening 30,000 times', () => {
    const forged = `${'...][... , bytes omitted of ,; m'.repeat(30_000)}...]`;
    expect(withoutNotice(forged)).toBe(forged);
    const text =
      'head\n\n[... 1,024 bytes omitted of 2,048; full output saved to /tmp/x ...]\n\ntail';
    expect(withoutNotice(text)).toBe('head\n\n\n\ntail');
  });

  it("a .git file's gitdir line after 100,000 blanks", async () => {
    const work = makeTempDir();
    const refusal = async (text: string) => {
      fs.writeFileSync(path.join(work, '.git'), text);
      return gitConfigRefusal(work);
    };
    expect(await refusal(`gitdir: ${'\t'.repeat(100_000)}elsewhere \t\n`)).toBe(
      await refusal('gitdir: elsewhere\n'),
    );
    expect(await refusal(`gitdir:r${'\t'.repeat(100_000)}i\n`)).toContain('\t'.repeat(100_000));
    expect(await refusal(`gitdir:${'\t'.repeat(100_000)}\n`)).toBe(
      'a .git file that does not name its git directory',
    );
  });

  it('AWS option names split at capitals in a run of 200,000', () => {
    expect(awsOptionName(`${'A'.repeat(200_000)}\u0000AAa`)).toBe(
      `${'a'.repeat(200_000)}\u0000a-aa`,
    );
    expect(awsOptionName(`${'A'.repeat(100_000)}Bc`)).toBe(`${'a'.repeat(100_000)}-bc`);
    expect(awsOptionName('DBInstanceIdentifier')).toBe('db-instance-identifier');
  });
});
