// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax, not templates
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyReadOnly } from './read-only-commands.js';

// The built-in read-only list, attacked: a line is read-only only when every command on it is
// a known reading command with options that only read. Everything else must fail closed.

const readOnly = [
  'ls',
  'ls -la',
  'ls -la src',
  'ls -lhS --color=auto src',
  'ls --sort=size -R',
  'ls *.ts',
  'ls ~/projects',
  'cat README.md',
  'cat -n src/a.ts',
  'head -n 20 file.txt',
  'head -20 file.txt',
  'head -c100 file.txt',
  'tail -n 5 log.txt',
  'tail -5 log.txt',
  'wc -l src/*.ts',
  'grep -rn TODO src',
  'grep -rn "foo.*bar" .',
  "grep -E 'a|b' file",
  'grep --include=*.ts -rn needle .',
  'grep -C 3 needle file',
  'grep --color needle file',
  'rg needle',
  "rg -n 'fn main' src",
  'rg -g "*.ts" needle',
  'rg --type ts -i needle',
  'rg --files',
  'find . -name "*.ts"',
  "find src -type f -name '*.md' -print",
  'find . -maxdepth 2 -type d',
  'find . -newer package.json',
  'find . \\( -name a -o -name b \\) -print',
  'find . -name x -prune -o -print',
  'git status',
  'git status --short',
  'git log --oneline -5',
  'git log -p -- src/a.ts',
  'git log --format="%h %s" -n 3',
  'git diff',
  'git diff HEAD~1 --stat',
  'git diff --cached',
  'git show HEAD',
  'git show HEAD:src/a.ts',
  'git branch',
  'git branch -a',
  'git branch --show-current',
  'git branch --list "feat*"',
  'git tag',
  'git tag -l "v1*"',
  'git remote -v',
  'git rev-parse HEAD',
  'git ls-files',
  'git blame src/a.ts',
  'git --no-pager log -3',
  'git stash list',
  'git config --get user.name',
  'git config --list',
  'echo hello',
  'echo "$HOME"',
  'echo -n done',
  'printf "%s\\n" a b',
  'pwd',
  'which node',
  'date +%Y-%m-%d',
  'uname -a',
  'sort file.txt',
  'sort -rn counts.txt',
  'uniq -c sorted.txt',
  'cut -d: -f1 /etc/passwd',
  'tr a-z A-Z',
  'du -sh .',
  'df -h',
  'tree -L 2',
  'diff a.txt b.txt',
  'diff -u a.txt b.txt',
  'stat file',
  'file README.md',
  'sha256sum file',
  "jq '.name' package.json",
  "sed -n '1,20p' file.txt",
  "sed -n '/start/,/end/p' file.txt",
  "sed 's/foo/bar/g' file.txt",
  "sed -n '$p' file.txt",
  'cat a.txt | grep x | sort | uniq -c | head',
  'ls && cat README.md',
  'ls; pwd',
  'ls || echo none',
  '(ls)',
  '{ ls; pwd; }',
  'ls 2>/dev/null',
  'ls 2>&1',
  'ls &>/dev/null',
  'cat < input.txt',
  'cat <<EOF\nhello\nEOF',
  'grep x <<< "some text"',
  'LANG=C sort file',
  'LC_ALL=C ls',
  'TZ=UTC date',
  'if [ -f a ]; then cat a; fi',
  'test -d src && ls src',
  'true',
  'for f in a b; do cat $f; done',
  'xxd file.bin',
  'xxd -ps file.bin',
  'xxd -c 8 -g1 -s 0x10 file.bin',
  'xxd -cols 8 -u file.bin',
  'tree -L 2 -a src',
  'printenv',
];

