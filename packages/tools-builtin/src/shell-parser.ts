/**
 * A bash command-line parser for permission checks: it finds every command a line would run
 * (lists, pipelines, subshells, groups, control flow, `$()`, backticks, `<()`, here-docs,
 * `eval`, `bash -c`, wrappers such as `sudo`/`xargs`/`find -exec`) and every file redirection.
 * It never executes or expands anything and never throws: malformed input is parsed as far
 * as possible and reported in `errors`.
 */

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
}

/** Everything {@link parseShellCommand} found. */
export interface ParsedShellCommand {
  commands: ShellCommand[];
  /** Problems met (unterminated quotes, unbalanced parentheses…); parsing went on regardless. */
  errors: string[];
}

const maxDepth = 12;
const reservedWords = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  '!',
  '{',
  '}',
  'time',
  'coproc',
]);
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
const assignmentPattern = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const harmlessTargets = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);
/** `[…]` within one word, at most 256 characters long (sticky: tested at a position). */
const bracketExpression = /\[[^\s;&|()<>]{0,256}?\]/y;

interface Word {
  raw: string;
  value: string;
  /** True when any part was quoted. */
  quoted: boolean;
  /** True when bash expands any part of it (see `ShellCommand.expanding`). */
  expands: boolean;
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  expand: boolean;
}

class Parser {
  pos = 0;
  readonly pendingHeredocs: PendingHeredoc[] = [];
  /** One entry per open `case`: whether the next item is a pattern or a body. */
  readonly caseStack: ('pattern' | 'body')[] = [];
  /** Set when an expansion (`$x`, `$(…)`, backticks…) was read in the word being parsed. */
  sawExpansion = false;

  constructor(
    readonly src: string,
    readonly out: ParsedShellCommand,
    readonly depth: number,
  ) {}

  get eof(): boolean {
    return this.pos >= this.src.length;
  }

  peek(offset = 0): string {
    return this.src[this.pos + offset] ?? '';
  }

  startsWith(text: string): boolean {
    return this.src.startsWith(text, this.pos);
  }

  error(message: string): void {
    if (this.out.errors.length < 50) this.out.errors.push(message);
  }

