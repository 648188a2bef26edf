// The admin CLI's commands that live in their own files (cli/vouch.ts dispatches to them).
import type { CliCommand } from '../command.ts';
import { auditVerify } from './audit.ts';

export const COMMANDS: CliCommand[] = [auditVerify];
