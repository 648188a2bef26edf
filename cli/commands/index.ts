// The admin CLI's commands that live in their own files (cli/vouch.ts dispatches to them).
import type { CliCommand } from '../command.ts';
import { auditCheckpoint, auditVerify } from './audit.ts';
import { evidenceExport, evidenceVerify } from './evidence.ts';
import { holdAdd, holdList, holdRelease, retentionReport, retentionSet } from './retention.ts';
import { trace } from './trace.ts';

export const COMMANDS: CliCommand[] = [
  auditVerify,
  auditCheckpoint,
  retentionSet,
  retentionReport,
  holdAdd,
  holdList,
  holdRelease,
  evidenceExport,
  evidenceVerify,
  trace,
];
