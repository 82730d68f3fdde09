// The commands a command runs in turn: wrappers (`sudo`, `env`, `xargs`, `timeout`…), shells
// with `-c`, `eval`, package runners (`npx`, `pnpm exec`, `uv run`…), `find -exec`, and `git`
// with its global options normalised away.
import {
  assignmentPattern,
  maxDepth,
  type ParsedShellCommand,
  type ShellCommand,
} from './shell-command.js';

const shells = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'busybox', 'fish']);
const wrappers = new Set([
  'sudo',
  'doas',
  'env',
  'nohup',
  'nice',
  'ionice',
  'time',
  'timeout',
  'xargs',
  'exec',
  'command',
  'builtin',
  'stdbuf',
  'chroot',
  'watch',
  'strace',
  'setsid',
  'unbuffer',
  'cross-env',
]);

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}

/**
 * Package and environment managers that run any command named after their options (`pnpm exec
 * rm x` runs `rm x`): the subcommand that does it, options that take a value, and the option that
 * makes the rest a shell command line (`npx -c 'rm x'`).
 */
interface Runner {
  subcommands?: readonly string[];
  valued: RegExp;
  shellString?: RegExp;
  /** Positional words between the options and the command (`direnv exec DIR cmd`). */
  skip?: number;
}
const runners: Readonly<Record<string, Runner>> = {
  npx: { valued: /^(-p|--package)$/, shellString: /^(-c|--call)$/ },
  npm: {
    subcommands: ['exec', 'x'],
    valued: /^(-p|--package|-w|--workspace)$/,
    shellString: /^(-c|--call)$/,
  },
  pnpm: {
    subcommands: ['exec', 'dlx'],
    valued: /^(-F|--filter|-C|--dir|--reporter|--package)$/,
    shellString: /^(-c|--shell-mode)$/,
  },
  pnpx: { valued: /^(--package)$/ },
  yarn: { subcommands: ['exec', 'dlx'], valued: /^(-p|--package)$/ },
  bunx: { valued: /^(-p|--package)$/ },
  bun: { subcommands: ['x'], valued: /^(-p|--package)$/ },
  uvx: { valued: /^(--from|--with|--python|-p|--index|--index-url)$/ },
  uv: {
    subcommands: ['run'],
    valued:
      /^(--with|--with-editable|--with-requirements|--python|-p|--directory|--project|--package|--group|--extra|--env-file|--index|--default-index|--index-url|--extra-index-url|-i|--find-links|-f)$/,
  },
  poetry: { subcommands: ['run'], valued: /^(-C|--directory|-P|--project)$/ },
  pipenv: { subcommands: ['run'], valued: /^$/ },
  pdm: { subcommands: ['run'], valued: /^(-p|--project)$/ },
  conda: { subcommands: ['run'], valued: /^(-n|--name|-p|--prefix|--cwd)$/ },
  mamba: { subcommands: ['run'], valued: /^(-n|--name|-p|--prefix|--cwd)$/ },
  micromamba: { subcommands: ['run'], valued: /^(-n|--name|-p|--prefix|--cwd)$/ },
  direnv: { subcommands: ['exec'], valued: /^$/, skip: 1 },
  dotenv: { valued: /^(-e|-v|-p)$/ },
};

/** Parses a nested script (`bash -c`, `eval`…) at `depth`, adding its commands to `out`. */
export type NestedScriptParser = (script: string, out: ParsedShellCommand, depth: number) => void;

