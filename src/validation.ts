// Validation's vocabulary: a zod failure as the contract's 400, field paths as errors name them, and the
// query rules (declared parameters only, whole numbers in bounds).
import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { ApiError } from './errors';

/** `emails[3].attachments[0].filename`: list positions in brackets, object keys joined with dots. */
export function describePath(path: PropertyKey[]): string {
  if (path.length === 0) return 'body';
  return path.reduce<string>((out, key, index) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return index === 0 ? String(key) : `${out}.${String(key)}`;
  }, '');
}

/** Turns a zod failure into one 400 INVALID_INPUT naming the first offending field (all of them in details). */
export function invalidInput(error: z.core.$ZodError): ApiError {
  const details = error.issues.map((issue) => ({ path: describePath(issue.path), message: issue.message }));
  const first = details[0]!;
  return new ApiError('INVALID_INPUT', `${first.path}: ${first.message}`, { details });
}

const MAX_NAME_SHOWN = 64;

/** A query parameter's name as an error shows it: an empty one quoted, a long one cut. */
const shownName = (name: string) =>
  name === '' ? '""' : name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name;

/**
 * Refuses query parameters the route does not declare, and a declared one given more than once (none is a
 * list), as unknown body fields are refused: a typo'd filter must not pass silently as "no filter".
 */
export const declaredQueryOnly =
  (declared: readonly string[]): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    if (!c.req.url.includes('?')) return next();
    const details: { path: string; message: string }[] = [];
    const query = new URL(c.req.url).searchParams;
    for (const name of new Set(query.keys())) {
      if (!declared.includes(name)) details.push({ path: shownName(name), message: 'unknown query parameter' });
      else if (query.getAll(name).length > 1) details.push({ path: name, message: 'given more than once' });
    }
    const first = details[0];
    if (first) throw new ApiError('INVALID_INPUT', `${first.path}: ${first.message}`, { details });
    await next();
  };

/** An optional query integer: digits only, within bounds. Documented as the integer it is. */
export const optionalQueryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .openapi({ type: 'integer', minimum: min, maximum: max });

/** Query integers: digits only, within bounds; absent → default. */
export const queryInt = (min: number, max: number, fallback: number) =>
  optionalQueryInt(min, max)
    .transform((value) => value ?? fallback)
    .openapi({ type: 'integer', minimum: min, maximum: max, default: fallback });
