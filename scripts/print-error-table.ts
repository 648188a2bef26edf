// `npm run docs:errors`: prints the error table for docs/api/README.md.
import { errorTableMarkdown } from '../domain/error-table.ts';

process.stdout.write(`${errorTableMarkdown()}\n`);
