// git reads configuration from the environment as pairs, `GIT_CONFIG_KEY_<n>` and
// `GIT_CONFIG_VALUE_<n>` for each n below `GIT_CONFIG_COUNT` (CI systems pass an
// `http.extraheader` with a token this way), and refuses to run when one of them is missing
// (`error: missing config key GIT_CONFIG_KEY_0`). The name rules took every `GIT_CONFIG_KEY_<n>`
// for a key, so with any such pair in the environment every git command the tools ran failed.
// The pairs are judged whole instead: by the value (and a key that is a URL with a token), the
// ones kept numbered again from 0.

/** One pair of git's configuration in the environment. */
export interface GitConfigPair {
  index: number;
  key: string;
  value: string;
}

/** The pairs `GIT_CONFIG_COUNT` announces, in order; undefined without a count (or a count of 0). */
export function gitConfigPairs(
  env: Readonly<Record<string, string | undefined>>,
): GitConfigPair[] | undefined {
  const countText = env.GIT_CONFIG_COUNT;
  if (countText === undefined || !/^\d{1,4}$/.test(countText) || Number(countText) === 0)
    return undefined;
  const pairs: GitConfigPair[] = [];
  for (let index = 0; index < Number(countText); index++) {
    const key = env[`GIT_CONFIG_KEY_${index}`];
    const value = env[`GIT_CONFIG_VALUE_${index}`];
    if (key !== undefined && value !== undefined) pairs.push({ index, key, value });
  }
  return pairs;
}

/** Whether `name` is one of a pair's variables while a count announces pairs (`count` of them). */
export function isGitConfigPairName(name: string, count: number): boolean {
  const match = /^GIT_CONFIG_(?:KEY|VALUE)_(\d{1,4})$/.exec(name);
  return match !== null && Number(match[1]) < count;
}

/** The variables of `kept` pairs, numbered from 0, with their count (none when no pair is kept). */
export function gitConfigVariables(kept: readonly GitConfigPair[]): Record<string, string> {
  if (kept.length === 0) return {};
  const variables: Record<string, string> = { GIT_CONFIG_COUNT: String(kept.length) };
  for (const [index, pair] of kept.entries()) {
    variables[`GIT_CONFIG_KEY_${index}`] = pair.key;
    variables[`GIT_CONFIG_VALUE_${index}`] = pair.value;
  }
  return variables;
}
