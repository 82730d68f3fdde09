import { anyButLineEnd, linearPattern, spaceClass } from './linear-pattern.js';
import { gitReadOnlyRefusal } from './read-only-git.js';
import { boundVariables } from './shell-analysis.js';
import { changesWhatRuns } from './shell-command.js';
import { fileRedirects, parseShellCommand, type ShellCommand } from './shell-parser.js';

/**
 * The built-in list of commands that only read (Claude Code keeps one too), each with the options
 * it may be given: an option not listed — one that could write (`sort -o`, `sed -i`,
 * `tree -o`), run something (`find -exec`, `rg --pre`) or that this list simply does not know —
 * makes the line ask. Only a line made of these commands alone runs in `read-only` mode.
 */
interface CommandSpec {
  /** Short options without a value, as letters (`-la` is `l` and `a`). */
  short?: string;
  /** Short options that take a value, attached (`-n5`) or as the next word. */
  shortValued?: string;
  /**
   * Short options whose value is optional, so only attached (`od -w8`): a bare `-w` takes none,
   * and the next word is a file it reads — not a value to pass unchecked (`od -c -w /elsewhere`).
   */
  shortOptional?: string;
  /** Long options without a value, space-separated, without the dashes. */
  long?: string;
  /**
   * Long options that take a value (`--sort=size` or `--sort size`); one ending in `?` takes it
   * only after `=` (`--color`, `--color=auto`), as GNU tools read optional values.
   */
  longValued?: string;
  /** Options (letters or long names) whose value is a path the command reads (`grep -f FILE`). */
  pathValued?: string;
  /** `-5` (a count) is an option. */
  numeric?: boolean;
  /** What the other words are: paths (the default), free text, or nothing allowed. */
  positional?: 'paths' | 'text' | 'none';
  /** At most this many positional words (`uniq in out` writes `out`). */
  maxPositional?: number;
  /**
   * A valued short option takes the next word, never the rest of its own, and the letters after
   * it are more options (tree: `-Lo 2 out` is `-L 2 -o out`, which writes `out`). Such a letter
   * anywhere but last in its word is refused.
   */
  separateValues?: boolean;
  /**
   * No option of the command (listed here or not) writes or runs anything, so a word bash expands
   * (`*`, `$x`) is harmless even if it turns into an option. Other commands ask for such words.
   */
  inert?: boolean;
  /** A check of its own after the options (a sed script, a date format). */
  check?: (positional: readonly string[]) => string | undefined;
  /** Parses the whole argument list itself (find's expressions, git's subcommands). */
  parse?: (args: readonly string[]) => ParsedArguments | string;
}

/** What a read-only command reads, once its arguments checked out. */
interface ParsedArguments {
  /** Words read as paths (positional paths and path-valued options). */
  paths: string[];
}

/** What {@link parseBySpec} found: the positional words and the values of path options. */
interface SpecArguments {
  positional: string[];
  optionPaths: string[];
}

const grepLong =
  'extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case invert-match word-regexp line-regexp count files-with-matches files-without-match only-matching quiet silent no-messages byte-offset with-filename no-filename line-number initial-tab null null-data recursive text';
const grepLongValued =
  'regexp file max-count after-context before-context context include exclude exclude-dir exclude-from color? colour? label binary-files directories devices';
const hashSums: CommandSpec = {
  short: 'bctwz',
  long: 'binary check tag text quiet status strict warn zero ignore-missing',
  inert: true,
};
const text: CommandSpec = { positional: 'text', inert: true };
// Commands `;`-separated, each with up to two addresses. On RE2: its many ways to share out
// blanks between `\s*`s made JavaScript's engine exponential (100 characters: 40 s).
const sedScript = (() => {
  const s = `[${spaceClass}]*`;
  const inRegex = `(?:[^/\\\\\\n]|\\\\${anyButLineEnd})*`;
  const address = `(?:\\d+|\\$|/${inRegex}/)`;
  const command = `${s}(?:${address}(?:${s},${s}${address})?)?${s}!?${s}(?:[pdqlnN=]|s/${inRegex}/${inRegex}/[gpiI0-9]*)${s}(?:;|$)`;
  return linearPattern(`^(?:${command})+$`);
})();

