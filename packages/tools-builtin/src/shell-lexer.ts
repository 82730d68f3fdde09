// The word level of the shell parser: quotes, escapes, and the expansions inside a word
// (`$x`, `${…}`, `$(…)`, backticks, `$((…))`, `<(…)`), whose commands the grammar parses.
import { maxDepth, type ParsedShellCommand } from './shell-command.js';

/** `[…]` within one word, at most 256 characters long (sticky: tested at a position). */
const bracketExpression = /\[[^\s;&|()<>]{0,256}?\]/y;

/** One word as read from the line. */
export interface Word {
  raw: string;
  value: string;
  /** True when any part was quoted. */
  quoted: boolean;
  /** True when bash expands any part of it (see `ShellCommand.expanding`). */
  expands: boolean;
}

/**
 * Reads words at a cursor over the source. The commands inside a substitution are parsed by the
 * grammar (`ShellParser`), which extends this class: `child` and `parseSequence` are its.
 */
export abstract class ShellLexer {
  pos = 0;
  /** Set when an expansion (`$x`, `$(…)`, backticks…) was read in the word being parsed. */
  sawExpansion = false;

  constructor(
    readonly src: string,
    readonly out: ParsedShellCommand,
    readonly depth: number,
  ) {}

  /** A parser over `src` at `depth` that reports into the same result. */
  abstract child(src: string, depth: number): ShellLexer;

  /** Parses statements until `terminator` (not consumed) or the end. */
  abstract parseSequence(terminator?: ')' | ''): void;

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
    const inner = this.child(this.src, this.depth + 1);
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
      const inner = this.child(body, this.depth + 1);
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
