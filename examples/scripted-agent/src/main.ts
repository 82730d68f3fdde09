import { runExample } from './demo.js';

const { result } = await runExample();
process.exitCode = result.stopReason === 'completed' ? 0 : 1;
