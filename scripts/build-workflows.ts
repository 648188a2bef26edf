// `npm run build`: bundles the workflow code once for production workers (WORKFLOW_BUNDLE_PATH,
// default dist/workflow-bundle.js). Workers load the bundle when it exists instead of bundling at start.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../runtime/config.ts';
import { bundleWorkflows } from '../worker.ts';

const target = loadConfig().temporal.workflowBundlePath;
const code = await bundleWorkflows();
await mkdir(path.dirname(target), { recursive: true });
await writeFile(target, code);
process.stdout.write(`workflow bundle written to ${path.relative(process.cwd(), target)} (${(code.length / 1024).toFixed(0)} KiB)\n`);