const commands: Readonly<Record<string, CommandSpec>> = {
  ls: {
    short: 'aAbBcCdfFgGhiklmnNopqQrRsStuUvwxXZ1',
    shortValued: 'ITw',
    long: 'all almost-all human-readable si classify file-type inode reverse recursive directory size numeric-uid-gid group-directories-first full-time no-group literal quote-name escape author context dired',
    longValued:
      'sort time time-style format width color? indicator-style block-size ignore hide quoting-style tabsize',
    inert: true,
  },
  cat: {
    short: 'AbeEnsTtuv',
    long: 'show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting',
    inert: true,
  },
  head: {
    short: 'qvz',
    shortValued: 'nc',
    long: 'quiet silent verbose zero-terminated',
    longValued: 'lines bytes',
    numeric: true,
    inert: true,
  },
  tail: {
    short: 'qvzr',
    shortValued: 'nc',
    long: 'quiet silent verbose zero-terminated',
    longValued: 'lines bytes',
    numeric: true,
    inert: true,
  },
  wc: { short: 'clmwL', long: 'bytes chars lines words max-line-length', inert: true },
  grep: {
    short: 'EFGPiyvwxcLloqsbHhnTZzraIUr',
    shortValued: 'efmABCdD',
    long: grepLong,
    longValued: grepLongValued,
    pathValued: 'f file exclude-from',
    numeric: true,
    inert: true,
  },
  egrep: {
    short: 'iyvwxcLloqsbHhnTZzraIUr',
    shortValued: 'efmABC',
    pathValued: 'f',
    numeric: true,
    inert: true,
  },
  fgrep: {
    short: 'iyvwxcLloqsbHhnTZzraIUr',
    shortValued: 'efmABC',
    pathValued: 'f',
    numeric: true,
    inert: true,
  },
  rg: {
    short: 'iSsnNlcwxvFUoqHhaIup0',
    shortValued: 'egtTmABCMrEj',
    long: 'ignore-case smart-case case-sensitive line-number no-line-number files-with-matches files-without-match count count-matches word-regexp line-regexp invert-match fixed-strings multiline multiline-dotall only-matching quiet with-filename no-filename hidden no-hidden no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global no-ignore-exclude text files json vimgrep heading no-heading null column no-column no-messages stats trim sort-files type-list pcre2 unrestricted no-config byte-offset passthru crlf pretty invert-match max-columns-preview no-unicode',
    longValued:
      'regexp glob iglob type type-not type-add max-count after-context before-context context max-depth max-filesize sort sortr color colors replace engine encoding threads max-columns ignore-file path-separator context-separator field-match-separator field-context-separator',
    pathValued: 'ignore-file',
  },
  sort: {
    short: 'bdfgiMhnRrsuVcCz',
    shortValued: 'ktS',
    long: 'reverse numeric-sort human-numeric-sort unique ignore-case version-sort stable check general-numeric-sort month-sort random-sort dictionary-order ignore-leading-blanks zero-terminated ignore-nonprinting',
    longValued: 'key field-separator buffer-size parallel sort',
  },
  uniq: {
    short: 'cdDiuz',
    shortValued: 'fsw',
    long: 'count repeated ignore-case unique zero-terminated',
    longValued: 'skip-fields skip-chars check-chars all-repeated? group?',
    maxPositional: 1,
  },
  cut: {
    short: 'nsz',
    shortValued: 'bcdf',
    long: 'complement only-delimited zero-terminated',
    longValued: 'bytes characters delimiter fields output-delimiter',
    inert: true,
  },
  tr: { short: 'cCdst', long: 'complement delete squeeze-repeats truncate-set1', ...text },
  nl: { short: 'p', shortValued: 'bdfhilnsvw', inert: true },
  fold: { short: 'bs', shortValued: 'w', long: 'bytes spaces', longValued: 'width', inert: true },
  rev: { inert: true },
  tac: {
    short: 'br',
    shortValued: 's',
    long: 'before regex',
    longValued: 'separator',
    inert: true,
  },
  column: { short: 'tnexJ', shortValued: 'sco', inert: true },
  od: { short: 'bcdfilosvx', shortValued: 'AjNtS', shortOptional: 'w', inert: true },
  hexdump: { short: 'bcCdovx', shortValued: 'enNs', inert: true },
  strings: { short: 'afw', shortValued: 'ntTe', inert: true },
  echo: { short: 'neE', ...text },
  printf: { shortValued: 'v', ...text },
  pwd: { short: 'LP', positional: 'none', inert: true },
  true: text,
  false: text,
  test: text,
  '[': text,
  '[[': text,
  which: { short: 'as', ...text },
  type: { short: 'afptP', ...text },
  basename: { short: 'az', shortValued: 's', long: 'multiple zero', longValued: 'suffix', ...text },
  dirname: { short: 'z', long: 'zero', ...text },
  realpath: {
    short: 'eLmPqsz',
    long: 'canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero',
    longValued: 'relative-to relative-base',
    inert: true,
  },
  readlink: {
    short: 'efmnqsvz',
    long: 'canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero',
    inert: true,
  },
  stat: {
    short: 'Lft',
    shortValued: 'c',
    long: 'dereference file-system terse',
    longValued: 'format printf',
    inert: true,
  },
  file: {
    short: 'bhiLkNnprsv0',
    long: 'brief mime mime-type mime-encoding no-dereference dereference keep-going raw special-files no-pad print0',
    longValued: 'separator',
  },
  du: {
    short: 'abchklmsSx0',
    shortValued: 'dBt',
    long: 'all apparent-size bytes total human-readable si summarize separate-dirs one-file-system null count-links',
    longValued: 'max-depth block-size exclude threshold',
    inert: true,
  },
  df: {
    short: 'ahHiklPTx',
    shortValued: 'tB',
    long: 'human-readable si inodes local portability print-type all total',
    longValued: 'type exclude-type block-size output?',
    inert: true,
  },
  tree: {
    short: 'adfFgipsuDhQNrtCAJXnvU',
    shortValued: 'LPI',
    separateValues: true,
    long: 'noreport dirsfirst gitignore prune matchdirs ignore-case du',
    longValued: 'filelimit charset sort timefmt',
  },
  diff: {
    short: 'qsyiEZbBwaNuTtpcrldn',
    shortValued: 'UCWDIFxXS',
    long: 'brief report-identical-files side-by-side ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines text new-file unidirectional-new-file recursive minimal speed-large-files strip-trailing-cr suppress-common-lines left-column expand-tabs initial-tab show-c-function no-dereference',
    longValued:
      'unified? context? exclude exclude-from ignore-matching-lines label color? width to-file from-file starting-file show-function-line tabsize',
    pathValued: 'X exclude-from to-file from-file',
    inert: true,
  },
  cmp: { short: 'blsv', shortValued: 'in', long: 'print-bytes verbose quiet silent', inert: true },
  comm: {
    short: '123iz',
    long: 'check-order nocheck-order total zero-terminated',
    longValued: 'output-delimiter',
    inert: true,
  },
  sha1sum: hashSums,
  sha224sum: hashSums,
  sha256sum: hashSums,
  sha384sum: hashSums,
  sha512sum: hashSums,
  md5sum: hashSums,
  b2sum: hashSums,
  cksum: { ...hashSums, shortValued: 'a', longValued: 'algorithm length' },
  date: {
    short: 'uR',
    shortValued: 'dr',
    long: 'utc universal rfc-email',
    longValued: 'date reference rfc-3339 iso-8601?',
    positional: 'text',
    // `date MMDDhhmm` sets the clock; only a `+FORMAT` prints.
    check: (words) =>
      words.every((word) => word.startsWith('+')) ? undefined : 'date given a time to set',
  },
  whoami: { positional: 'none', inert: true },
  nproc: { long: 'all', longValued: 'ignore', positional: 'none', inert: true },
  printenv: { short: '0', long: 'null', ...text },
  xxd: { parse: xxdArguments },
  id: { short: 'gGnruz', ...text },
  uname: { short: 'asnrvmpio', positional: 'none', inert: true },
  jq: {
    short: 'rjacnseCMSRh',
    shortValued: 'fL',
    long: 'raw-output join-output ascii-output compact-output null-input slurp exit-status color-output monochrome-output sort-keys raw-input tab raw-output0 seq stream',
    longValued: 'indent from-file',
    pathValued: 'f from-file L',
    // The program is the first word; jq's own options cannot write or run anything.
    inert: true,
  },
  sed: {
    short: 'nEsuz',
    long: 'quiet silent regexp-extended separate unbuffered null-data posix debug sandbox',
    // Only scripts that print lines: `p`, `d`, `q`, `=`, `l`, `n`, `s///` without `w` or `e`.
    check: (words) => {
      const [script] = words;
      return script !== undefined && sedScript.test(script) ? undefined : 'a sed script';
    },
  },
  git: { parse: gitReadOnlyRefusal },
  find: { parse: findArguments },
};

