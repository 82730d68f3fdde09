// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax, not templates
import { linearPattern, spaceClass } from './linear-pattern.js';
import { changesWhatRuns } from './shell-command.js';
import { fileRedirects, parseShellCommand, type ShellCommand } from './shell-parser.js';

/**
 * What a bash line means for the permission rules (DESIGN §4): the subjects (each command, with
 * its name normalised and wrappers unwrapped, and each file redirection), and `opaque` — a reason
 * — when the line holds something whose executed code no static analysis can name. An opaque line
 * is never allowed by a rule, a grant or the mode; it is asked (the OS sandbox contains what runs).
 */
export interface ShellAnalysis {
  subjects: string[];
  /** Why the line cannot be fully named; undefined when every command it runs is a subject. */
  opaque?: string;
}

// Interpreters that run code given on their command line or stdin.
const interpreters = new Set([
  'tsx',
  'ts-node',
  'ts-node-esm',
  'esno',
  'jiti',
  'python',
  'python2',
  'python3',
  'node',
  'nodejs',
  'deno',
  'bun',
  'perl',
  'ruby',
  'php',
  'lua',
  'Rscript',
  'osascript',
  'tclsh',
  'wish',
  'jshell',
  'irb',
]);
const shells = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'busybox',
  'fish',
  'csh',
  'tcsh',
]);
// Programs that run another command given in their arguments, in ways the parser does not unwrap.
const commandRunners = new Set([
  'su',
  'runuser',
  'script',
  'ssh',
  'tmux',
  'screen',
  'at',
  'batch',
  'systemd-run',
  'parallel',
  'expect',
  'flock',
  'unshare',
  'nsenter',
  'firejail',
  'bwrap',
  'fakeroot',
  'taskset',
  'chrt',
  'numactl',
  'prlimit',
  'valgrind',
  'ltrace',
  'xvfb-run',
  'entr',
  'dbus-run-session',
  'sg',
  'pkexec',
  'crontab',
  'chronic',
  'ifne',
  'gdb',
  'lldb',
  'systemd-nspawn',
  'distrobox',
  'toolbox',
  'caffeinate',
  'chpst',
  'retry',
  'watchexec',
  'hyperfine',
  'nodemon',
  'nix-shell',
  'concurrently',
  // Editors that read their commands (`!cmd` among them) from stdin.
  'ed',
  'ex',
]);
// Container tools whose subcommands run a command inside a container (or the host, given mounts).
const containerTools = new Set(['docker', 'podman', 'nerdctl', 'kubectl', 'oc', 'lxc', 'incus']);
const containerRunners = new Set([
  'run',
  'exec',
  'create',
  'start',
  'build',
  'buildx',
  'compose',
  'debug',
  'attach',
]);
/** A script argument that is really a pipe: a process substitution, stdin or an fd. */
const pipedScript = /<\(|^\/dev\/(stdin|fd\/)|^\/proc\/[^/]+\/fd\//;
// Builtins that define code run later, or evaluate text as code.
const codeDefiners = new Map([
  ['source', 'runs the commands of a file'],
  ['.', 'runs the commands of a file'],
  ['alias', 'defines an alias'],
  ['trap', 'sets a trap that runs code later'],
  ['bind', 'binds a key to code'],
  ['enable', 'loads a builtin'],
  ['complete', 'registers completion code'],
  ['let', 'arithmetic over variables'],
  ['coproc', 'runs a coprocess'],
]);
// Builtins whose name arguments may carry an array subscript, which bash evaluates as arithmetic.
const nameTakers = new Set([
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'printf',
  'read',
  'unset',
  'mapfile',
  'readarray',
  'test',
  '[',
  '[[',
  'wait',
]);
// vim under its other names, and its options that run commands: `-c`, `+cmd`, `--cmd`, a script
// (`-S`, `-s`), ex mode reading commands from stdin (`-e`, `-es`, `-E`).
const vimNames = [
  'vim',
  'vi',
  'nvim',
  'view',
  'vimdiff',
  'rvim',
  'rview',
  'gvim',
  'gview',
  'gvimdiff',
  'evim',
  'vimx',
  'nvim-qt',
];
const vimRunsCommand = /^(-c$|\+|--cmd|-S$|-s$|-[eE]s?$)/;
// Options that make an ordinary program run a command of the caller's choosing, by program
// (a short option such as `-e` means something harmless to most other programs).
const commandOptions: Readonly<Record<string, RegExp>> = {
  tar: /^(--to-command|--use-compress-program|--checkpoint-action|--info-script|--new-volume-script|-I$|-F$)/,
  rsync: /^(-e$|--rsh|--rsync-path)/,
  zip: /^(-TT$|--unzip-command)/,
  // difftool's --extcmd, send-email's command hooks and a program as its SMTP server.
  git: /^(--upload-pack|--receive-pack|--exec\b|-x$|--ext-diff|--open-files-in-pager|--config-env|--exec-path|--extcmd|--sendmail-cmd|--to-cmd|--cc-cmd|--header-cmd|--smtp-server($|=[./~]))/,
  fd: /^(-x$|-X$|--exec|--exec-batch)/,
  fdfind: /^(-x$|-X$|--exec|--exec-batch)/,
  rg: /^(--pre\b|--pre=)/,
  less: /^(-[a-zA-Z]*\+|\+)/,
  man: /^(-P$|--pager|-H)/,
  ...Object.fromEntries(vimNames.map((name) => [name, vimRunsCommand])),
  emacs: /^(--?eval|--execute|-x$|--funcall|-f$|--load|-l$|--script|--batch)/,
  scp: /^(-S$|-o)/,
  curl: /^(--config$|-K$)/,
  wget: /^(--execute|-e$)/,
};
// git configuration keys whose value git runs (or that make it run something): an alias, a
// pager, an editor, fsmonitor, hooks, helpers, drivers, ssh and gpg programs, includes.
const gitKeyRunsProgram =
  /^(alias\.|include|core\.(fsmonitor|pager|editor|sshcommand|hookspath|askpass|gitproxy)|.*\.(command|cmd|program|textconv|clean|smudge|process|driver|helper|external|path|tool|uploadpack|receivepack|proxy)$|sequence\.editor|credential|gpg\.|diff\.external|pager\.|filter\.|protocol\.)/i;

// git's own subcommands; anything else is an alias or a `git-<name>` program: unnameable.
const gitCommands = new Set(
  (
    'add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore ' +
    'check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone ' +
    'column commit commit-graph commit-tree config count-objects credential describe diff ' +
    'diff-files diff-index diff-tree difftool fetch fetch-pack filter-branch fmt-merge-msg ' +
    'for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help ' +
    'index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit ' +
    'maintenance merge merge-base merge-file merge-index merge-tree mergetool mktag mktree mv ' +
    'name-rev notes pack-objects pack-refs patch-id prune prune-packed pull push range-diff ' +
    'read-tree rebase reflog remote repack replace request-pull rerere reset restore rev-list ' +
    'rev-parse revert rm send-email shortlog show show-branch show-index show-ref sparse-checkout ' +
    'stage stash status stripspace submodule switch symbolic-ref tag unpack-file unpack-objects ' +
    'update-index update-ref update-server-info var verify-commit verify-pack verify-tag version ' +
    'whatchanged worktree write-tree'
  ).split(' '),
);

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}

