// What the shell parser finds: the commands a bash line would run, with their redirections.

/** A redirection of a command, e.g. `> ~/.bashrc` or `2>&1`. */
export interface ShellRedirect {
  /** The operator: `>`, `>>`, `<`, `>|`, `<>`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  operator: string;
  /** The file descriptor before the operator, when given (`2>`). */
  fd?: number;
  /** The target word with quotes removed (for here-docs: the delimiter). */
  target: string;
}

/** One simple command found in a command line. */
export interface ShellCommand {
  /** The words with quotes removed (expansions kept as written), command name first. */
  words: string[];
  /** `NAME=value` prefixes, as written. */
  assignments: string[];
  /** Redirections attached to the command. */
  redirects: ShellRedirect[];
  /** How the command was found: directly, or inside `bash -c`, `eval`, `sudo`, `git -C` normalisation… */
  via?: string;
  /**
   * Per word, whether bash expands it when it runs (an unquoted glob, brace or tilde, or any
   * parameter, command, arithmetic or process substitution, quoted or not), so its value is not
   * what the line says. Set on commands read from the line itself; absent on those found inside
   * another (wrappers, `bash -c`, `eval`, `find -exec`…).
   */
  expanding?: boolean[];
  /**
   * Variables the command sets for the rest of the line without an `=` word: the name of a
   * `for NAME in …` or `select NAME in …` loop (a command of its own, with no words).
   */
  binds?: string[];
}

/** Everything {@link parseShellCommand} found. */
export interface ParsedShellCommand {
  commands: ShellCommand[];
  /** Problems met (unterminated quotes, unbalanced parentheses…); parsing went on regardless. */
  errors: string[];
}

/** How deep commands nest (`$(…)` in `bash -c` in `eval`…) before the parser stops following. */
export const maxDepth = 12;
/** `NAME=value` (also `NAME+=value`, `NAME[i]=value`) before a command or after `env`/`sudo`. */
export const assignmentPattern = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

// Variables that change what a command runs or loads: as an environment prefix (`PATH=. ls`),
// or set earlier on the line (`PATH=.; ls`, `for PATH in .`, `printf -v PATH .`).
const dangerousVariable =
  /^(LD_|DYLD_|GIT_|BASH_ENV$|ENV$|BASH_FUNC|PROMPT_COMMAND$|PS[0-4]$|IFS$|PATH$|CDPATH$|PAGER$|MANPAGER$|EDITOR$|VISUAL$|SHELLOPTS$|BASHOPTS$|PERL5|PYTHON|NODE_OPTIONS$|NODE_PATH$|RUBYOPT$|RUBYLIB$|JAVA_TOOL_OPTIONS$|_JAVA_OPTIONS$|LESSOPEN$|LESSCLOSE$|SSH_ASKPASS|SUDO_ASKPASS|BROWSER$|TAR_OPTIONS$|GZIP$|ZDOTDIR$|HOME$|XDG_CONFIG_HOME$|npm_config_|NPM_CONFIG_)/;

/** True when setting the variable `name` changes what later commands run or load (`PATH`, `LD_PRELOAD`, `BASH_ENV`…). */
export function changesWhatRuns(name: string): boolean {
  return dangerousVariable.test(name);
}
