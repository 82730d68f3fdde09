// A formatter that, like prettier, eslint or black, loads the project's own configuration file
// as code: `prettier.config.mjs` in the working directory. Then it "formats" the files named.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const config = path.join(process.cwd(), 'prettier.config.mjs');
if (fs.existsSync(config)) await import(pathToFileURL(config).href);
for (const file of process.argv.slice(2).filter((argument) => !argument.startsWith('--'))) {
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, `${text.trim()}\n`);
}