const hasExpansion = (word: string) => /[$`]/.test(word);

// On RE2 (see linear-pattern.ts): from each of many `$[` or `[[` without a `]`, JavaScript's
// engine rescanned the rest of the command (quadratic: 100 kB took 5–18 s).
const arithmetic = linearPattern('\\(\\(((?:[^()]|\\([^()]*\\))*)\\)\\)|\\$\\[([^\\]]*)\\]');
const testComparison = linearPattern('\\[\\[[^\\]]*-(eq|ne|lt|le|gt|ge)\\b');
const testNamesVariable = linearPattern('\\[\\[[^\\]]*[$A-Za-z_]');

/** Arithmetic (`$((…))`, `((…))`, `$[…]`) that names a variable: bash may run code held in it. */
function arithmeticOverVariables(source: string): boolean {
  const matcher = arithmetic.matcher(source);
  while (matcher.find()) {
    const inner = matcher.group(1) ?? matcher.group(2) ?? '';
    if (/[A-Za-z_$`]/.test(inner)) return true;
  }
  return testComparison.test(source) && testNamesVariable.test(source);
}

/**
 * `${x:offset}` and `${x:offset:length}` (of a name, a subscripted name, a positional parameter,
 * `@` or `*`): the rest after the colon is arithmetic. Not `${x:-…}`, `${x:=…}`, `${x:?…}`,
 * `${x:+…}`, which take a word (`${x: -1}`, with a blank, is an offset).
 */
