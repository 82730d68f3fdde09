// What the CLI checks of a server's request before a person is asked about it: where a URL would
// open, how much a sampling request would send to the model, whether a form field asks for a secret.
import type { McpClientFeatures } from '@agent/tools-mcp';

type SamplingParams = Parameters<NonNullable<McpClientFeatures['sampling']>>[0];

/**
 * The scheme of a URL a server gave that is not a web address (`file:`, `smb:`, `javascript:`…),
 * or `undefined` for http and https. Only web addresses are handed to a browser: `xdg-open`,
 * `open` and `start` hand a `file:` URL to whatever program opens that file (a `.desktop` file
 * runs its command), and `smb:` sends the user's network credentials to the server named.
 */
export function notWebAddress(url: string): string | undefined {
  if (!URL.canParse(url)) return 'not a URL';
  const { protocol } = new URL(url);
  return protocol === 'http:' || protocol === 'https:' ? undefined : protocol;
}

/** Most output tokens a server's sampling request gets, whatever it asks for. */
export const maxSamplingTokens = 4096;
/** Most characters (text, image data, system prompt) a server may send to the model at once. */
export const maxSamplingCharacters = 200_000;

/** How much a sampling request sends to the model: its messages and their characters. */
export function samplingSize(params: SamplingParams): { messages: number; characters: number } {
  let characters = params.systemPrompt?.length ?? 0;
  for (const message of params.messages) {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    for (const block of blocks) characters += JSON.stringify(block)?.length ?? 0;
  }
  return { messages: params.messages.length, characters };
}

/** Words that name a secret in a field's name, title or description. */
const secretWords =
  /\b(pass(word|phrase|wd)?|secrets?|tokens?|api ?keys?|private ?keys?|credentials?|otp|pin|ssn)\b/i;

/** Whether a form field asks for what looks like a secret (its typing is then not echoed). */
export function looksSecret(
  name: string,
  field: { title?: string | undefined; description?: string | undefined },
): boolean {
  // Words apart: githubToken, api_key and client-secret name secrets too.
  const words = `${name} ${field.title ?? ''} ${field.description ?? ''}`
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]/g, ' ');
  return secretWords.test(words);
}