/** Environment prefixes a read-only command may carry (they change how it prints, nothing else). */
const harmlessVariable = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|LINES|TERM)$/;

// find: its expressions are options with values of their own; `-exec`, `-delete`, `-fprint`… are not here.
const findWithoutValue = new Set(
  '-print -print0 -prune -empty -true -false -depth -xdev -mount -nowarn -warn -daystart -ls -readable -writable -executable -noleaf -quit -o -or -a -and -not ! ( ) , -nouser -nogroup -ignore_readdir_race -noignore_readdir_race'.split(
    ' ',
  ),
);
const findWithValue = new Set(
  '-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin -used -perm -user -group -uid -gid -links -inum -regextype -printf -fstype -lname -ilname -context'.split(
    ' ',
  ),
);
const findWithPath = new Set(['-newer', '-anewer', '-cnewer', '-samefile']);

function findArguments(args: readonly string[]): ParsedArguments | string {
  const paths: string[] = [];
  let index = 0;
  // `-P` (never follow symlinks) is the default; `-H`, `-L` and `-D`, `-O` are not taken.
  while (args[index] === '-P') index++;
  while (index < args.length) {
    const word = args[index] ?? '';
    if (word.startsWith('-') || word === '!' || word === '(' || word === ')' || word === ',') break;
    paths.push(word);
    index++;
  }
  for (; index < args.length; index++) {
    const word = args[index] ?? '';
    if (findWithoutValue.has(word)) continue;
    if (findWithValue.has(word) || /^-newer[aBcmt][aBcmt]t?$/.test(word)) {
      if (index + 1 >= args.length) return `find ${word} without its value`;
      index++;
      continue;
    }
    if (findWithPath.has(word)) {
      const path = args[index + 1];
      if (path === undefined) return `find ${word} without its value`;
      paths.push(path);
      index++;
      continue;
    }
    return `find ${word}`;
  }
  return { paths };
}

