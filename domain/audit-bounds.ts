// What may enter the audit log, and how much of it (issue 37): ids, hashes and names the service
// itself defines — never text a caller chose. A refused request's `parameter` is recorded as its
// shape (each name our API does not define becomes `<unknown>`), an entry's details are capped, and
// an error answer echoes at most a short prefix of what the caller sent. Pure: no I/O.
import { sha256Hex } from './digests.ts';
import canonicalize from 'canonicalize';

/** The most an entry's details may take, as canonical JSON (bytes); larger details are replaced by their digest. */
export const AUDIT_DETAILS_MAX_BYTES = 2048;

/** The most of a caller's text an error answer echoes (characters). */
export const ECHO_MAX_CHARS = 64;

/** The most an actor's name may take (an operator's `--as`), in characters. */
export const ACTOR_ID_MAX_CHARS = 128;

/** What stands for a name the API does not define. */
export const UNKNOWN_NAME = '<unknown>';

/** At most `max` characters of s, with `…` when cut (never splitting a surrogate pair). */
export function clip(s: string, max = ECHO_MAX_CHARS): string {
  const chars = Array.from(s);
  return chars.length <= max ? s : `${chars.slice(0, max).join('')}…`;
}

type Details = Record<string, string | number | boolean | null>;

/**
 * The details as recorded: as given when their canonical JSON is within AUDIT_DETAILS_MAX_BYTES,
 * else `{ capped: true, bytes, sha256 }` of it. Every writer's details are ids and hashes and stay
 * far below the cap; the cap holds the promise whatever a future writer passes.
 */
export function boundedDetails(details: Details): Details {
  const json = canonicalize(details) ?? '{}';
  const bytes = Buffer.byteLength(json);
  return bytes <= AUDIT_DETAILS_MAX_BYTES ? details : { capped: true, bytes, sha256: sha256Hex(json) };
}

/**
 * The shape of a refused request's parameter (`requirements[0].value`, a header's name): each name
 * kept only when the API defines it (`known`), else `<unknown>`; indexes kept as `[n]`. So an
 * unknown field of 200 KB is recorded as `<unknown>`, and `a.b[2].zz` as `a.b[2].<unknown>` when zz
 * is not ours. Bounded: at most 16 parts.
 */
export function parameterShape(parameter: string, known: (name: string) => boolean): string {
  if (parameter === '') return '';
  const parts = parameter.match(/\[\d{1,9}\]|[^.[\]]+|\[[^\]]*\]?/g) ?? [];
  const shaped: string[] = [];
  for (const part of parts.slice(0, 16)) {
    if (/^\[\d{1,9}\]$/.test(part)) shaped.push(part);
    else shaped.push(`${shaped.length ? '.' : ''}${known(part) ? part : UNKNOWN_NAME}`);
  }
  if (parts.length > 16) shaped.push(`.${UNKNOWN_NAME}`);
  return shaped.join('');
}
