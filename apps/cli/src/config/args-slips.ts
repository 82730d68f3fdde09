// What the command line's parser says about a slip: an option given twice, an unknown option
// (the one meant), a value missing. Messages name what to type, not node:util's internals.
import { optionSpecs } from './option-specs.js';
import { closestWord, peerOption } from './suggest.js';

/**
 * An option that takes one value, given twice with different values (`--mode read-only … --mode
 * full-access`): the last one wins, as in other CLIs (an alias can be overridden), but silently
 * it was a surprise. Returns the notice to show, or undefined.
 */
export function repeatedOptionNotice(argv: readonly string[]): string | undefined {
  const separator = argv.indexOf('--');
  const words = separator < 0 ? argv : argv.slice(0, separator);
  const seen = new Map<string, string[]>();
  for (const [index, word] of words.entries()) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(word);
    const name = match?.[1];
    if (name === undefined || name === 'print') continue;
    const spec = (optionSpecs as Record<string, { type: string; multiple?: boolean }>)[name];
    if (spec === undefined || spec.type !== 'string' || spec.multiple === true) continue;
    const value = match?.[2] ?? words[index + 1] ?? '';
    seen.set(name, [...(seen.get(name) ?? []), value]);
  }
  const repeated = [...seen].filter(([, values]) => new Set(values).size > 1);
  if (repeated.length === 0) return undefined;
  return repeated
    .map(
      ([name, values]) =>
        `note: --${name} is given ${values.length} times (${values.map((value) => JSON.stringify(value)).join(', ')}): the last, ${JSON.stringify(values.at(-1))}, is used`,
    )
    .join('\n');
}

/** Node's parser messages name its internals ("argument is ambiguous"); say what to type instead. */
export function explainParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const option = /'(-{1,2}[^',\s]+)/.exec(message)?.[1] ?? 'an option';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const name = option.split('=')[0] ?? option;
      const peer = peerOption(name);
      if (peer !== undefined)
        return peer.startsWith('no flag: ')
          ? `Unknown option ${name}: there is no such flag; ${peer.slice('no flag: '.length)}`
          : `Unknown option ${name}: here it is ${peer}`;
      const long = name.startsWith('--')
        ? closestWord(name.slice(2), Object.keys(optionSpecs))
        : undefined;
      const meant = long === undefined ? shortOptionOf(name) : `--${long}`;
      return meant === undefined
        ? `Unknown option ${name} (agent --help lists them)`
        : `Unknown option ${name}: did you mean ${meant}? (agent --help lists them)`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message.includes('argument missing')) return `${option} needs a value`;
      if (message.includes('ambiguous'))
        return `${option} needs a value; one that starts with "-" must be attached: ${option.startsWith('--') ? `${option}=-x` : `${option}-x`}`;
      return `${option}: ${message}`;
    default:
      return message;
  }
}

/**
 * `-P` (Caps Lock, a habit from another tool): the short option in the other case, `-p (--print)`;
 * `--p` (a short option with two dashes): that short option (it was "Unknown option --p").
 */
function shortOptionOf(name: string): string | undefined {
  const doubled = /^--([a-zA-Z])$/.exec(name)?.[1];
  if (doubled !== undefined) {
    const long = Object.entries(optionSpecs).find(
      ([, spec]) => (spec as { short?: string }).short === doubled,
    )?.[0];
    return long === undefined ? undefined : `-${doubled} (--${long})`;
  }
  if (!/^-[a-zA-Z]$/.test(name)) return undefined;
  const letter = name.slice(1);
  const other = letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase();
  const long = Object.entries(optionSpecs).find(
    ([, spec]) => (spec as { short?: string }).short === other,
  )?.[0];
  return long === undefined ? undefined : `-${other} (--${long})`;
}
