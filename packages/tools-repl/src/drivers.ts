/**
 * The programs each REPL child runs. Protocol: one JSON request per line on stdin
 * (`{"code": "...", "nonce": "..."}`), one JSON reply per line on the real stdout (`{"nonce",
 * "ok", "value"?, "error"?, "stdout", "stderr"}`); what the code prints is captured into the
 * reply, not written to the pipe. The reply carries the request's nonce: a subprocess a cell
 * starts writes to that same file descriptor, and a JSON line it prints (`cat events.jsonl`)
 * must not pass for the reply.
 */

/** Node: a persistent `vm` context; top-level `let`/`const`/functions persist across cells. */
export const javascriptDriver = String.raw`
const vm = require('node:vm');
const util = require('node:util');
const readline = require('node:readline');
const realWrite = process.stdout.write.bind(process.stdout);
// What a cell prints is kept up to this many characters at each end of a stream; the middle is
// counted and dropped here, so a cell printing gigabytes sends the host one bounded reply line.
const captureLimit = 500000;
const newCapture = () => ({ head: '', tail: [], tailLength: 0, dropped: 0 });
const keep = (into, text) => {
  if (into.head.length < captureLimit) {
    const room = captureLimit - into.head.length;
    into.head += text.slice(0, room);
    text = text.slice(room);
    if (text === '') return;
  }
  into.tail.push(text);
  into.tailLength += text.length;
  while (into.tail.length > 1 && into.tailLength - into.tail[0].length >= captureLimit) {
    const first = into.tail.shift();
    into.tailLength -= first.length;
    into.dropped += first.length;
  }
};
const captured = (from) => {
  let tail = from.tail.join('');
  let dropped = from.dropped;
  if (tail.length > captureLimit) {
    dropped += tail.length - captureLimit;
    tail = tail.slice(-captureLimit);
  }
  return dropped === 0 ? from.head + tail : from.head + '\n[… ' + dropped + ' characters dropped …]\n' + tail;
};
const clip = (text) => (text.length > captureLimit ? text.slice(0, captureLimit) + '…' : text);
let out = newCapture();
let err = newCapture();
const capture = (sink) => (chunk, encoding, callback) => {
  keep(sink, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  if (typeof encoding === 'function') encoding();
  else if (typeof callback === 'function') callback();
  return true;
};
const { Writable } = require('node:stream');
const sink = (which) => new Writable({ write(chunk, _encoding, callback) { keep(which(), String(chunk)); callback(); } });
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
  const { code, nonce } = JSON.parse(line);
  out = newCapture(); err = newCapture();
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  let reply;
  try {
    const value = await evaluate(code);
    reply = { ok: true, value: value === undefined ? undefined : clip(show(value)) };
  } catch (error) {
    reply = { ok: false, error: clip(util.types.isNativeError(error) || (error && typeof error.stack === 'string') ? (error.stack || String(error)).split('\n').filter((l) => !/node:internal|at (Script|evaluate|Interface)/.test(l)).slice(0, 12).join('\n') : 'Thrown: ' + show(error)) };
  } finally {
    process.stdout.write = realWrite;
    process.stderr.write = realWrite;
  }
  reply.stdout = captured(out); reply.stderr = captured(err); reply.nonce = nonce;
  realWrite(JSON.stringify(reply) + '\n');
});
process.on('unhandledRejection', (reason) => { keep(err, 'Unhandled rejection: ' + show(reason) + '\n'); });
process.on('uncaughtException', (error) => { keep(err, 'Uncaught: ' + (error && error.stack || String(error)) + '\n'); });
realWrite(JSON.stringify({ ready: true }) + '\n');
`;

/** Python: one globals dict; the value of a last expression is shown, like the interactive prompt. */
export const pythonDriver = String.raw`
import sys
# python -c puts the working directory first on sys.path, and the workspace is the repository's:
# its own ast.py or json.py would run in place of the standard library this driver imports (and
# the modules those import later). The directory is on sys.path only while a cell runs, so a cell
# still imports the project's modules.
WORKSPACE_PATH = sys.path.pop(0) if sys.path and sys.path[0] == '' else None
import ast, collections, io, json, traceback, contextlib
real_stdout = sys.stdout
# What a cell prints is kept up to this many characters at each end of a stream (as in Node).
CAPTURE_LIMIT = 500000
class Capture(io.TextIOBase):
    def __init__(self):
        self.head, self.head_length = [], 0
        self.tail, self.tail_length, self.dropped = collections.deque(), 0, 0
    def writable(self):
        return True
    def write(self, text):
        written = len(text)
        if self.head_length < CAPTURE_LIMIT:
            room = CAPTURE_LIMIT - self.head_length
            self.head.append(text[:room])
            self.head_length += min(written, room)
            text = text[room:]
        if text:
            self.tail.append(text)
            self.tail_length += len(text)
            while len(self.tail) > 1 and self.tail_length - len(self.tail[0]) >= CAPTURE_LIMIT:
                first = self.tail.popleft()
                self.tail_length -= len(first)
                self.dropped += len(first)
        return written
    def getvalue(self):
        tail, dropped = ''.join(self.tail), self.dropped
        if len(tail) > CAPTURE_LIMIT:
            dropped += len(tail) - CAPTURE_LIMIT
            tail = tail[-CAPTURE_LIMIT:]
        head = ''.join(self.head)
        return head + tail if dropped == 0 else head + '\n[… %d characters dropped …]\n' % dropped + tail
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
    request = json.loads(line)
    code, nonce = request['code'], request.get('nonce')
    del request
    out, err = Capture(), Capture()
    reply = {}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if WORKSPACE_PATH is not None:
                sys.path.insert(0, WORKSPACE_PATH)
            try:
                value = run(code)
            finally:
                if WORKSPACE_PATH is not None and WORKSPACE_PATH in sys.path:
                    sys.path.remove(WORKSPACE_PATH)
            reply = {'ok': True}
            if value is not None:
                reply['value'] = value
        except BaseException as error:
            if isinstance(error, SystemExit):
                reply = {'ok': False, 'error': 'SystemExit: ' + str(error.code)}
            else:
                lines = traceback.format_exception(type(error), error, error.__traceback__)
                reply = {'ok': False, 'error': ''.join(l for l in lines if 'python-driver' not in l).strip()[:CAPTURE_LIMIT]}
    reply['stdout'] = out.getvalue()
    reply['stderr'] = err.getvalue()
    reply['nonce'] = nonce
    real_stdout.write(json.dumps(reply) + '\n'); real_stdout.flush()
`;
