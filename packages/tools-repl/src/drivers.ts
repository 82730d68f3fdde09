/**
 * The programs each REPL child runs. Protocol: one JSON request per line on stdin
 * (`{"code": "..."}`), one JSON reply per line on the real stdout (`{"ok", "value"?, "error"?,
 * "stdout", "stderr"}`); what the code prints is captured into the reply, not written to the pipe.
 */

/** Node: a persistent `vm` context; top-level `let`/`const`/functions persist across cells. */
export const javascriptDriver = String.raw`
const vm = require('node:vm');
const util = require('node:util');
const readline = require('node:readline');
const realWrite = process.stdout.write.bind(process.stdout);
let out = [];
let err = [];
const capture = (sink) => (chunk, encoding, callback) => {
  sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  if (typeof encoding === 'function') encoding();
  else if (typeof callback === 'function') callback();
  return true;
};
const { Writable } = require('node:stream');
const sink = (which) => new Writable({ write(chunk, _encoding, callback) { which().push(String(chunk)); callback(); } });
const sandboxConsole = new console.Console({ stdout: sink(() => out), stderr: sink(() => err) });
const context = vm.createContext({
  console: sandboxConsole, require, process, Buffer, URL, URLSearchParams, TextEncoder, TextDecoder,
  setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate,
  queueMicrotask, structuredClone, fetch: globalThis.fetch, AbortController, performance,
});
context.globalThis = context;
const show = (value) => util.inspect(value, { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 100 });
async function evaluate(code) {
  let script;
  try {
    script = new vm.Script(code, { filename: 'cell.js' });
  } catch (error) {
    // Top-level await: run the cell as an async function (its declarations stay local to it).
    if (error instanceof SyntaxError && /await/.test(code)) {
      try {
        // A single expression keeps its value…
        script = new vm.Script('(async () => (\n' + code + '\n))()', { filename: 'cell.js' });
      } catch {
        // …statements run as the body of an async function.
        script = new vm.Script('(async () => {\n' + code + '\n})()', { filename: 'cell.js' });
      }
    } else throw error;
  }
  let value = script.runInContext(context, { displayErrors: false });
  if (value && typeof value.then === 'function') value = await value;
  return value;
}
const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on('line', async (line) => {
  const { code } = JSON.parse(line);
  out = []; err = [];
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  let reply;
  try {
    const value = await evaluate(code);
    reply = { ok: true, value: value === undefined ? undefined : show(value) };
  } catch (error) {
    reply = { ok: false, error: util.types.isNativeError(error) || (error && typeof error.stack === 'string') ? (error.stack || String(error)).split('\n').filter((l) => !/node:internal|at (Script|evaluate|Interface)/.test(l)).slice(0, 12).join('\n') : 'Thrown: ' + show(error) };
  } finally {
    process.stdout.write = realWrite;
    process.stderr.write = realWrite;
  }
  reply.stdout = out.join(''); reply.stderr = err.join('');
  realWrite(JSON.stringify(reply) + '\n');
});
process.on('unhandledRejection', (reason) => { err.push('Unhandled rejection: ' + show(reason) + '\n'); });
process.on('uncaughtException', (error) => { err.push('Uncaught: ' + (error && error.stack || String(error)) + '\n'); });
realWrite(JSON.stringify({ ready: true }) + '\n');
`;

/** Python: one globals dict; the value of a last expression is shown, like the interactive prompt. */
export const pythonDriver = String.raw`
import ast, io, json, sys, traceback, contextlib
real_stdout = sys.stdout
scope = {'__name__': '__main__'}
def run(code):
    tree = ast.parse(code, '<cell>', 'exec')
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, '<cell>', 'exec'), scope)
    if last is not None:
        value = eval(compile(last, '<cell>', 'eval'), scope)
        if value is not None:
            return repr(value)[:20000]
    return None
real_stdout.write(json.dumps({'ready': True}) + '\n'); real_stdout.flush()
for line in sys.stdin:
    code = json.loads(line)['code']
    out, err = io.StringIO(), io.StringIO()
    reply = {}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            value = run(code)
            reply = {'ok': True}
            if value is not None:
                reply['value'] = value
        except BaseException as error:
            if isinstance(error, SystemExit):
                reply = {'ok': False, 'error': 'SystemExit: ' + str(error.code)}
            else:
                lines = traceback.format_exception(type(error), error, error.__traceback__)
                reply = {'ok': False, 'error': ''.join(l for l in lines if 'python-driver' not in l).strip()}
    reply['stdout'] = out.getvalue()
    reply['stderr'] = err.getvalue()
    real_stdout.write(json.dumps(reply) + '\n'); real_stdout.flush()
`;
