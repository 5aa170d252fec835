/**
 * A webhook body against its contract's schema: the first refusal is a 422
 * naming the field. What the schema keeps is what gets stored, so it is
 * also checked for text PostgreSQL cannot store (a NUL, a lone surrogate),
 * refused naming the field too; a field the schema drops is never looked at.
 */
import type { z } from 'zod';
import { UnprocessableError } from '../errors.ts';
import { unstorableText } from '../wire/storable-text.ts';

export function parseWebhookBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const field = issue?.path.join('.') || 'body';
    throw new UnprocessableError(`${field}: ${issue?.message ?? 'invalid'}`, {
      details: { field },
    });
  }
  const found = unstorableText(parsed.data);
  if (found !== undefined) {
    const field = found.path.join('.') || 'body';
    throw new UnprocessableError(`${field}: ${found.rule}`, {
      details: { field },
    });
  }
  return parsed.data;
}
