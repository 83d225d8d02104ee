import { z } from 'zod';
import { checkAddress, uniqueAddresses } from '../mail/address';

/** One email address, validated and normalised (punycode domain). */
export const emailAddress = z.string({ error: 'expected an email address' }).meta({ format: 'email' }).transform((value, ctx) => {
  const result = checkAddress(value);
  if (!result.ok) {
    ctx.addIssue({ code: 'custom', message: result.reason });
    return z.NEVER;
  }
  return result.address;
});

export const subjectText = z
  .string()
  .min(1, 'must not be empty')
  .max(998, 'must be at most 998 characters')
  .refine((value) => !/[\r\n\0]/.test(value), 'must not contain line breaks');

export const priority = z.enum(['URGENT', 'NORMAL']);

export const resourceId = z.string().min(3, 'must be 3-128 characters').max(128, 'must be 3-128 characters');

/** `to`: one address or a list of 1-100; duplicates are dropped (sent once). */
export const recipients = z
  .union([z.string(), z.array(z.string()).min(1).max(100)], {
    error: 'expected an email address or a list of 1-100 addresses',
  })
  .transform((value, ctx) => {
    const list = typeof value === 'string' ? [value] : value;
    const addresses: string[] = [];
    list.forEach((item, index) => {
      const result = checkAddress(item);
      if (result.ok) addresses.push(result.address);
      else ctx.addIssue({ code: 'custom', message: result.reason, path: typeof value === 'string' ? [] : [index] });
    });
    return uniqueAddresses(addresses);
  });

/** Names and labels (accounts, keys, templates, senders): one line of text, no control characters. */
export const label = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((value) => !/[\x00-\x1f\x7f]/.test(value), 'must not contain control characters or line breaks');

/** Mail bodies may hold any text but NUL, which SMTP cannot carry. */
export const bodyText = z.string().refine((value) => !value.includes('\0'), 'must not contain NUL characters');

/** `vars`: flat values only (nested values → 400). */
export const templateVars = z.record(z.string(), z.union([bodyText, z.number(), z.boolean()]));

/** Success envelope schema for documentation and contract tests. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** Error envelope (decisions.md): the code, a message naming the field, optional details and resetAt. */
export const errorEnvelope = <const Codes extends readonly [string, ...string[]]>(codes: Codes) =>
  z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(codes),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      resetAt: z.string().optional(),
    }),
  });
