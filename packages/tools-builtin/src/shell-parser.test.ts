// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax, not templates
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyReadOnly } from './read-only-commands.js';
import { analyzeShellCommand, shellPermissionSubjects } from './shell-analysis.js';
import { parseShellCommand } from './shell-parser.js';

describe('shellPermissionSubjects', () => {
  it.each([
    ['ls && rm x', ['ls', 'rm x']],
    ['ls; rm x', ['ls', 'rm x']],
    ['ls || rm x', ['ls', 'rm x']],
    ['ls | sh', ['ls', 'sh']], // opaque: sh reads its commands from stdin
    ['echo $(git commit)', ['git commit', 'echo $(git commit)']],
    ['$(git commit)', ['git commit', '$(git commit)']],
    ['`rm x`', ['rm x', '`rm x`']],
    ['bash -c "rm x"', ['bash -c rm x', 'rm x']],
    ["sh -lc 'rm -rf / && echo ok'", ['sh -lc rm -rf / && echo ok', 'rm -rf /', 'echo ok']],
    ['eval "rm x"', ['eval rm x', 'rm x']],
    ['git -C . commit -m msg', ['git -C . commit -m msg', 'git commit -m msg']],
    ['echo hi > ~/.bashrc', ['echo hi', '> ~/.bashrc']],
    ['cat < in.txt >> out.txt 2>&1', ['cat', '< in.txt', '>> out.txt']],
    ['echo hi 2>/dev/null', ['echo hi']],
    ['X=1 rm x', ['rm x', 'X=1 rm x']],
    ['X=1 Y="a b" rm x', ['rm x', 'X=1 Y="a b" rm x']],
    ['(cd sub && rm y)', ['cd sub', 'rm y']],
    ['{ ls; rm z; }', ['ls', 'rm z']],
    ['if grep -q a f; then rm f; else touch f; fi', ['grep -q a f', 'rm f', 'touch f']],
    ['for f in $(ls); do rm "$f"; done', ['ls', 'rm $f']],
    ['while true; do curl x; done', ['true', 'curl x']],
    ['case $x in a|b) rm a ;; *) ls ;; esac', ['rm a', 'ls']],
    ['diff <(sort a) <(sort b)', ['sort a', 'sort b', 'diff <(sort a) <(sort b)']],
    ['echo "$(rm -rf x)"', ['rm -rf x', 'echo $(rm -rf x)']],
    ["echo '$(rm x)'", ['echo $(rm x)']],
    ['sudo -u root rm x', ['sudo -u root rm x', 'rm x']],
    ['find . -name "*.o" -exec rm {} \\;', ['find . -name *.o -exec rm {} ;', 'rm {}']],
    ['ls | xargs -n1 rm', ['ls', 'xargs -n1 rm', 'rm']],
    ['timeout 5 env A=1 rm x', ['timeout 5 env A=1 rm x', 'env A=1 rm x', 'rm x']],
    ['sleep 1 & rm x', ['sleep 1', 'rm x']],
    ['echo a\\\nb', ['echo ab']],
    ['cat <<EOF\nhello $(rm x)\nEOF\nls', ['cat', 'rm x', 'ls']],
    ["cat <<'EOF'\nhello $(rm x)\nEOF", ['cat']],
    ['f() { rm x; }; f', ['rm x', 'f']],
    ['[[ -f a && -f b ]] && rm a', ['[[ -f a -f b ]]', 'rm a']],
    ['echo ${x:-$(rm y)}', ['rm y', 'echo ${x:-$(rm y)}']],
    ['ls # && rm x', ['ls']],
    ['echo $((1 + $(rm x)))', ['rm x', 'echo $((1 + $(rm x)))']],
  ])('%j', (line, expected) => {
    expect(shellPermissionSubjects(line)).toEqual(expected);
  });

  it('a line that does not parse cleanly is opaque (asked, never allowed by a rule)', () => {
    expect(analyzeShellCommand('echo "unterminated; rm x').opaque).toMatch(/could not be parsed/);
    expect(parseShellCommand('echo "unterminated').errors.length).toBeGreaterThan(0);
  });

  it('nesting too deep to follow is opaque', () => {
    const deep = `echo ${'$('.repeat(20)}rm x${')'.repeat(20)}`;
    expect(analyzeShellCommand(deep).opaque).toMatch(/nesting too deep/);
  });

  it('keeps assignments and redirect details in the parse', () => {
    const parsed = parseShellCommand('A=1 B=2 cmd arg 2>err.log');
    expect(parsed.commands).toEqual([
      {
        words: ['cmd', 'arg'],
        assignments: ['A=1', 'B=2'],
        redirects: [{ operator: '>', fd: 2, target: 'err.log' }],
        expanding: [false, false],
      },
    ]);
  });

  it.each([
    ['ls *.ts', [false, true]],
    ["ls '*.ts'", [false, false]],
    ['ls "*.ts"', [false, false]],
    ['ls \\*.ts', [false, false]],
    ['ls ?.ts', [false, true]],
    ['ls [ab].ts', [false, true]],
    ['ls ~/x', [false, true]],
    ["ls '~/x'", [false, false]],
    ['ls {a,b}', [false, true]],
    ['ls {a..c}', [false, true]],
    ['ls {a}', [false, false]],
    ['git show stash@{0}', [false, false, false]],
    ['cat $f', [false, true]],
    ['cat "$f"', [false, true]],
    ["cat '$f'", [false, false]],
    ['cat "cost: 5$"', [false, false]],
    ['cat $(ls)', [false, true]],
    ['cat `ls`', [false, true]],
    ['cat "x$(ls)y"', [false, true]],
    ['cat <(ls)', [false, true]],
    ["cat $'a\\tb'", [false, false]],
    ['echo $((1+2))', [false, true]],
    ['echo ${x:-y}', [false, true]],
  ])('knows which words bash expands: %s', (line, expanding) => {
    // Commands inside a substitution are found (and listed) before the one they are part of.
    const name = line.split(' ')[0];
    const command = parseShellCommand(line).commands.find((found) => found.words[0] === name);
    expect(command?.expanding).toEqual(expanding);
  });

  it('marks the words of commands inside a substitution on their own', () => {
    const { commands } = parseShellCommand('echo "$(ls *.md) done" plain');
    expect(commands.map((command) => [command.words, command.expanding])).toEqual([
      [
        ['ls', '*.md'],
        [false, true],
      ],
      [
        ['echo', '$(ls *.md) done', 'plain'],
        [false, true, false],
      ],
    ]);
  });

  it('never throws and always returns strings, on any input (property)', () => {
    const shellish = fc
      .array(
        fc.constantFrom(
          ...'ab $()`\'"\\;&|<>{}[]#=\n\t-c'.split(''),
          'bash -c ',
          'eval ',
          '$(',
          '<<EOF\n',
          'EOF\n',
          'case ',
          ' in ',
          'esac',
          ';;',
          '((',
          '))',
          // Names an object-keyed table would find on Object.prototype.
          'constructor ',
          'valueOf ',
          '__proto__ ',
        ),
        { maxLength: 80 },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), shellish), (input) => {
        const subjects = shellPermissionSubjects(input);
        expect(Array.isArray(subjects)).toBe(true);
        for (const subject of subjects) expect(typeof subject).toBe('string');
        // Something is always reported for a non-blank line, so an empty allow-list can't be bypassed.
        if (input.trim() !== '') expect(subjects.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('survives deep nesting without blowing the stack', () => {
    const deep = `${'$('.repeat(5000)}rm x${')'.repeat(5000)}`;
    expect(() => shellPermissionSubjects(deep)).not.toThrow();
    const parens = `${'( '.repeat(20000)}rm x${' )'.repeat(20000)}`;
    expect(shellPermissionSubjects(parens).length).toBeGreaterThan(0);
  });
});

describe('command names that are also Object.prototype properties', () => {
  // The per-program tables are objects: a lookup by a command's name must not reach the
  // prototype (`valueOf ?` once threw "runsCommand.test is not a function").
  const names = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];
  const lines = names.flatMap((name) => [
    `${name} ?`,
    `${name} -x -e foo`,
    `${name} exec rm -rf /`,
    `env ${name} run ls`,
    `sudo ${name} --to-command=sh`,
  ]);
  it.each(lines)('%s is a command like any other', (line) => {
    const analysis = analyzeShellCommand(line);
    expect(analysis.subjects.length).toBeGreaterThan(0);
    for (const subject of analysis.subjects) expect(typeof subject).toBe('string');
    expect(classifyReadOnly(line).readOnly).toBe(false);
  });
});

describe('analyzeShellCommand: options that run commands are judged per program', () => {
  it.each([
    ['grep -e foo -I file', false],
    ['git status -u', false],
    ['rsync -e "ssh -p 2" a b', true],
    ['tar -I "sh -c evil" -xf a.tar', true],
    ['tar --to-command=sh -xf a.tar', true],
    ['git rebase --exec "make test" main', true],
    ['git rebase -x make main', true],
    ['fd -x rm', true],
    ['rg --pre ./evil pattern', true],
  ])('%s → opaque: %s', (line, opaque) => {
    expect(analyzeShellCommand(line).opaque !== undefined).toBe(opaque);
  });
});
