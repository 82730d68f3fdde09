// A stand-in for html-worker.js taking for ever over a page: it tells the test it started (a
// connection to HANGING_WORKER_PORT), then never answers.
import net from 'node:net';

net.connect(Number(process.env.HANGING_WORKER_PORT), '127.0.0.1').on('error', () => undefined);
setInterval(() => undefined, 60_000);