// xxd reads each word as one option by its first letter — `-ps` is `-p` (`-postscript`), not
// `-p -s <offset>` — and a valued one's value is the rest of the word or, for the bare letter or
// its long name, the next word. A second file is the one it writes (`xxd -ps in out` wrote `out`).
const xxdFlags = new Set(
  '-a -autoskip -C -capitalize -E -EBCDIC -i -include -p -ps -postscript -plain -u'.split(' '),
);
const xxdValued = new Set('-c -cols -g -groupsize -l -len -o -offset -s -seek'.split(' '));
const xxdAttached = /^-[cglos][+-]?(0x[0-9a-fA-F]+|\d+)$/;

function xxdArguments(args: readonly string[]): ParsedArguments | string {
  const paths: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] ?? '';
    if (xxdValued.has(word)) index++;
    else if (word.startsWith('-') && word !== '-') {
      if (!xxdFlags.has(word) && !xxdAttached.test(word)) return `xxd ${word}`;
    } else paths.push(word);
  }
  return paths.length > 1 ? 'xxd given more than 1 file (the second is written)' : { paths };
}

const words = (list: string | undefined) => (list ?? '').split(' ').filter((word) => word !== '');

/** Parses options by a spec: the positional words and path-option values, or why it is not read-only. */
function parseBySpec(
  name: string,
  spec: CommandSpec,
  args: readonly string[],
): SpecArguments | string {
  const long = new Set(words(spec.long));
  const valued = words(spec.longValued);
  const longValued = new Set(valued.filter((option) => !option.endsWith('?')));
  const longOptional = new Set(
    valued.filter((option) => option.endsWith('?')).map((option) => option.slice(0, -1)),
  );
  const pathValued = new Set(words(spec.pathValued));
  const positional: string[] = [];
  const optionPaths: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] ?? '';
    if (word === '--') {
      positional.push(...args.slice(index + 1));
      break;
    }
    if (spec.positional === 'text' && !word.startsWith('-')) {
      positional.push(word);
      continue;
    }
    if (word.startsWith('--')) {
      const equals = word.indexOf('=');
      const option = equals === -1 ? word.slice(2) : word.slice(2, equals);
      const value = equals === -1 ? undefined : word.slice(equals + 1);
      if (longValued.has(option)) {
        const given = value ?? args[++index];
        if (pathValued.has(option) && given !== undefined) optionPaths.push(given);
        continue;
      }
      if (longOptional.has(option) || (long.has(option) && value === undefined)) continue;
      return `${name} --${option}`;
    }
    if (word.startsWith('-') && word !== '-') {
      if (spec.numeric === true && /^-\d+$/.test(word)) continue;
      const letters = word.slice(1);
      let refused: string | undefined;
      for (let at = 0; at < letters.length; at++) {
        const letter = letters[at] ?? '';
        if ((spec.shortOptional ?? '').includes(letter)) break;
        if ((spec.shortValued ?? '').includes(letter)) {
          if (spec.separateValues === true && at < letters.length - 1) {
            refused = `${name} ${word} (-${letter} takes the next word; what follows it are more options)`;
            break;
          }
          // The rest of the word is the value, or else the next word is.
          const given = at === letters.length - 1 ? args[++index] : letters.slice(at + 1);
          if (pathValued.has(letter) && given !== undefined) optionPaths.push(given);
          break;
        }
        if (!(spec.short ?? '').includes(letter)) {
          refused = `${name} -${letter}`;
          break;
        }
      }
      // `echo -x`, `test -f` and their like are text, not options (only where no option could
      // do harm: `date -s` sets the clock).
      if (refused !== undefined && !(spec.positional === 'text' && spec.inert === true))
        return refused;
      if (refused !== undefined) positional.push(word);
      continue;
    }
    positional.push(word);
  }
  if (spec.positional === 'none' && positional.length > 0) return `${name} given arguments`;
  if (spec.maxPositional !== undefined && positional.length > spec.maxPositional)
    return `${name} given more than ${spec.maxPositional} file`;
  return spec.check?.(positional) ?? { positional, optionPaths };
}

