// The JavaScript evaluated inside each fresh runtime before the script: it builds the script's
// globals (`tools`, `console`, `ToolCallError`, `declarations`) around three host functions it
// receives as arguments and keeps in its closure, so the script never sees them. Only strings
// cross the boundary: arguments go out as JSON text, results come back as a JSON envelope
// `{ ok: true, value } | { ok: false, kind, message }`.

/**
 * Evaluates to a function `(call, print, describe, names) => [finish, explain]`: `finish(value)`
 * is the text of a returned value as a JSON string, `explain(error)` the JSON text
 * `{ name, message, stack }` of a thrown one. Printed lines cross as JSON strings too: the engine
 * hands the host a string as C text, which ends at its first NUL (`"ok\0rest"` arrived as `ok`). Both run inside the script's runtime, under its CPU limit: a getter, `toJSON` or
 * replaced global the script left on a value runs there, never in the host.
 */
export const scriptPrelude = `(function (hostCall, hostPrint, hostDescribe, names) {
  'use strict';
  // The language's own functions as they were before the script ran: it may replace the globals.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toText = String;
  const isError = (value) => value instanceof Error;
  class ToolCallError extends Error {
    constructor(tool, kind, message) {
      super(message);
      this.name = 'ToolCallError';
      this.tool = tool;
      this.kind = kind;
    }
  }
  const tools = Object.create(null);
  for (const name of names) {
    tools[name] = async function (args) {
      const json = stringify(args === undefined ? {} : args);
      const reply = parse(await hostCall(name, json === undefined ? '{}' : json));
      if (reply.ok) return reply.value;
      throw new ToolCallError(name, reply.kind, reply.message);
    };
  }
  Object.freeze(tools);
  // A name the script cannot call rejects like a failed call (not \`TypeError: not a function\`),
  // saying which names it can call.
  const callable = names.length === 0 ? 'none' : names.join(', ');
  const toolsView = new Proxy(tools, {
    get(target, key) {
      if (typeof key !== 'string' || key in target || key === 'then' || key === 'toJSON')
        return target[key];
      return async function () {
        throw new ToolCallError(key, 'not-found', 'Tool not found: ' + key + ' (scripts can call: ' + callable + ')');
      };
    },
  });
  const text = (value) => {
    try {
      const shown = toText(value);
      return typeof shown === 'string' ? shown : '[unprintable value]';
    } catch {
      return '[unprintable value]';
    }
  };
  const show = (value) => {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return '[function]';
    if (typeof value === 'bigint') return value + 'n';
    if (typeof value === 'symbol') return text(value);
    if (isError(value)) return text(value.name) + ': ' + text(value.message);
    try {
      const json = stringify(value, null, 2);
      return typeof json === 'string' ? json : text(value);
    } catch {
      return text(value);
    }
  };
  const field = (error, key) => {
    try {
      const value = error[key];
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  };
  const explain = (error) => {
    if (error === null || (typeof error !== 'object' && typeof error !== 'function'))
      return stringify({ thrown: text(error) });
    const name = field(error, 'name');
    let message = field(error, 'message');
    if (message === undefined) message = show(error);
    return stringify({ name, message, stack: field(error, 'stack') });
  };
  const printer = (level) => (...values) => {
    let line = '';
    for (let index = 0; index < values.length; index++)
      line += (index === 0 ? '' : ' ') + show(values[index]);
    hostPrint(level, stringify(line));
  };
  const console = Object.freeze({
    log: printer('log'),
    info: printer('log'),
    debug: printer('log'),
    warn: printer('warn'),
    error: printer('error'),
  });
  const fixed = (value) => ({ value, writable: false, configurable: false, enumerable: false });
  Object.defineProperty(globalThis, 'tools', fixed(toolsView));
  Object.defineProperty(globalThis, 'console', fixed(console));
  Object.defineProperty(globalThis, 'ToolCallError', fixed(ToolCallError));
  Object.defineProperty(globalThis, 'declarations', fixed((...wanted) => hostDescribe(JSON.stringify(wanted))));
  return [(value) => (value === undefined ? undefined : stringify(show(value))), explain];
})`;

/** Wraps the script so top-level `await` and `return` work; the script's line numbers stay as written. */
export function wrapScript(script: string): string {
  return `(async () => {${script}\n})()`;
}
