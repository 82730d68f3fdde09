import { runDemo } from './demo.js';

const { result } = await runDemo();
process.exitCode = result.stopReason === 'completed' ? 0 : 1;
