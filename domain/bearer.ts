// The rule of the operators' endpoints (codec, metrics): open in the sandbox; elsewhere only for
// `Authorization: Bearer <token>` with the configured token, and closed to all when none is set.
import { timingSafeEqual } from 'node:crypto';

export function bearerAllowed(environment: string, token: string | undefined, authorization: string | undefined): boolean {
  if (environment === 'sandbox') return true;
  if (!token || !authorization) return false;
  const given = Buffer.from(authorization);
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
