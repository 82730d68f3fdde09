// Test-only (not published): preloaded into the official conformance suite's process
// (`node --import <this> …/conformance/dist/index.js server --url …`) so that every HTTP request it
// makes carries `Authorization: Bearer $MCP_BEARER_TOKEN` — the suite's `server` command has no
// option for a header. Its requests go through undici's global dispatcher (the SDK client through
// Node's fetch, its DNS-rebinding probe through undici's `request`); both read the dispatcher
// from the same global slot, which this replaces with one that adds the header.
import { createRequire } from 'node:module';

const token = process.env.MCP_BEARER_TOKEN;
if (token === undefined || token === '') throw new Error('bearer-token.mjs needs MCP_BEARER_TOKEN');

// The suite's own undici (process.argv[1] is the suite's entry point).
const { Agent, setGlobalDispatcher } = createRequire(process.argv[1])('undici');

/** The request's headers (an object, a flat [name, value, …] array, or none) with Authorization. */
function withAuthorization(headers) {
  const authorization = `Bearer ${token}`;
  if (headers === undefined || headers === null) return { authorization };
  if (Array.isArray(headers)) {
    const kept = [];
    for (let index = 0; index < headers.length; index += 2)
      if (String(headers[index]).toLowerCase() !== 'authorization')
        kept.push(headers[index], headers[index + 1]);
    return [...kept, 'authorization', authorization];
  }
  if (typeof headers[Symbol.iterator] === 'function') return withAuthorization([...headers].flat());
  const kept = Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'),
  );
  return { ...kept, authorization };
}

setGlobalDispatcher(
  new Agent().compose(
    (dispatch) => (options, handler) =>
      dispatch({ ...options, headers: withAuthorization(options.headers) }, handler),
  ),
);
