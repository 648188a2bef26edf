// `npm run docs:errors`: prints the error table for the README.
import { errorTableMarkdown } from '../domain/error-table.ts';

process.stdout.write(`${errorTableMarkdown()}\n`);
