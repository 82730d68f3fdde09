import type { ToolCallContent, ToolResultMessage } from './messages.js';
import type { ToolLookup } from './tool-catalogue.js';

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

/** Structural equality of JSON values, key order ignored: `{a,b}` and `{b,a}` are the same. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    count++;
  }
  for (const key in right) if (Object.hasOwn(right, key)) count--;
  return count === 0;
}

/** One operation: the tool's canonical name and what identifies the call (see `ToolIdentity`). */
interface Operation {
  tool: string;
  identity: unknown;
}

/**
 * Counts identical operations in a row across a run's turns: the tool's canonical name plus its
 * `policy.identity` (named arguments, or a function of them; the whole arguments by default).
 */
export class LoopDetector {
  readonly #warnAfter: number;
  readonly #stopAfter: number;
  #last: Operation | undefined;
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
    registry: ToolLookup,
    /** The calls' arguments as the loop parsed them (by index), so they are not parsed again. */
    parsedArguments?: readonly unknown[],
  ): { stop: boolean; repeated?: string } {
    let stop = false;
    let repeated: string | undefined;
    calls.forEach((call, index) => {
      const operation = this.#operation(call, parsedArguments?.[index], registry);
      const last = this.#last;
      if (
        last !== undefined &&
        last.tool === operation.tool &&
        sameJson(last.identity, operation.identity)
      ) {
        this.#count += 1;
      } else {
        this.#last = operation;
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

  #operation(call: ToolCallContent, parsed: unknown, registry: ToolLookup): Operation {
    const tool = registry.get(call.name);
    let args: unknown = parsed;
    if (args === undefined) {
      try {
        args = JSON.parse(call.arguments);
      } catch {
        args = call.arguments;
      }
    }
    const identity = tool?.policy?.identity as ToolIdentity | undefined;
    let id: unknown = args;
    try {
      if (typeof identity === 'function') id = identity(args);
      else if (Array.isArray(identity) && args !== null && typeof args === 'object') {
        const record = args as Record<string, unknown>;
        id = identity.map((name) => record[name]);
      }
    } catch {
      id = args;
    }
    return { tool: tool?.name ?? call.name, identity: id };
  }
}