const substringExpansion =
  /^(?:[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|[0-9]+|[@*]):(?![-=?+])(.*)$/s;

/** Parameter expansions bash evaluates as code: `${!x}`, `${x@P}`, `${a[expr]}`, `${#a[expr]}`, `${x:y}`. */
function evaluatingExpansion(source: string): string | undefined {
  for (const match of source.matchAll(/\$\{([^}]*)\}?/g)) {
    const body = match[1] ?? '';
    if (body.startsWith('!')) return 'an indirect expansion (${!…})';
    // Quotes inside ${…} follow rules of their own (single quotes are literal inside "${x:-'…'}"
    // but $(…) still runs): too subtle to name reliably, so fail closed.
    if (/[`'"]|\$\(/.test(body)) return 'a command substitution or quotes inside ${…}';
    if (/^[A-Za-z_][A-Za-z0-9_]*@[A-Za-z]/.test(body)) return 'a ${…@…} transformation';
    // `${PATH:=.}` assigns when PATH is unset or empty (`unset PATH; : ${PATH:=.}; ls`).
    const assigned = /^([A-Za-z_][A-Za-z0-9_]*):?=/.exec(body)?.[1];
    if (assigned !== undefined && changesWhatRuns(assigned))
      return `sets ${assigned} (\${${assigned}:=…}), which changes what later commands run`;
    // `${#a[expr]}` (an element's length) evaluates the subscript as `${a[expr]}` does.
    const subscript = /^#?[A-Za-z_][A-Za-z0-9_]*\[([^\]]*)\]/.exec(body)?.[1];
    if (subscript !== undefined && !/^[0-9@*]*$/.test(subscript)) return 'an array subscript';
    // An offset or length naming a variable evaluates what it holds, as `$((y))` does:
    // `printf -v y '\x61[\x24\x28cmd\x29]'; echo "${HOME:y}"` ran cmd, in read-only mode.
    const offset = substringExpansion.exec(body)?.[1];
    if (offset !== undefined && /[A-Za-z_$]/.test(offset))
      return 'arithmetic over variables (${…:offset})';
  }
  return undefined;
}

/** A word naming a variable with a computed subscript (`a[$i]`), which bash evaluates (on RE2: quadratic on `a[[[[…`). */
const subscriptedName = linearPattern('^[A-Za-z_][A-Za-z0-9_]*\\[[^\\]]*[^0-9@*\\]][^\\]]*\\]');

/** The variable name of an assignment, without a subscript (`a[1]` → `a`). */
function withoutSubscript(name: string): string {
  const at = name.indexOf('[');
  return at === -1 ? name : name.slice(0, at);
}

// An awk program or sed script that runs a command (on RE2: quadratic on `getlineprint…` or a
// run of newlines).
const awkRunsCommand = linearPattern(
  `system[${spaceClass}]*\\(|\\|[${spaceClass}]*getline|print[^;]*\\|`,
);
const sedRunsCommand = linearPattern(
  `(^|[;\\n}])[${spaceClass}]*e\\b|/[gpIiMm0-9]*e[gpIiMm0-9]*([${spaceClass}]|;|$)`,
);

// Builtins that set the variables named among their arguments (`read PATH`, `getopts o PATH`).
const variableSetters = new Set([
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'read',
  'mapfile',
  'readarray',
  'getopts',
]);

/**
 * The variables a command sets for the commands after it on the line: a bare assignment
 * (`PATH=.;`), a loop variable (`for PATH in .`), `printf -v NAME`, and the names given to
 * `declare`, `export`, `read`, `mapfile`, `getopts`… (every word that could be a name, options
 * included: a false positive only asks). An assignment prefixing a command sets nothing after it.
 */
export function boundVariables(command: ShellCommand): string[] {
  const bound = [...(command.binds ?? [])];
  if (command.words.length === 0) {
    for (const assignment of command.assignments)
      bound.push(withoutSubscript(assignment.slice(0, assignment.search(/\+?=/))));
  }
  const [first, ...args] = command.words;
  const name = first === undefined ? '' : basename(first);
  if (variableSetters.has(name)) {
    for (const word of args) bound.push(withoutSubscript(word.split(/\+?=/)[0] ?? ''));
  }
  if (name === 'printf') {
    args.forEach((word, index) => {
      if (word === '-v') bound.push(withoutSubscript(args[index + 1] ?? ''));
      else if (/^-v./.test(word)) bound.push(withoutSubscript(word.slice(2)));
    });
  }
  return bound;
}

/** Why one command cannot be named, if it cannot. */
function commandOpacity(command: ShellCommand): string | undefined {
  for (const assignment of command.assignments) {
    const name = assignment.slice(0, assignment.indexOf('='));
    if (subscriptedName.test(name)) return 'an array subscript';
    if (command.words.length > 0 && changesWhatRuns(withoutSubscript(name))) {
      return `the environment prefix ${name}= changes what the command runs`;
    }
  }
  const bound = boundVariables(command).find(changesWhatRuns);
  if (bound !== undefined) return `sets ${bound}, which changes what later commands run`;
  const [first, ...args] = command.words;
  if (first === undefined) return undefined;
  if (hasExpansion(first)) return 'the command name is only known when it runs';
  const name = basename(first);
  const defined = codeDefiners.get(name);
  if (defined !== undefined) return defined;
  if (name === 'eval' && args.some(hasExpansion)) return 'eval of a value known only at run time';
  // A name reference makes every later assignment to it one to the variable it names.
  if (/^(declare|typeset|local)$/.test(name) && args.some((word) => /^-[A-Za-z]*n/.test(word))) {
    return 'a name reference (declare -n)';
  }
  // `hash -p /bin/rm ls`: from then on `ls` runs rm.
  if (name === 'hash' && args.some((word) => /^-[A-Za-z]*p/.test(word))) {
    return 'hash -p makes a command name run another program';
  }
  if (nameTakers.has(name) && args.some((word) => subscriptedName.test(word))) {
    return 'an array subscript';
  }
  if (commandRunners.has(name)) return `${name} runs a command the rules cannot see`;
  if (containerTools.has(name) && args.some((word) => containerRunners.has(word))) {
    return `${name} runs a command in a container the rules cannot see`;
  }
  if (
    (shells.has(name) || interpreters.has(name) || /^python[0-9.]+$/.test(name)) &&
    args.some((word) => pipedScript.test(word))
  ) {
    return `${name} runs code read from a pipe or process substitution`;
  }
  if ((name === 'deno' || name === 'bun') && args[0] === 'eval') {
    return `${name} eval runs code given inline`;
  }
  if (
    /^(g|m|n)?awk$/.test(name) &&
    args.some(
      (word, index) =>
        (word === '-f' || word === '--file') && pipedScript.test(args[index + 1] ?? ''),
    )
  ) {
    return 'awk runs a program read from a pipe';
  }
  if (name === 'nix' && args.some((word) => /^(develop|shell|run)$/.test(word))) {
    return 'nix runs a command the rules cannot see';
  }
  if (/^g?make$/.test(name)) {
    const inline = args.some(
      (word, index) =>
        /^(-E|--eval)/.test(word) ||
        (/^(-f|--file|--makefile)$/.test(word) &&
          (args[index + 1] === '-' || pipedScript.test(args[index + 1] ?? ''))) ||
        /^(-f|--file=|--makefile=)(-|.*<\(|\/dev\/(stdin|fd\/)|\/proc\/)/.test(word),
    );
    if (inline) return `${name} runs recipes given inline or on stdin`;
  }
  if (interpreters.has(name) || /^python[0-9.]+$/.test(name)) {
    const inline = args.some((word) => /^-(c|e|E|r|-eval|-print|p)$/.test(word) || word === '-');
    const script = args.some((word) => !word.startsWith('-'));
    const stdin = command.redirects.some(
      (redirect) => redirect.operator.startsWith('<<') || redirect.operator === '<',
    );
    if (inline || !script || stdin) return `${name} runs code given inline or on stdin`;
  }
  if (shells.has(name)) {
    const script = args.some((word) => !word.startsWith('-') && !word.startsWith('+'));
    const stdin = command.redirects.some((redirect) => redirect.operator.startsWith('<'));
    // `bash -c 'literal'` is followed by the parser; a shell reading stdin or a file is not.
    if (!script || stdin || args.includes('-s')) return `${name} reads its commands from stdin`;
  }
  if (/^(g|m|n)?awk$/.test(name) && args.some((word) => awkRunsCommand.test(word))) {
    return 'awk runs a command';
  }
  if (name === 'sed' && args.some((word) => sedRunsCommand.test(word))) {
    return 'sed runs a command (e)';
  }
  const runsCommand = Object.hasOwn(commandOptions, name) ? commandOptions[name] : undefined;
  if (runsCommand !== undefined && args.some((word) => runsCommand.test(word))) {
    return `${name} is given an option that runs a command`;
  }
  if (name === 'git') {
    let index = 0;
    while (index < args.length && (args[index] ?? '').startsWith('-')) {
      const option = args[index] ?? '';
      if (option === '-c' || /^-c.|^--config-env|^--exec-path/.test(option)) {
        return 'git -c / --config-env / --exec-path can make git run any command';
      }
      index += /^(-C|--git-dir|--work-tree|--namespace|--super-prefix|--list-cmds)$/.test(option)
        ? 2
        : 1;
    }
    const subcommand = args[index];
    if (subcommand !== undefined && !gitCommands.has(subcommand)) {
      return `git ${subcommand} is an alias or an external command`;
    }
    const rest = args.slice(index + 1);
    if (
      subcommand === 'config' &&
      !rest.some((word) => /^(--get|--list$|-l$|get$|list$)/.test(word)) &&
      rest.some((word) => gitKeyRunsProgram.test(word))
    ) {
      return 'git config sets what a later git command runs';
    }
    if (
      subcommand === 'filter-branch' ||
      (subcommand === 'submodule' && rest.includes('foreach')) ||
      (subcommand === 'bisect' && rest[0] === 'run') ||
      (subcommand === 'rebase' && rest.some((word) => /^(-x|--exec)/.test(word)))
    ) {
      return `git ${subcommand} runs a command given as an argument`;
    }
  }
  return undefined;
}

/** The subjects one command contributes: as written, normalised, and with its environment prefix. */
function commandSubjects(command: ShellCommand): string[] {
  const [first, ...rest] = command.words;
  if (first === undefined) return [];
  const written = command.words.join(' ');
  const subjects = [written];
  const name = basename(first);
  if (name !== first) subjects.push([name, ...rest].join(' '));
  if (command.assignments.length > 0) {
    // An allow rule must cover the prefixed form too; a deny rule still sees the bare command.
    subjects.push(`${command.assignments.join(' ')} ${[name, ...rest].join(' ')}`);
  }
  if (name === 'git') {
    // Global options must not hide the subcommand: `git --glob-pathspecs push` is `git push`.
    let index = 0;
    while (index < rest.length && (rest[index] ?? '').startsWith('-')) {
      index += /^(-C|--git-dir|--work-tree|--namespace|--super-prefix)$/.test(rest[index] ?? '')
        ? 2
        : 1;
    }
    if (index > 0) subjects.push(['git', ...rest.slice(index)].join(' '));
  }
  // `find -delete` deletes: a rule about `rm` covers it too.
  if (name === 'find' && rest.includes('-delete')) subjects.push('rm');
  return subjects;
}

/** `./s`, `s` and `a/../s` alike, for comparing what a line writes with what it runs. */
function samePath(word: string): string {
  const parts: string[] = [];
  for (const part of word.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts.at(-1) !== '..') parts.pop();
    else parts.push(part);
  }
  return `${word.startsWith('/') ? '/' : ''}${parts.join('/')}`;
}

const makefileNames = ['Makefile', 'makefile', 'GNUmakefile'];

/**
 * A file the line writes and then runs: a script (`echo 'rm x' > s; sh s`, `… > s; ./s`), or a
 * makefile (`printf … > Makefile; make`). What it holds is known only when it runs; the rules
 * would see `sh s`. (A file written by an earlier call is a limit of any rule: the sandbox holds.)
 */
function runsWhatItWrote(commands: readonly ShellCommand[]): string | undefined {
  const written = new Set<string>();
  for (const command of commands) {
    const [first = '', ...args] = command.words;
    const name = basename(first);
    const runs: string[] = [];
    if (first.includes('/') || written.has(samePath(first))) runs.push(first);
    if (
      shells.has(name) ||
      interpreters.has(name) ||
      /^python[0-9.]+$/.test(name) ||
      name === 'source' ||
      name === '.'
    ) {
      const script = args.find((word) => !word.startsWith('-') && !word.startsWith('+'));
      if (script !== undefined) runs.push(script);
    }
    if (/^g?make$/.test(name)) {
      const given = args.flatMap((word, index) =>
        /^(-f|--file|--makefile)$/.test(word)
          ? [args[index + 1] ?? '']
          : /^(-f.|--file=|--makefile=)/.test(word)
            ? [word.replace(/^(-f|--file=|--makefile=)/, '')]
            : [],
      );
      runs.push(...(given.length > 0 ? given : makefileNames));
    }
    if (runs.some((word) => written.has(samePath(word)))) return 'runs a file the same line writes';
    for (const redirect of fileRedirects(command))
      if (redirect.operator !== '<') written.add(samePath(redirect.target));
    if (['tee', 'cp', 'mv', 'install', 'ln', 'curl', 'wget', 'dd'].includes(name))
      for (const word of args) written.add(samePath(word.replace(/^(of=|-o|--output=)/, '')));
  }
  return undefined;
}

/** Analyses a bash line for the permission rules. Never throws; fails closed. */
export function analyzeShellCommand(source: string): ShellAnalysis {
  const parsed = parseShellCommand(source);
  const subjects = new Set<string>();
  let opaque: string | undefined;
  const mark = (reason: string | undefined) => {
    opaque ??= reason;
  };
  if (parsed.errors.length > 0) mark(`the line could not be parsed (${parsed.errors[0]})`);
  if (arithmeticOverVariables(source)) mark('arithmetic over variables');
  mark(evaluatingExpansion(source));
  if (/(^|[\s;&|({])coproc(\s|$)/.test(source)) mark('runs a coprocess');
  if (
    /(^|[\s;&|({])function\s+[^\s;&|()]+|(^|[\s;&|({])[A-Za-z0-9_.:@%+-]+\s*\(\s*\)/.test(source)
  ) {
    mark('defines a function');
  }
  for (const command of parsed.commands) {
    for (const subject of commandSubjects(command)) subjects.add(subject);
    for (const redirect of fileRedirects(command)) {
      const operator = redirect.operator === '>&' ? '>' : redirect.operator;
      subjects.add(`${operator} ${redirect.target}`);
      if (hasExpansion(redirect.target) && operator !== '<')
        mark('writes to a path known only at run time');
    }
    mark(commandOpacity(command));
  }
  mark(runsWhatItWrote(parsed.commands));
  if (subjects.size === 0 && source.trim() !== '') subjects.add(source.trim());
  return opaque === undefined ? { subjects: [...subjects] } : { subjects: [...subjects], opaque };
}

/**
 * Permission subjects of a command line (DESIGN.md §4): each command (as written and with its
 * name normalised, wrappers unwrapped), then each file redirection as `OP target`. Prefer
 * {@link analyzeShellCommand}, which also says when the line is opaque (cannot be fully named).
 */
export function shellPermissionSubjects(source: string): string[] {
  return analyzeShellCommand(source).subjects;
}