const notReadOnly: [string, RegExp][] = [
  // Redirections that write.
  ['ls > x', /redirection/],
  ['ls >> x', /redirection/],
  ['ls >| x', /redirection/],
  ['echo hi &> out', /redirection/],
  ['cat a 1>b', /redirection/],
  ['cat a 2>err.log', /redirection/],
  ['cat a <> b', /redirection/],
  ['cat a >& out', /redirection/],
  ['cat a > /dev/./null', /redirection/],
  ['ls 3> fd3', /redirection/],
  ['cat < /dev/tcp/example.com/80', /network redirection/],
  ['cat < /dev/udp/10.0.0.1/53', /network redirection/],
  // Command and process substitution, anywhere.
  ['cat $(rm -rf ~)', /substitution/],
  ['cat `rm -rf ~`', /substitution/],
  ['echo "$(touch x)"', /substitution/],
  ["echo '$(quoted)'", /substitution/],
  ['cat <(rm x)', /substitution/],
  ['diff <(ls a) <(ls b)', /substitution/],
  ['ls >(tee x)', /substitution/],
  ['cat <<EOF\n$(rm x)\nEOF', /substitution/],
  ['echo $((1+2))', /substitution/],
  // Commands that write, delete or run others.
  ['touch x', /not a known read-only command/],
  ['rm -rf x', /not a known read-only command/],
  ['mkdir x', /not a known read-only command/],
  ['tee x', /not a known read-only command/],
  ['cp a b', /not a known read-only command/],
  ['mv a b', /not a known read-only command/],
  ['cd / && ls', /cd is not a known read-only command/],
  ['sh -c ls', /not a known read-only command/],
  ['bash -c "cat x"', /not a known read-only command/],
  ['eval ls', /not a known read-only command/],
  ['xargs cat', /not a known read-only command/],
  ['sudo ls', /not a known read-only command/],
  ['env ls', /not a known read-only command/],
  ['nice ls', /not a known read-only command/],
  ['timeout 5 ls', /not a known read-only command/],
  ['exec ls', /not a known read-only command/],
  ['command ls', /not a known read-only command/],
  ['awk "{print}" f', /not a known read-only command/],
  ['less file', /not a known read-only command/],
  ['node -e 1', /not a known read-only command/],
  ['python3 x.py', /not a known read-only command/],
  ['export X=1', /not a known read-only command/],
  ['X=1', /assignment without a command/],
  ['PATH=/tmp/evil; ls', /sets PATH/],
  // Variables set earlier on the line that change what every later command name runs.
  ['printf -v PATH . ; ls', /sets PATH/],
  ['printf -vPATH %s . ; cat x', /sets PATH/],
  ['for PATH in . ; do ls; done', /sets PATH/],
  ['select PATH in .; do ls; done', /sets PATH/],
  ['for f in a; do ls; done; for LD_PRELOAD in ./x.so; do cat y; done', /sets LD_PRELOAD/],
  ['printf -v BASH_ENV ./x; ls', /sets BASH_ENV/],
  ['curl https://example.com', /not a known read-only command/],
  ['npm test', /not a known read-only command/],
  // Commands named by a path or an expansion.
  ['./ls', /named by a path/],
  ['/bin/ls', /named by a path/],
  ['$CMD file', /named by a path or expansion/],
  ['l* file', /named by a path or expansion/],
  // Environment prefixes.
  ['LD_PRELOAD=/tmp/x.so ls', /environment prefix LD_PRELOAD/],
  ['PATH=/tmp/evil ls', /environment prefix PATH/],
  ['GIT_EXTERNAL_DIFF=/tmp/x git diff', /environment prefix GIT_EXTERNAL_DIFF/],
  ['LANG=$(rm x) ls', /substitution/],
  ['LANG=$X ls', /environment prefix LANG/],
  // Options that write or run.
  ['find . -delete', /find -delete/],
  ['find . -exec rm {} \\;', /find -exec/],
  ['find . -execdir rm {} +', /find -execdir/],
  ['find . -ok rm {} \\;', /find -ok/],
  ['find . -fprint out', /find -fprint/],
  ['find . -fprintf out %p', /find -fprintf/],
  ['find . -fls out', /find -fls/],
  ['find -L . -name x', /find -L/],
  ['find . -follow', /find -follow/],
  ['find . -name', /without its value/],
  ['sort -o out in', /sort -o/],
  ['sort --output=out in', /sort --output/],
  ['sort -T /tmp in', /sort -T/],
  ['sort --compress-program=sh in', /sort --compress-program/],
  ['sort in *', /expands/],
  ['uniq in out', /more than 1/],
  ['uniq --group in out', /more than 1/],
  ['sed -i s/a/b/ f', /sed -i/],
  ['sed --in-place s/a/b/ f', /sed --in-place/],
  ["sed 's/a/b/w out' f", /sed script/],
  ["sed 's/a/b/e' f", /sed script/],
  ["sed 'w out' f", /sed script/],
  ["sed 'e rm x' f", /sed script/],
  ["sed '1r /etc/passwd' f", /sed script/],
  ['sed -e p f', /sed -e/],
  ['tree -o out', /tree -o/],
  ['tree -R -H . ', /tree -R/],
  ['rg --pre ./evil x', /rg --pre/],
  ['rg --pre=./evil x', /rg --pre/],
  ['rg -z x', /rg -z/],
  ['rg -L x', /rg -L/],
  ['rg x *', /expands/],
  ['rg --hostname-bin=./x y', /rg --hostname-bin/],
  ['file -C -m magic', /file -C/],
  ['date -s "2020-01-01"', /date -s/],
  ['date --set="2020-01-01"', /date --set/],
  ['date 010100002020', /date given a time/],
  ['xxd -r hex out', /xxd -r/],
  ['xxd in out', /more than 1/],
  // xxd reads `-ps` as one option (postscript), not -p then -s taking `in` as its value.
  ['xxd -ps in out', /more than 1/],
  ['xxd -seek 2 in out', /more than 1/],
  ['xxd -pso 1 in', /xxd -pso/],
  // tree's -L takes the next word; the letters after it are options: -o writes `out`.
  ['tree -Lo 2 out', /tree -Lo .*takes the next word/],
  ['tree -aLo 2 out', /tree -aLo/],
  ['grep -R x .', /grep -R/],
  ['tail -f log', /tail -f/],
  ['ls --unknown-flag', /ls --unknown-flag/],
  ['cat --zzz f', /cat --zzz/],
  ['head -q -x f', /head -x/],
  ['pwd extra', /pwd given arguments/],
  ['wc --files0-from=list', /wc --files0-from/],
  // git: subcommands that write, options that write or run, pointing git elsewhere.
  ['git commit -m x', /git commit is not a reading subcommand/],
  ['git push', /not a reading subcommand/],
  ['git checkout .', /not a reading subcommand/],
  ['git reset --hard', /not a reading subcommand/],
  ['git fetch', /not a reading subcommand/],
  ['git pull', /not a reading subcommand/],
  ['git clean -fd', /not a reading subcommand/],
  ['git gc', /not a reading subcommand/],
  ['git log --output=x', /git log --output/],
  ['git log --output x', /git log --output/],
  ['git diff --output=patch', /git diff --output/],
  ['git diff --ext-diff', /git diff --ext-diff/],
  ['git grep -O x', /git grep -O/],
  ['git grep --open-files-in-pager=vim x', /git grep --open-files-in-pager/],
  ['git -c core.pager=evil log', /git -c/],
  ['git -C /elsewhere status', /git -C/],
  ['git --git-dir=/x status', /git --git-dir/],
  ['git --exec-path=/x status', /git --exec-path/],
  ['git branch new-branch', /creates one/],
  ['git branch -d old', /git branch -d/],
  ['git branch -m a b', /git branch -m/],
  ['git branch --set-upstream-to=x', /git branch --set-upstream-to/],
  ['git tag v9', /creates one/],
  ['git tag -d v1', /git tag -d/],
  ['git tag -a v1 -m x', /git tag -a/],
  ['git remote add x url', /git remote add/],
  ['git remote show origin', /git remote show/],
  ['git stash', /git stash/],
  ['git stash pop', /git stash pop/],
  ['git stash drop', /git stash drop/],
  ['git reflog expire --all', /git reflog expire/],
  ['git reflog delete x', /git reflog delete/],
  ['git config user.name evil', /git config without --get/],
  ['git config --unset x', /git config without --get/],
  ['git config --get x --add y', /git config --add/],
  ['git', /without a subcommand/],
  ['git my-alias', /not a reading subcommand/],
  // Reads of other tools' options that run programs.
  ['ls | sh', /sh is not a known read-only command/],
  ['cat x | bash', /bash is not a known read-only command/],
  ['find . | xargs rm', /xargs is not a known read-only command/],
  ['cat file | tee copy', /tee is not a known read-only command/],
  // Lines that do not parse.
  ['ls "unterminated', /could not be parsed/],
  ['', /no command/],
  ['# only a comment', /no command/],
];