/** Whether a line is read-only: the paths it reads, or why it is not. */
export type ReadOnlyVerdict =
  | {
      readOnly: true;
      /** Words the commands read as paths (positional paths, `< file`, path-valued options). */
      paths: string[];
      /** Some word is expanded by bash (a glob, `~`, `$x`): its value is known only when it runs. */
      expands: boolean;
      /** A git command is among them (git reads the repository's own configuration). */
      git: boolean;
      /** The command names run, each once (`ls`, `grep`…), for a look along `PATH`. */
      commands: string[];
    }
  | { readOnly: false; reason: string };

/** Why one command is not read-only, or what it reads. */
function classifyCommand(command: ShellCommand): ParsedArguments | string {
  const [name, ...args] = command.words;
  if (name === undefined) return 'an assignment without a command';
  const expanding = command.expanding;
  if (expanding === undefined) return `${name} run by another command`;
  if (expanding[0] === true || name.includes('/')) return 'a command named by a path or expansion';
  const spec = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (spec === undefined) return `${name} is not a known read-only command`;
  for (const assignment of command.assignments) {
    const variable = assignment.slice(0, assignment.indexOf('='));
    if (!harmlessVariable.test(variable) || /[$`]/.test(assignment))
      return `the environment prefix ${variable}=`;
  }
  if (spec.inert !== true && expanding.slice(1).some((expands) => expands))
    return `${name} given a word bash expands (it could become an option)`;
  const paths: string[] = [];
  for (const redirect of fileRedirects(command)) {
    if (redirect.operator !== '<') return `a redirection (${redirect.operator} ${redirect.target})`;
    // bash itself opens a connection for `< /dev/tcp/host/port`.
    if (/^\/dev\/(tcp|udp)\//.test(redirect.target))
      return `a network redirection (${redirect.target})`;
    paths.push(redirect.target);
  }
  if (spec.parse !== undefined) {
    const parsed = spec.parse(args);
    if (typeof parsed === 'string') return parsed;
    return { paths: [...paths, ...parsed.paths] };
  }
  const parsed = parseBySpec(name, spec, args);
  if (typeof parsed === 'string') return parsed;
  const readsPositional = spec.positional === undefined || spec.positional === 'paths';
  return {
    paths: [...paths, ...parsed.optionPaths, ...(readsPositional ? parsed.positional : [])],
  };
}

/**
 * Whether every command of a bash line is a known read-only command with options that only
 * read. Fails closed: a redirection that writes, a command or process substitution, an
 * assignment, a command that is not on the list or an option it does not know make it not
 * read-only (the line is then asked, or allowed by the sandbox in `workspace-write`).
 */
export function classifyReadOnly(source: string): ReadOnlyVerdict {
  const refuse = (reason: string): ReadOnlyVerdict => ({ readOnly: false, reason });
  // Substitutions run commands whose output becomes words: never read-only, even when quoted.
  if (/\$\(|`|<\(|>\(/.test(source)) return refuse('a command or process substitution');
  const parsed = parseShellCommand(source);
  if (parsed.errors.length > 0) return refuse(`the line could not be parsed (${parsed.errors[0]})`);
  if (parsed.commands.length === 0) return refuse('no command');
  const paths: string[] = [];
  const names = new Set<string>();
  let expands = false;
  let git = false;
  for (const command of parsed.commands) {
    // `git --no-pager log` is also listed as `git log`: the first form is the one checked.
    if (command.via === 'git global options') continue;
    // `printf -v PATH .`, `for PATH in .`: every later command name runs something else.
    const bound = boundVariables(command).find(changesWhatRuns);
    if (bound !== undefined) return refuse(`sets ${bound}, which changes what later commands run`);
    // A loop header (`for f in a b`) runs nothing itself.
    if (
      command.words.length === 0 &&
      command.assignments.length === 0 &&
      command.redirects.length === 0 &&
      (command.binds?.length ?? 0) > 0
    )
      continue;
    const verdict = classifyCommand(command);
    if (typeof verdict === 'string') return refuse(verdict);
    paths.push(...verdict.paths);
    if (command.expanding?.some((word) => word)) expands = true;
    if (fileRedirects(command).some((redirect) => /[$`*?[{~]/.test(redirect.target)))
      expands = true;
    if (command.words[0] === 'git') git = true;
    names.add(command.words[0] ?? '');
  }
  return { readOnly: true, paths, expands, git, commands: [...names] };
}
