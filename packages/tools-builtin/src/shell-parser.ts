/**
 * A bash command-line parser for permission checks: it finds every command a line would run
 * (lists, pipelines, subshells, groups, control flow, `$()`, backticks, `<()`, here-docs,
 * `eval`, `bash -c`, wrappers such as `sudo`/`xargs`/`find -exec`) and every file redirection.
 * It never executes or expands anything and never throws: malformed input is parsed as far
 * as possible and reported in `errors`.
 */
import {
  assignmentPattern,
  type ParsedShellCommand,
  type ShellCommand,
  type ShellRedirect,
} from './shell-command.js';
import { ShellLexer, type Word } from './shell-lexer.js';
import { expandNested } from './shell-nested.js';

export type { ParsedShellCommand, ShellCommand, ShellRedirect } from './shell-command.js';

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
const harmlessTargets = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  expand: boolean;
}

/** The grammar: lists, pipelines, subshells, control flow, `case`, redirections, here-docs. */
class ShellParser extends ShellLexer {
  readonly pendingHeredocs: PendingHeredoc[] = [];
  /** One entry per open `case`: whether the next item is a pattern or a body. */
  readonly caseStack: ('pattern' | 'body')[] = [];

  child(src: string, depth: number): ShellParser {
    return new ShellParser(src, this.out, depth);
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
        const body = this.child(this.src.slice(bodyStart, bodyEnd), this.depth);
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
          // `for NAME in words`: no command until `;`, newline or `do`. NAME is set for the
          // rest of the line (`for PATH in .` changes what every later command name runs).
          this.skipBlanks();
          const variable = this.parseWord();
          if (variable !== undefined) command.binds = [variable.value];
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
      expandNested(command, this.out, this.depth, parseNestedScript);
    } else if (command.assignments.length > 0 || (command.binds?.length ?? 0) > 0) {
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
}

/** Parses a nested script into `out` (the walker's way back into the grammar). */
function parseNestedScript(script: string, out: ParsedShellCommand, depth: number): void {
  new ShellParser(script, out, depth).parseSequence();
}

/** Parses a bash command line into the commands it would run. Never throws. */
export function parseShellCommand(source: string): ParsedShellCommand {
  const out: ParsedShellCommand = { commands: [], errors: [] };
  try {
    const parser = new ShellParser(source, out, 0);
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
