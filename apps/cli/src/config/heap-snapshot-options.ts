// Node writes a heap snapshot — every string of the heap, so the CLI's keys (they live only there
// after the credential handover), an MCP server's OAuth token, the conversation — when
// `--heapsnapshot-signal=SIG` is set and any process of the user sends SIG (an unsandboxed
// command, hook or server of the session), or with `--heapsnapshot-near-heap-limit=N` when the
// heap fills. It goes to the working directory (or `--diagnostic-dir`): the workspace, where the
// model reads it and a commit takes it along. The CLI runs without both options, given in
// NODE_OPTIONS or on node's command line; the processes it starts get the NODE_OPTIONS it keeps.

/** The options that make Node write a heap snapshot on its own, as Node spells them. */
const snapshotOptions = ['--heapsnapshot-signal', '--heapsnapshot-near-heap-limit'] as const;

/** The snapshot option `word` is (Node reads `_` as `-` in a name), and whether it holds its value. */
function snapshotOption(word: string): { name: string; inline: boolean } | undefined {
  const equals = word.indexOf('=');
  const name = (equals === -1 ? word : word.slice(0, equals)).replace(/_/g, '-');
  if (!name.startsWith('--') || !(snapshotOptions as readonly string[]).includes(name))
    return undefined;
  return { name, inline: equals !== -1 };
}

/**
 * The words of `words` without the snapshot options and their values (`--opt=v` or `--opt v`), and
 * the options left out.
 */
export function withoutSnapshotOptions(words: readonly string[]): {
  kept: string[];
  removed: string[];
} {
  const kept: string[] = [];
  const removed: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? '';
    const option = snapshotOption(word);
    if (option === undefined) {
      kept.push(word);
      continue;
    }
    if (!removed.includes(option.name)) removed.push(option.name);
    // Its value as the next word (Node takes it so), unless that is an option itself.
    if (!option.inline && !(words[index + 1] ?? '--').startsWith('-')) index++;
  }
  return { kept, removed };
}

/**
 * NODE_OPTIONS' words as Node reads them (node.cc's ParseNodeOptionsEnvVar): split at spaces, a
 * `"` opening or closing a part where spaces count, `\` in there taking the next character.
 */
export function nodeOptionsWords(value: string): string[] {
  const words: string[] = [];
  let quoted = false;
  let startsWord = true;
  for (let index = 0; index < value.length; index++) {
    let char = value[index] ?? '';
    if (char === '\\' && quoted && index + 1 < value.length) char = value[++index] ?? '';
    else if (char === ' ' && !quoted) {
      startsWord = true;
      continue;
    } else if (char === '"') {
      quoted = !quoted;
      continue;
    }
    if (startsWord) words.push(char);
    else words[words.length - 1] += char;
    startsWord = false;
  }
  return words;
}

/** `words` as a NODE_OPTIONS value {@link nodeOptionsWords} reads back the same. */
export function nodeOptionsValue(words: readonly string[]): string {
  return words
    .map((word) => (/ |"|\\/.test(word) ? `"${word.replace(/["\\]/g, '\\$&')}"` : word))
    .join(' ');
}

/**
 * What the CLI runs without: `env.NODE_OPTIONS` and `execArgv` (node's own arguments) without the
 * snapshot options, and which were there (none: nothing to change).
 */
export function snapshotOptionsLeftOut(
  env: NodeJS.ProcessEnv,
  execArgv: readonly string[],
): { nodeOptions: string | undefined; execArgv: string[]; removed: string[] } {
  const fromEnv =
    env.NODE_OPTIONS === undefined
      ? undefined
      : withoutSnapshotOptions(nodeOptionsWords(env.NODE_OPTIONS));
  const fromArgv = withoutSnapshotOptions(execArgv);
  const removed = [...new Set([...(fromEnv?.removed ?? []), ...fromArgv.removed])];
  return {
    nodeOptions:
      fromEnv === undefined || fromEnv.removed.length === 0
        ? env.NODE_OPTIONS
        : nodeOptionsValue(fromEnv.kept),
    execArgv: fromArgv.kept,
    removed,
  };
}
