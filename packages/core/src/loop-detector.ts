import type { ToolCallContent, ToolResultMessage } from './messages.js';
import type { ToolRegistry } from './tool-registry.js';

/** When the loop treats repeated identical calls as a loop (`AgentOptions.loopDetection`). */
export interface LoopDetectionOptions {
  /** From this many identical operations in a row on, each result tells the model so [3]. */
  warnAfter?: number;
  /** At this many in a row the run ends with stop reason `loop-detected` [6]. */
  stopAfter?: number;
}

/** What makes two calls of a tool "the same operation" (`ToolPolicy.identity`). */
export type ToolIdentity = readonly string[] | ((args: unknown) => string);

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13
      ? 'th'
      : n % 10 === 1
        ? 'st'
        : n % 10 === 2
          ? 'nd'
          : n % 10 === 3
            ? 'rd'
            : 'th';
  return `${n}${suffix}`;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same operation. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/**
 * Counts identical operations in a row across a run's turns: the tool's canonical name plus its
 * `policy.identity` (named arguments, or a function of them; the whole arguments by default).
 */
export class LoopDetector {
  readonly #warnAfter: number;
  readonly #stopAfter: number;
  #last: string | undefined;
  #count = 0;

  constructor(options: LoopDetectionOptions = {}) {
    this.#warnAfter = options.warnAfter ?? 3;
    this.#stopAfter = options.stopAfter ?? 6;
  }

  /**
   * Looks at one executed batch, in call order: adds a note to each result that repeats the
   * operation `warnAfter` times or more, and says whether the run must stop.
   */
  observe(
    calls: readonly ToolCallContent[],
    results: ToolResultMessage[],
    registry: ToolRegistry,
  ): { stop: boolean; repeated?: string } {
    let stop = false;
    let repeated: string | undefined;
    calls.forEach((call, index) => {
      const key = this.#key(call, registry);
      if (key === this.#last) this.#count += 1;
      else {
        this.#last = key;
        this.#count = 1;
      }
      const result = results[index];
      if (this.#count >= this.#warnAfter && result !== undefined) {
        result.content = [
          ...result.content,
          {
            type: 'text',
            text:
              `Note: this is the ${ordinal(this.#count)} identical ${call.name} call in a row. You are repeating ` +
              `yourself; the same call gives the same result. Try something different` +
              (this.#count + 1 >= this.#stopAfter ? ', or the run will be stopped.' : '.'),
          },
        ];
      }
      if (this.#count >= this.#stopAfter) {
        stop = true;
        repeated = call.name;
      }
    });
    return repeated === undefined ? { stop } : { stop, repeated };
  }

  #key(call: ToolCallContent, registry: ToolRegistry): string {
    const tool = registry.get(call.name);
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {
      args = call.arguments;
    }
    const identity = tool?.policy?.identity as ToolIdentity | undefined;
    let id: string;
    try {
      if (typeof identity === 'function') id = identity(args);
      else if (Array.isArray(identity) && args !== null && typeof args === 'object') {
        const record = args as Record<string, unknown>;
        id = stableJson(identity.map((name) => record[name]));
      } else id = stableJson(args);
    } catch {
      id = stableJson(args);
    }
    return `${tool?.name ?? call.name}\u0000${id}`;
  }
}
