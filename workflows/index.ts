// Every workflow the worker runs. The bundler starts here; keep this file to re-exports.
export { housekeepingWorkflow } from './housekeeping.ts';
