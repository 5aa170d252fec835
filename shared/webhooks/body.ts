/**
 * A webhook body against its contract's schema: the first refusal is a 422
 * naming the field. What the schema keeps is what gets stored, so it is
 * also checked for text PostgreSQL cannot store (a NUL, a lone surrogate),
 * refused naming the field too; a field the schema drops is never looked at.
 *
 * The field is named by the schema, never by the sender: a key of a map the
 * sender fills (Alertmanager's labels and annotations) is written `<key>`,
 * so a 422 cannot carry text the sender chose back into a response or a log.
 */
import { UnprocessableError } from '../errors.ts';
import { unstorableText } from '../wire/storable-text.ts';
import type * as z from '../zod.ts';

export function parseWebhookBody<S extends z.ZodMiniType>(
  schema: S,
  body: unknown,
): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const field = fieldName(schema, issue?.path ?? []);
    throw new UnprocessableError(`${field}: ${issue?.message ?? 'invalid'}`, {
      details: { field },
    });
  }
  const found = unstorableText(parsed.data);
  if (found !== undefined) {
    const field = fieldName(schema, found.path);
    throw new UnprocessableError(`${field}: ${found.rule}`, {
      details: { field },
    });
  }
  return parsed.data;
}

/** What a map key the sender chose is written as. */
export const SENDER_KEY = '<key>';

/** The parts of a zod 4 schema's definition this walk reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
}

const defOf = (schema: z.core.$ZodType | undefined): SchemaDef | undefined =>
  (schema as { _zod?: { def: SchemaDef } } | undefined)?._zod?.def;

/** Past the wrappers (optional, nullable, default, pipe…) to the shape. */
function unwrap(schema: z.core.$ZodType | undefined): SchemaDef | undefined {
  let def = defOf(schema);
  for (let depth = 0; def && depth < 16; depth++) {
    const inner = def.innerType ?? def.in;
    if (inner === undefined) break;
    def = defOf(inner);
  }
  return def;
}

/**
 * An issue's path as the schema names it: an object's own keys and array
 * positions as they are; anything else (a record's key, a key the schema
 * does not know) as {@link SENDER_KEY}.
 */
export function fieldName(
  schema: z.core.$ZodType,
  path: readonly PropertyKey[],
): string {
  const parts: string[] = [];
  let current: z.core.$ZodType | undefined = schema;
  for (const segment of path) {
    const def = unwrap(current);
    if (
      def?.type === 'object' &&
      typeof segment === 'string' &&
      def.shape &&
      Object.hasOwn(def.shape, segment)
    ) {
      parts.push(segment);
      current = def.shape[segment];
    } else if (def?.type === 'array' && typeof segment === 'number') {
      parts.push(String(segment));
      current = def.element;
    } else {
      parts.push(SENDER_KEY);
      current = def?.type === 'record' ? def.valueType : undefined;
    }
  }
  return parts.join('.') || 'body';
}