  /** Spaces, tabs and line continuations; not newlines. */
  skipBlanks(): void {
    while (!this.eof) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\r') this.pos++;
      else if (c === '\\' && this.peek(1) === '\n') this.pos += 2;
      else break;
    }
  }

  skipComment(): void {
    while (!this.eof && this.peek() !== '\n') this.pos++;
  }

  /** After a newline: reads the bodies of pending here-docs. */
  readHeredocs(): void {
    const pending = this.pendingHeredocs.splice(0);
    for (const heredoc of pending) {
      const bodyStart = this.pos;
      let bodyEnd = this.src.length;
      while (!this.eof) {
        const lineEnd = this.src.indexOf('\n', this.pos);
        const end = lineEnd === -1 ? this.src.length : lineEnd;
        let line = this.src.slice(this.pos, end);
        if (heredoc.stripTabs) line = line.replace(/^\t+/, '');
        if (line === heredoc.delimiter || line === `${heredoc.delimiter}\r`) {
          bodyEnd = this.pos;
          this.pos = lineEnd === -1 ? this.src.length : lineEnd + 1;
          break;
        }
        this.pos = lineEnd === -1 ? this.src.length : lineEnd + 1;
      }
      if (heredoc.expand) {
        // An unquoted delimiter: the body undergoes command substitution.
        const body = new Parser(this.src.slice(bodyStart, bodyEnd), this.out, this.depth);
        body.scanExpansions();
      }
    }
  }

  /** Parses statements until `terminator` (not consumed) or the end. */
  parseSequence(terminator: ')' | '' = ''): void {
    while (!this.eof) {
      this.skipBlanks();
      if (this.eof) return;
      const c = this.peek();
      if (terminator !== '' && c === terminator) return;
      if (c === '#') {
        this.skipComment();
        continue;
      }
      if (c === '\n') {
        this.pos++;
        this.readHeredocs();
        continue;
      }
      if (c === ';' || c === '&' || c === '|') {
        if (this.startsWith('&>')) {
          this.parseSimpleCommand();
          continue;
        }
        const op = this.readOperator();
        if ((op === ';;' || op === ';&' || op === ';;&') && this.caseStack.length > 0) {
          this.caseStack[this.caseStack.length - 1] = 'pattern';
        }
        continue;
      }
      if (c === ')') {
        this.error(`unexpected ')' at ${this.pos}`);
        this.pos++;
        continue;
      }
      if (this.caseStack.at(-1) === 'pattern') {
        this.parseCasePattern();
        continue;
      }
      if (c === '(') {
        if (this.peek(1) === '(') {
          this.pos += 2;
          this.scanArithmetic();
          continue;
        }
        this.pos++;
        this.parseSequence(')');
        if (this.peek() === ')') this.pos++;
        else this.error('unterminated subshell');
        continue;
      }
      this.parseSimpleCommand();
    }
  }

  readOperator(): string {
    for (const op of [';;&', ';;', ';&', '&&', '||', '|&', ';', '&', '|']) {
      if (this.startsWith(op)) {
        this.pos += op.length;
        return op;
      }
    }
    this.pos++;
    return this.src[this.pos - 1] ?? '';
  }

  /** Inside `case … in`: a pattern list up to `)`, or `esac`. */
  parseCasePattern(): void {
    const save = this.pos;
    const word = this.parseWord();
    if (word !== undefined && word.raw === 'esac') {
      this.caseStack.pop();
      return;
    }
    this.pos = save;
    let depth = 0;
    while (!this.eof) {
      const c = this.peek();
      if (c === '\\') {
        this.pos += 2;
        continue;
      }
      if (c === "'" || c === '"') {
        this.parseWord();
        continue;
      }
      if (c === '$' && this.peek(1) === '(') {
        this.parseWord();
        continue;
      }
      if (c === '(') depth++;
      if (c === ')') {
        if (depth === 0) {
          this.pos++;
          break;
        }
        depth--;
      }
      this.pos++;
    }
    this.caseStack[this.caseStack.length - 1] = 'body';
  }

  isRedirectStart(): boolean {
    let i = this.pos;
    while (/[0-9]/.test(this.src[i] ?? '')) i++;
    if (i === this.pos && this.src[i] === '{') {
      // {varname}> form
      const close = this.src.indexOf('}', i);
      if (close > i && /^\{[A-Za-z_][A-Za-z0-9_]*\}[<>]/.test(this.src.slice(i, close + 2)))
        return true;
      return false;
    }
    const c = this.src[i];
    if (c === '<' || c === '>') return this.src[i + 1] !== '(';
    if (i === this.pos && c === '&' && this.src[i + 1] === '>') return true;
    return false;
  }

  parseRedirect(): ShellRedirect {
    let fd: number | undefined;
    const digits = /^[0-9]+/.exec(this.src.slice(this.pos, this.pos + 10));
    if (digits !== null) {
      fd = Number(digits[0]);
      this.pos += digits[0].length;
    } else if (this.peek() === '{') {
      this.pos = this.src.indexOf('}', this.pos) + 1;
    }
    let operator = '';
    for (const op of ['&>>', '<<<', '<<-', '&>', '>>', '>|', '>&', '<&', '<>', '<<', '>', '<']) {
      if (this.startsWith(op)) {
        operator = op;
        this.pos += op.length;
        break;
      }
    }
    this.skipBlanks();
    const target = this.parseWord();
    if (target === undefined) this.error(`redirection ${operator} without a target`);
    const redirect: ShellRedirect = { operator, target: target?.value ?? '' };
    if (fd !== undefined) redirect.fd = fd;
    if ((operator === '<<' || operator === '<<-') && target !== undefined) {
      this.pendingHeredocs.push({
        delimiter: target.value,
        stripTabs: operator === '<<-',
        expand: !target.quoted,
      });
    }
    return redirect;
  }

  parseSimpleCommand(): void {
    const command: ShellCommand = { words: [], assignments: [], redirects: [], expanding: [] };
    const rawWords: Word[] = [];
    /** After the reserved word `time`, whose `-p` is an option of its own. */
    let timed = false;
    while (!this.eof) {
      this.skipBlanks();
      if (this.eof) break;
      const c = this.peek();
      if (this.isRedirectStart()) {
        command.redirects.push(this.parseRedirect());
        continue;
      }
      if (c === '\n' || c === ';' || c === '&' || c === '|' || c === ')') break;
      if (c === '(') {
        if (rawWords.length === 1 && /^\(\s*\)/.test(this.src.slice(this.pos))) {
          // `name() { …; }`: a function definition; its body follows as a group.
          this.pos = this.src.indexOf(')', this.pos) + 1;
          rawWords.length = 0;
          command.words.length = 0;
          command.expanding = [];
          break;
        }
        if (rawWords.length === 0 && command.assignments.length === 0) break;
        // Stray '(' inside a command (e.g. extglob): parse it as a subshell, conservatively.
        this.pos++;
        this.parseSequence(')');
        if (this.peek() === ')') this.pos++;
        continue;
      }
      if (c === '#') {
        this.skipComment();
        break;
      }
      const word = this.parseWord();
      if (word === undefined) {
        this.pos++;
        continue;
      }
      if (timed && rawWords.length === 0 && !word.quoted && /^(-p+|--)$/.test(word.raw)) continue;
      if (rawWords.length === 0 && assignmentPattern.test(word.raw)) {
        if (word.raw.endsWith('=') && this.peek() === '(') this.skipArrayValue();
        command.assignments.push(word.raw);
        continue;
      }
      if (rawWords.length === 0 && !word.quoted) {
        if (word.raw === 'case') {
          this.skipBlanks();
          this.parseWord();
          this.skipBlanks();
          this.parseWord(); // `in`
          this.caseStack.push('pattern');
          this.flush(command);
          return;
        }
        if (word.raw === 'esac' && this.caseStack.length > 0) {
          this.caseStack.pop();
          continue;
        }
        if (word.raw === 'for' || word.raw === 'select') {
          if (this.startsWith(' ((') || this.startsWith('((')) {
            this.skipBlanks();
            this.pos += 2;
            this.scanArithmetic();
            this.flush(command);
            return;
          }
          // `for NAME in words`: no command until `;`, newline or `do`.
          while (!this.eof) {
            this.skipBlanks();
            const next = this.peek();
            if (next === '\n' || next === ';' || next === '&' || next === '|' || next === '') break;
            const skipped = this.parseWord();
            if (skipped === undefined) this.pos++;
            else if (skipped.raw === 'do') break;
          }
          this.flush(command);
          return;
        }
        if (word.raw === 'function') {
          this.skipBlanks();
          this.parseWord();
          this.skipBlanks();
          if (this.startsWith('()')) this.pos += 2;
          this.flush(command);
          return;
        }
        if (word.raw === 'time') {
          // `time -p cmd` (and `time -- cmd`): the option is not the command.
          timed = true;
          continue;
        }
        if (reservedWords.has(word.raw)) continue;
        if (word.raw === '[[') {
          this.parseDoubleBracket(command);
          this.flush(command);
          return;
        }
      }
      rawWords.push(word);
      command.words.push(word.value);
      command.expanding?.push(word.expands);
    }
    this.flush(command);
  }

  flush(command: ShellCommand): void {
    if (command.words.length > 0 || command.redirects.length > 0) {
      this.out.commands.push(command);
      expandNested(command, this.out, this.depth);
    } else if (command.assignments.length > 0) {
      this.out.commands.push(command);
    }
  }

  /** `[[ … ]]`: a test; `<`, `>`, `&&`, `||` inside it are operators of the test. */
  parseDoubleBracket(command: ShellCommand): void {
    command.words.push('[[');
    command.expanding?.push(false);
    while (!this.eof) {
      this.skipBlanks();
      const c = this.peek();
      if (c === '\n' && this.pendingHeredocs.length === 0) {
        this.pos++;
        continue;
      }
      if (c === '') break;
      if (this.startsWith('&&') || this.startsWith('||')) {
        this.pos += 2;
        continue;
      }
      if (
        c === '<' ||
        c === '>' ||
        c === '(' ||
        c === ')' ||
        c === '!' ||
        c === '&' ||
        c === '|' ||
        c === ';'
      ) {
        this.pos++;
        continue;
      }
      const word = this.parseWord();
      if (word === undefined) {
        this.pos++;
        continue;
      }
      command.words.push(word.value);
      command.expanding?.push(word.expands);
      if (word.raw === ']]') return;
    }
    this.error('unterminated [[');
  }

  skipArrayValue(): void {
    this.pos++;
    while (!this.eof) {
      this.skipBlanks();
      const c = this.peek();
      if (c === ')') {
        this.pos++;
        return;
      }
      if (c === '\n') {
        this.pos++;
        continue;
      }
      if (this.parseWord() === undefined) this.pos++;
    }
    this.error('unterminated array assignment');
  }

  /** `$(( … ))` or `(( … ))` after the opening parentheses: scans to `))`, parsing substitutions. */
  scanArithmetic(): void {
    let depth = 0;
    while (!this.eof) {
      const c = this.peek();
      if (c === '$' && this.peek(1) === '(' && this.peek(2) !== '(') {
        this.pos += 2;
        this.parseSubstitution(')');
        continue;
      }
      if (c === '`') {
        this.parseBackticks();
        continue;
      }
      if (c === '(') depth++;
      if (c === ')') {
        if (depth === 0 && this.peek(1) === ')') {
          this.pos += 2;
          return;
        }
        depth--;
      }
      this.pos++;
    }
    this.error('unterminated arithmetic');
  }

  /** After `$(`: the commands up to the matching `)`. */
  parseSubstitution(close: ')'): void {
    if (this.depth >= maxDepth) {
      // Too deep to trust: skip to the matching parenthesis and report it.
      this.error('nesting too deep');
      let depth = 0;
      while (!this.eof) {
        const c = this.peek();
        if (c === '(') depth++;
        if (c === ')') {
          if (depth === 0) break;
          depth--;
        }
        this.pos++;
      }
      if (this.peek() === close) this.pos++;
      return;
    }
    const inner = new Parser(this.src, this.out, this.depth + 1);
    inner.pos = this.pos;
    inner.parseSequence(close);
    this.pos = inner.pos;
    if (this.peek() === close) this.pos++;
    else this.error('unterminated command substitution');
  }

  /** At a backtick: the commands inside, with `\`` and `\\` unescaped. */
  parseBackticks(): string {
    const start = this.pos;
    this.pos++;
    let body = '';
    while (!this.eof && this.peek() !== '`') {
      if (this.peek() === '\\' && /[`\\$]/.test(this.peek(1))) {
        body += this.peek(1);
        this.pos += 2;
        continue;
      }
      body += this.peek();
      this.pos++;
    }
    if (this.eof) this.error('unterminated backtick');
    else this.pos++;
    if (this.depth < maxDepth) {
      const inner = new Parser(body, this.out, this.depth + 1);
      inner.parseSequence();
    } else this.error('nesting too deep');
    return this.src.slice(start, this.pos);
  }

  /** `${ … }` after `${`: scans to the matching brace, parsing substitutions inside. */
  scanParameter(): void {
    let depth = 0;
    while (!this.eof) {
      const c = this.peek();
      if (c === '\\') {
        this.pos += 2;
        continue;
      }
      if (c === "'") {
        const close = this.src.indexOf("'", this.pos + 1);
        this.pos = close === -1 ? this.src.length : close + 1;
        continue;
      }
      if (c === '"') {
        this.pos++;
        this.parseDoubleQuoted();
        continue;
      }
      if (c === '`') {
        this.parseBackticks();
        continue;
      }
      if (c === '$' && this.peek(1) === '(') {
        if (this.peek(2) === '(') {
          this.pos += 3;
          this.scanArithmetic();
        } else {
          this.pos += 2;
          this.parseSubstitution(')');
        }
        continue;
      }
      if (c === '$' && this.peek(1) === '{') {
        this.pos += 2;
        depth++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        if (depth === 0) return;
        depth--;
        continue;
      }
      this.pos++;
    }
    this.error('unterminated ${');
  }

  /** Inside double quotes after the opening `"`: returns the value, consumes the closing quote. */
  parseDoubleQuoted(): string {
    let value = '';
    while (!this.eof) {
      const c = this.peek();
      if (c === '"') {
        this.pos++;
        return value;
      }
      if (c === '\\') {
        const next = this.peek(1);
        if (next === '\n') {
          this.pos += 2;
          continue;
        }
        if (/[$`"\\]/.test(next)) {
          value += next;
          this.pos += 2;
          continue;
        }
        value += c;
        this.pos++;
        continue;
      }
      if (c === '$' || c === '`') {
        value += this.parseDollarOrBacktick();
        continue;
      }
      value += c;
      this.pos++;
    }
    this.error('unterminated double quote');
    return value;
  }

  /** At `$` or a backtick: parses an expansion and returns its raw text. */
  parseDollarOrBacktick(): string {
    const start = this.pos;
    if (this.peek() === '`') {
      const text = this.parseBackticks();
      this.sawExpansion = true;
      return text;
    }
    const next = this.peek(1);
    if (next === '(') {
      if (this.peek(2) === '(') {
        this.pos += 3;
        this.scanArithmetic();
      } else {
        this.pos += 2;
        this.parseSubstitution(')');
      }
    } else if (next === '{') {
      this.pos += 2;
      this.scanParameter();
    } else if (/[A-Za-z_]/.test(next)) {
      this.pos++;
      while (/[A-Za-z0-9_]/.test(this.peek())) this.pos++;
    } else if (/[0-9@*#?$!-]/.test(next) && next !== '') {
      this.pos += 2;
    } else {
      this.pos++;
    }
    // A lone `$` (`"cost: 5$"`) is a literal dollar sign, not an expansion.
    if (this.pos - start > 1) this.sawExpansion = true;
    return this.src.slice(start, this.pos);
  }

  /** Scans free text (a here-doc body) for expansions, e.g. `$(cmd)` and backticks. */
  scanExpansions(): void {
    while (!this.eof) {
      const c = this.peek();
      if (c === '\\') {
        this.pos += 2;
        continue;
      }
      if (c === '$' || c === '`') {
        this.parseDollarOrBacktick();
        continue;
      }
      this.pos++;
    }
  }

  /** One word at the cursor, or undefined when the cursor is on a metacharacter. */
  parseWord(): Word | undefined {
    const start = this.pos;
    let value = '';
    let quoted = false;
    let expands = false;
    let unquotedBrace = false;
    // Words inside a substitution are parsed in the middle of this one: keep the outer flag.
    const outerSawExpansion = this.sawExpansion;
    this.sawExpansion = false;
    const finish = (word: Omit<Word, 'expands'>): Word => {
      const braces = unquotedBrace && /,|\.\./.test(word.value);
      const result = { ...word, expands: expands || braces || this.sawExpansion };
      this.sawExpansion = outerSawExpansion;
      return result;
    };
    while (!this.eof) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\n' || c === ';' || c === '&' || c === '|') break;
      if (c === '\r') break;
      if (c === '(' || c === ')') break;
      if (c === '<' || c === '>') {
        if (this.peek(1) === '(') {
          // Process substitution.
          this.pos += 2;
          this.parseSubstitution(')');
          value += this.src.slice(start, this.pos);
          expands = true;
          continue;
        }
        break;
      }
      if (c === '\\') {
        const next = this.peek(1);
        this.pos += 2;
        if (next !== '\n') {
          value += next;
          quoted = true;
        }
        continue;
      }
      if (c === "'") {
        quoted = true;
        const close = this.src.indexOf("'", this.pos + 1);
        if (close === -1) {
          this.error('unterminated single quote');
          value += this.src.slice(this.pos + 1);
          this.pos = this.src.length;
        } else {
          value += this.src.slice(this.pos + 1, close);
          this.pos = close + 1;
        }
        continue;
      }
      if (c === '"') {
        quoted = true;
        this.pos++;
        value += this.parseDoubleQuoted();
        continue;
      }
      if (c === '$' && this.peek(1) === "'") {
        quoted = true;
        this.pos += 2;
        value += this.parseAnsiC();
        continue;
      }
      if (c === '$' && this.peek(1) === '"') {
        quoted = true;
        this.pos += 2;
        value += this.parseDoubleQuoted();
        continue;
      }
      if (c === '$' || c === '`') {
        value += this.parseDollarOrBacktick();
        continue;
      }
      if (c === '{' && this.pos === start) {
        // `{` alone is a group keyword; `{a,b}` is a word.
        const after = this.peek(1);
        if (after === '' || after === ' ' || after === '\t' || after === '\n') {
          this.pos++;
          return finish({ raw: '{', value: '{', quoted: false });
        }
      }
      // Unquoted glob characters are expanded by bash (`[` only with a `]` after it), a tilde at
      // the start or after `=`/`:` (`--opt=~/x`), a brace only with `,` or `..`.
      if (c === '*' || c === '?') expands = true;
      if (c === '[') {
        // A bracket expression needs its `]` in the same word (looked for a bounded way ahead).
        bracketExpression.lastIndex = this.pos;
        if (bracketExpression.test(this.src)) expands = true;
      }
      if (c === '~' && (this.pos === start || /[=:]/.test(this.src[this.pos - 1] ?? '')))
        expands = true;
      if (c === '{') unquotedBrace = true;
      value += c;
      this.pos++;
    }
    if (this.pos === start) {
      this.sawExpansion = outerSawExpansion;
      return undefined;
    }
    return finish({ raw: this.src.slice(start, this.pos), value, quoted });
  }

  /** `$'…'` after the opening quote. */
  parseAnsiC(): string {
    let value = '';
    const escapes: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
      '?': '?',
    };
    while (!this.eof) {
      const c = this.peek();
      if (c === "'") {
        this.pos++;
        return value;
      }
      if (c === '\\') {
        const next = this.peek(1);
        const hex = /^x([0-9a-fA-F]{1,2})/.exec(this.src.slice(this.pos + 1, this.pos + 4));
        const octal = /^[0-7]{1,3}/.exec(this.src.slice(this.pos + 1, this.pos + 4));
        if (hex?.[1] !== undefined) {
          value += String.fromCharCode(Number.parseInt(hex[1], 16));
          this.pos += 1 + hex[0].length;
        } else if (octal !== null) {
          value += String.fromCharCode(Number.parseInt(octal[0], 8) & 0xff);
          this.pos += 1 + octal[0].length;
        } else {
          value += escapes[next] ?? `\\${next}`;
          this.pos += 2;
        }
        continue;
      }
      value += c;
      this.pos++;
    }
    this.error("unterminated $'");
    return value;
  }
}

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

/** Commands hidden inside another: `bash -c`, `eval`, wrappers, `find -exec`, `git -C`. */
function expandNested(command: ShellCommand, out: ParsedShellCommand, depth: number): void {
  if (depth >= maxDepth) {
    // Too deep to follow: say so, so the analysis treats the line as one it cannot name.
    if (out.errors.length < 50) out.errors.push('nesting too deep');
    return;
  }
  const words = command.words;
  const name = basename(words[0] ?? '');
  const nestedScript = (script: string, via: string) => {
    const before = out.commands.length;
    const inner = new Parser(script, out, depth + 1);
    inner.parseSequence();
    for (const found of out.commands.slice(before)) found.via ??= via;
  };
  const nestedWords = (rest: readonly string[], via: string) => {
    if (rest.length === 0) return;
    const nested: ShellCommand = { words: [...rest], assignments: [], redirects: [], via };
    out.commands.push(nested);
    expandNested(nested, out, depth + 1);
  };

  const runner = runners[name];
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
      if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(word)) {
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
        const split = /^-[a-zA-Z]*S(.*)$/.exec(word) ?? /^--split-string(?:=(.*))?$/.exec(word);
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

/** Parses a bash command line into the commands it would run. Never throws. */
export function parseShellCommand(source: string): ParsedShellCommand {
  const out: ParsedShellCommand = { commands: [], errors: [] };
  try {
    const parser = new Parser(source, out, 0);
    parser.parseSequence();
    if (parser.pendingHeredocs.length > 0) out.errors.push('unterminated here-document');
    if (parser.caseStack.length > 0) out.errors.push('unterminated case');
  } catch (error) {
    // Defensive: the parser is written not to throw; if it does, report and keep what we have.
    out.errors.push(`parser failure: ${String(error)}`);
  }
  return out;
}

/** Redirections that write to or read from a named file (not fd duplications, not `/dev/null`). */
export function fileRedirects(command: ShellCommand): ShellRedirect[] {
  return command.redirects.filter((redirect) => {
    if (redirect.operator === '<<' || redirect.operator === '<<-' || redirect.operator === '<<<')
      return false;
    if (
      (redirect.operator === '>&' || redirect.operator === '<&') &&
      /^([0-9]+-?|-)$/.test(redirect.target)
    )
      return false;
    return !harmlessTargets.has(redirect.target);
  });
}