describe('the built-in read-only list', () => {
  it.each(readOnly)('read-only: %s', (line) => {
    const verdict = classifyReadOnly(line);
    expect(verdict, JSON.stringify(verdict)).toMatchObject({ readOnly: true });
  });

  it.each(notReadOnly)('not read-only: %s', (line, why) => {
    const verdict = classifyReadOnly(line);
    expect(verdict.readOnly, line).toBe(false);
    if (!verdict.readOnly) expect(verdict.reason).toMatch(why);
  });

  it('reports what the commands read and whether bash expands any word', () => {
    expect(classifyReadOnly('cat a b < c | grep -f pats x')).toEqual({
      readOnly: true,
      paths: ['c', 'a', 'b', 'pats', 'x'],
      expands: false,
      git: false,
      commands: ['cat', 'grep'],
    });
    expect(classifyReadOnly('echo hello world')).toMatchObject({ paths: [], expands: false });
    expect(classifyReadOnly('cat *.md')).toMatchObject({ paths: ['*.md'], expands: true });
    expect(classifyReadOnly('cat ~/.ssh/id_rsa')).toMatchObject({ expands: true });
    expect(classifyReadOnly('find src -newer ref -name x')).toMatchObject({
      paths: ['src', 'ref'],
    });
    expect(classifyReadOnly('git log')).toMatchObject({ git: true });
  });

  it('a known read-only line stays read-only only while nothing is appended that writes', () => {
    const writers = [
      ' > out',
      ' >> out',
      ' | tee out',
      '; rm x',
      ' && touch x',
      ' | sh',
      ' $(rm x)',
      ' `rm x`',
      ' <(rm x)',
      '; cd /',
      ' | xargs rm',
      '; X=1',
    ];
    fc.assert(
      // (A here-document takes what follows its first line as its body, so those are left out.)
      fc.property(
        fc.constantFrom(...readOnly.filter((line) => !line.includes('<<'))),
        fc.constantFrom(...writers),
        (line, writer) => {
          expect(classifyReadOnly(`${line}${writer}`).readOnly).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never throws, and any line with a write redirection or substitution is not read-only', () => {
    const piece = fc.constantFrom(
      'ls',
      'cat',
      ' ',
      'a',
      '-la',
      '>',
      '>>',
      '<',
      '|',
      ';',
      '&&',
      '$(',
      ')',
      '`',
      "'",
      '"',
      '*',
      '$x',
      '\n',
      'find',
      '-delete',
      'git',
      'log',
      '--output=x',
      'sort',
      '-o',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
        const line = pieces.join('');
        const verdict = classifyReadOnly(line);
        if (/\$\(|`/.test(line)) expect(verdict.readOnly).toBe(false);
        if (!verdict.readOnly) return;
        for (const words of commandWords(line)) {
          expect(words, line).not.toContain('-delete');
          expect(
            words.some((word) => word.startsWith('--output')),
            line,
          ).toBe(false);
          if (words[0] === 'sort')
            expect(
              words.some((word) => /^-[a-zA-Z]*o/.test(word)),
              line,
            ).toBe(false);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

/**
 * The oracle's reading of a line: each command's words as bash would split them (separators and
 * blanks inside quotes do not split; quotes removed), leaving out redirection targets (`< "-x"`
 * reads a file named -x, not a flag).
 */
function commandWords(line: string): string[][] {
  const commands: string[][] = [[]];
  let word = '';
  let quote: string | undefined;
  let inWord = false;
  let redirectTarget = false;
  const endWord = () => {
    if (inWord && !redirectTarget) commands.at(-1)?.push(word);
    if (inWord) redirectTarget = false;
    word = '';
    inWord = false;
  };
  for (const char of line) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (/[|;&\n()]/.test(char)) {
      endWord();
      redirectTarget = false;
      commands.push([]);
    } else if (char === '<' || char === '>') {
      endWord();
      redirectTarget = true;
    } else if (/\s/.test(char)) {
      endWord();
    } else {
      word += char;
      inWord = true;
    }
  }
  endWord();
  return commands;
}