/** Commands hidden inside another: `bash -c`, `eval`, wrappers, `find -exec`, `git -C`. */
export function expandNested(
  command: ShellCommand,
  out: ParsedShellCommand,
  depth: number,
  parseScript: NestedScriptParser,
): void {
  if (depth >= maxDepth) {
    // Too deep to follow: say so, so the analysis treats the line as one it cannot name.
    if (out.errors.length < 50) out.errors.push('nesting too deep');
    return;
  }
  const words = command.words;
  const name = basename(words[0] ?? '');
  const nestedScript = (script: string, via: string) => {
    const before = out.commands.length;
    parseScript(script, out, depth + 1);
    for (const found of out.commands.slice(before)) found.via ??= via;
  };
  const nestedWords = (rest: readonly string[], via: string) => {
    if (rest.length === 0) return;
    const nested: ShellCommand = { words: [...rest], assignments: [], redirects: [], via };
    out.commands.push(nested);
    expandNested(nested, out, depth + 1, parseScript);
  };

  const runner = Object.hasOwn(runners, name) ? runners[name] : undefined;
  if (runner !== undefined) {
    let i = 1;
    if (runner.subcommands !== undefined) {
      // The subcommand, after any global options and their values (`npm --prefix . exec …`).
      let at = 1;
      while (at < words.length && (words[at] ?? '').startsWith('-')) {
        at +=
          !(words[at] ?? '').includes('=') && !runner.subcommands.includes(words[at + 1] ?? '')
            ? 2
            : 1;
      }
      if (!runner.subcommands.includes(words[at] ?? '')) return;
      i = at + 1;
    }
    while (i < words.length && (words[i] ?? '').startsWith('-')) {
      const word = words[i] ?? '';
      if (word === '--') {
        i++;
        break;
      }
      if (runner.shellString?.test(word)) {
        nestedScript(words.slice(i + 1).join(' '), `${name} ${word}`);
        return;
      }
      i += runner.valued.test(word) ? 2 : 1;
    }
    nestedWords(words.slice(i + (runner.skip ?? 0)), name);
    return;
  }
  if (name === 'busybox' || name === 'toybox') {
    // Multi-call binaries: `busybox rm x` is `rm x`, `busybox sh -c …` is `sh -c …`.
    const applet = words[1];
    if (applet !== undefined && !applet.startsWith('-')) nestedWords(words.slice(1), name);
    return;
  }
  if (shells.has(name)) {
    for (let i = 1; i < words.length; i++) {
      const word = words[i] ?? '';
      // Letters with a `c` among them (`^-[a-zA-Z]*c[a-zA-Z]*$` was quadratic on `-ccc…`).
      if (/^-[a-zA-Z]+$/.test(word) && word.includes('c')) {
        const script = words[i + 1];
        if (script !== undefined) nestedScript(script, `${name} -c`);
        return;
      }
      if (!word.startsWith('-') && !word.startsWith('+')) return;
    }
    return;
  }
  if (name === 'eval') {
    nestedScript(words.slice(1).join(' '), 'eval');
    return;
  }
  if (name === 'find') {
    for (let i = 1; i < words.length; i++) {
      if (/^-(exec|execdir|ok|okdir)$/.test(words[i] ?? '')) {
        const end = words.findIndex((w, j) => j > i && (w === ';' || w === '+'));
        nestedWords(words.slice(i + 1, end === -1 ? undefined : end), 'find -exec');
      }
    }
    return;
  }
  if (name === 'git') {
    // Global options before the subcommand hide it from `git commit*`-style rules.
    const normalised = ['git'];
    let i = 1;
    let changed = false;
    while (i < words.length) {
      const word = words[i] ?? '';
      if (
        word === '-C' ||
        word === '-c' ||
        word === '--git-dir' ||
        word === '--work-tree' ||
        word === '--namespace'
      ) {
        i += 2;
        changed = true;
      } else if (
        /^--(git-dir|work-tree|namespace|exec-path|config-env)=/.test(word) ||
        /^-(c|C).+/.test(word)
      ) {
        i++;
        changed = true;
      } else if (
        /^(-P|-p|--no-pager|--paginate|--bare|--no-replace-objects|--literal-pathspecs|--no-optional-locks)$/.test(
          word,
        )
      ) {
        i++;
        changed = true;
      } else break;
    }
    if (changed) nestedWords([...normalised, ...words.slice(i)], 'git global options');
    return;
  }
  if (wrappers.has(name)) {
    let i = 1;
    if (name === 'timeout') {
      while (i < words.length && (words[i] ?? '').startsWith('-'))
        i += /^-(s|k)$/.test(words[i] ?? '') ? 2 : 1;
      i++; // the duration
    } else if (name === 'env' || name === 'cross-env') {
      while (
        i < words.length &&
        ((words[i] ?? '').startsWith('-') || assignmentPattern.test(words[i] ?? ''))
      ) {
        const word = words[i] ?? '';
        if (word === '--') {
          i++;
          break;
        }
        // `env -S 'cmd args'` splits the string into the command line it runs.
        const split = splitStringOption(word) ?? /^--split-string(?:=(.*))?$/.exec(word);
        if (split !== null) {
          const attached = split[1] !== undefined && split[1] !== '';
          const text = attached ? (split[1] ?? '') : (words[i + 1] ?? '');
          nestedScript([text, ...words.slice(attached ? i + 1 : i + 2)].join(' '), 'env -S');
          return;
        }
        i += /^(-u|-C|--unset|--chdir)$/.test(word) ? 2 : 1;
      }
    } else if (name === 'exec') {
      // `exec -a NAME cmd`: NAME is what the command is told it is called, not the command.
      while (i < words.length && (words[i] ?? '').startsWith('-')) {
        const word = words[i] ?? '';
        i += word === '-a' || /^-[cl]*a$/.test(word) ? 2 : 1;
        if (word === '--') break;
      }
    } else if (name === 'xargs') {
      while (i < words.length && (words[i] ?? '').startsWith('-')) {
        i += /^-(I|L|n|P|s|d|E|a)$/.test(words[i] ?? '') ? 2 : 1;
      }
    } else if (name === 'sudo' || name === 'doas') {
      while (i < words.length && (words[i] ?? '').startsWith('-')) {
        i += /^-(u|g|h|p|C|D|r|t|U)$/.test(words[i] ?? '') ? 2 : 1;
      }
      while (i < words.length && assignmentPattern.test(words[i] ?? '')) i++;
    } else if (name === 'nice' || name === 'ionice') {
      while (i < words.length && (words[i] ?? '').startsWith('-')) {
        i += /^-(n|c|p)$/.test(words[i] ?? '') ? 2 : 1;
      }
    } else if (name === 'watch' || name === 'strace' || name === 'stdbuf') {
      while (i < words.length && (words[i] ?? '').startsWith('-')) {
        i += /^-(n|o|p|e|s|i)$/.test(words[i] ?? '') ? 2 : 1;
      }
    } else if (name === 'chroot') {
      while (i < words.length && (words[i] ?? '').startsWith('-')) i++;
      i++; // the new root
    } else {
      while (i < words.length && (words[i] ?? '').startsWith('-')) i++;
    }
    nestedWords(words.slice(i), name);
  }
}

/**
 * `/^-[a-zA-Z]*S(.*)$/.exec(word)` without its quadratic backtracking on `-SSS…`: the text after
 * the last `S` of the leading letters, when no line break follows.
 */
function splitStringOption(word: string): [string, string] | null {
  const letters = /^-[a-zA-Z]*/.exec(word)?.[0] ?? '';
  const last = letters.lastIndexOf('S');
  if (last === -1) return null;
  const rest = word.slice(last + 1);
  return /[\n\r\u2028\u2029]/.test(rest) ? null : [word, rest];
}
