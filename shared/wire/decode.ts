/**
 * The sync worker's path through a message: its envelope decoded and
 * validated whole, its rows left as sent (SentRows, over the body's bytes)
 * until the sync reads them, then validated row by row by the same schema
 * (`validateRows`). Whatever it refuses, it refuses with the reason the
 * whole path (`parseInventoryJson`) gives.
 */
import { isUtf8 } from 'node:buffer';
import * as z from 'zod';
import { RejectedInventoryError } from '../errors.ts';
import {
  checkVersion,
  decodeJson,
  envelopeSchema,
  type Inventory,
  KIND_KEYS,
  type KindKey,
  parseInventory,
  parseInventoryJson,
  ROW_SCHEMAS,
} from './inventory.ts';
import { errorMap, formatIssueList, formatIssues } from './issues.ts';
import { asBuffer, scanMessage } from './message-scan.ts';
import { rowWalk, UNDECIDED } from './row-walk.ts';
import { type SentMessage, SentRows } from './sent-rows.ts';
import {
  mayHoldUnstorableBytes,
  mayHoldUnstorableText,
  unstorableText,
} from './storable-text.ts';

/**
 * A decoded message whose envelope is validated and whose rows are not yet
 * (`decodeInventoryJson`): each kind array holds the rows as sent, as bytes
 * parsed only when read.
 */
export type WireInventory = Omit<Inventory, KindKey> & {
  [K in KindKey]?: SentRows | undefined;
};

const KIND_NAMES: ReadonlySet<string> = new Set(KIND_KEYS);

/**
 * Decodes a UTF-8 JSON body and validates all of it but the rows of its
 * kind arrays, which stay as sent, as bytes (`validateRows` checks them): a
 * resync digests its rows from the bytes and parses only those it does not
 * know. A message that fails anywhere outside those rows is refused exactly
 * as `parseInventoryJson` refuses it, with the reason the whole schema
 * gives: whatever the fast path does not take is decoded whole.
 */
export function decodeInventoryJson(
  body: Buffer | Uint8Array | string,
): WireInventory {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const fast = isUtf8(bytes) ? decodeScanned(bytes) : undefined;
  if (fast !== undefined) return fast;
  const { value } = decodeJson(bytes);
  checkVersion(value);
  const result = envelopeSchema.safeParse(value, { error: errorMap });
  if (!result.success) {
    // Refused: the whole schema names every issue, rows' included, in its
    // own order.
    parseInventory(value);
    throw new RejectedInventoryError(formatIssues(result.error));
  }
  return toWireInventory(result.data as WireInventoryInput);
}

/**
 * The fast path: the message scanned (message-scan.ts), its envelope parsed
 * and validated, its rows left as bytes; undefined for anything it does not
 * accept, which the whole path then refuses with its own reason.
 */
function decodeScanned(bytes: Uint8Array): WireInventory | undefined {
  const scanned = scanMessage(bytes, KIND_NAMES);
  if (scanned === undefined) return undefined;
  let value: unknown;
  try {
    value = decodeJson(scanned.envelope).value;
    checkVersion(value);
  } catch {
    return undefined;
  }
  const result = envelopeSchema.safeParse(value, { error: errorMap });
  if (!result.success) return undefined;
  const inventory = result.data as Record<string, unknown>;
  const buffer = asBuffer(bytes);
  const message: SentMessage = {
    bytes,
    mayHoldUnstorable: mayHoldUnstorableBytes(buffer),
  };
  for (const kind of KIND_KEYS) {
    if (inventory[kind] === undefined) continue;
    const spans = scanned.rows.get(kind);
    // An array in the envelope is one the scan cut out: it has spans.
    if (spans === undefined) return undefined;
    inventory[kind] = new SentRows(buffer, spans, message);
  }
  return inventory as WireInventory;
}

/** A message whose kind arrays hold rows as values or as sent. */
type WireInventoryInput = Omit<Inventory, KindKey> & {
  [K in KindKey]?: SentRows | readonly unknown[] | undefined;
};

/**
 * A message as the sync reads it, from one whose kind arrays may hold rows
 * as values (a parsed message, a test's): those become rows as sent, with
 * the bytes `JSON.stringify` writes for them.
 */
export function toWireInventory(
  inventory: WireInventoryInput | Inventory,
): WireInventory {
  const input = inventory as WireInventoryInput;
  if (KIND_KEYS.every((k) => !Array.isArray(input[k]))) {
    return input as WireInventory;
  }
  const out = { ...input } as Record<string, unknown>;
  for (const kind of KIND_KEYS) {
    const rows = input[kind];
    if (Array.isArray(rows)) out[kind] = SentRows.fromValues(rows);
  }
  return out as WireInventory;
}

/**
 * The message every collected kind's rows were cut from, if they share
 * one: a message as decoded, not one some of whose rows came as values.
 */
function sentMessageOf(inventory: WireInventory): SentMessage | undefined {
  let message: SentMessage | undefined;
  for (const kind of KIND_KEYS) {
    const rows = inventory[kind];
    if (rows === undefined) continue;
    if (rows.message === undefined) return undefined;
    if (message !== undefined && rows.message !== message) return undefined;
    message = rows.message;
  }
  return message;
}

/**
 * The refusal the whole schema gives a message the sync found a malformed
 * row in: from its bytes when it was decoded from them (a row that is no
 * JSON is named by its position in the body), else from its rows parsed.
 * Undefined if the whole schema accepts it.
 */
function refusalOfWhole(
  inventory: WireInventory,
): RejectedInventoryError | undefined {
  try {
    const bytes = sentMessageOf(inventory)?.bytes;
    if (bytes !== undefined) {
      parseInventoryJson(bytes);
    } else {
      const whole = { ...inventory } as Record<string, unknown>;
      for (const kind of KIND_KEYS) whole[kind] = inventory[kind]?.values();
      parseInventory(whole);
    }
  } catch (error) {
    if (error instanceof RejectedInventoryError) return error;
    throw error;
  }
  return undefined;
}

type RowValidator = (row: unknown) => z.ZodSafeParseResult<unknown>;

/**
 * A kind's row validation as the sync runs it: the schema compiled for the
 * rows it vouches for (row-walk.ts, the same rules and the same output),
 * zod's own parse for any other, which accepts it or names why not.
 */
function rowValidator(schema: z.ZodType): RowValidator {
  const walk = rowWalk(schema);
  return (row) => {
    const data = walk(row);
    if (data !== UNDECIDED) return { success: true, data };
    return schema.safeParse(row, { error: errorMap });
  };
}

/** Each kind's row validation (rowValidator), by kind. */
export const ROW_VALIDATORS: Record<KindKey, RowValidator> = Object.fromEntries(
  KIND_KEYS.map((kind) => [kind, rowValidator(ROW_SCHEMAS[kind])]),
) as Record<KindKey, RowValidator>;

/**
 * The rows of each kind at the given indexes, parsed, validated and
 * normalized as the whole schema does. A message with any malformed one
 * (no JSON, text PostgreSQL cannot store, or what the schema refuses) is
 * refused whole, with the reason `parseInventoryJson` gives it.
 */
export function validateRows(
  inventory: WireInventory,
  indexes: Partial<Record<KindKey, readonly number[]>>,
): Partial<Record<KindKey, Map<number, unknown>>> {
  const issues: z.core.$ZodIssue[] = [];
  let malformed = false;
  const out: Partial<Record<KindKey, Map<number, unknown>>> = {};
  for (const kind of KIND_KEYS) {
    const rows = inventory[kind];
    const wanted = indexes[kind];
    if (rows === undefined || wanted === undefined) continue;
    // Text a body spells and PostgreSQL cannot store refuses the message,
    // as decoding a body whole does; rows given as values were checked
    // (or, in tests, are stored without the NUL). A body that spells none
    // anywhere has no row to look at.
    const fromBody = rows.message?.mayHoldUnstorable === true;
    const validate = ROW_VALIDATORS[kind];
    const valid = new Map<number, unknown>();
    for (const index of wanted) {
      let row: unknown;
      try {
        row = rows.value(index);
      } catch {
        malformed = true;
        continue;
      }
      if (fromBody && mayHoldUnstorableText(rows.text(index))) {
        const found = unstorableText(row);
        if (found !== undefined) {
          issues.push({
            code: 'custom',
            input: undefined,
            message: found.rule,
            path: [kind, index, ...found.path],
          });
          continue;
        }
      }
      const result = validate(row);
      if (result.success) {
        valid.set(index, result.data);
      } else {
        for (const issue of result.error.issues) {
          issues.push({ ...issue, path: [kind, index, ...issue.path] });
        }
      }
    }
    out[kind] = valid;
  }
  if (malformed || issues.length > 0) {
    throw (
      refusalOfWhole(inventory) ??
      new RejectedInventoryError(
        malformed ? 'body: invalid JSON' : formatIssueList(issues),
        { cause: new z.ZodError(issues) },
      )
    );
  }
  return out;
}

/** Each kind's member validations (memberValidator), made when first used. */
const MEMBER_VALIDATORS = new Map<string, RowValidator>();

/**
 * The validation of the member `name` of a kind's rows, on its own: its
 * field's schema in the kind's row schema, compiled as a row's is. A row
 * schema drops a member it has no field for, whatever its value.
 */
function memberValidator(kind: KindKey, name: string): RowValidator {
  const id = `${kind}.${name}`;
  let validate = MEMBER_VALIDATORS.get(id);
  if (validate === undefined) {
    const field = (ROW_SCHEMAS[kind] as z.ZodObject).shape[name];
    validate =
      field === undefined
        ? (data: unknown) => ({ success: true, data })
        : rowValidator(field as z.ZodType);
    MEMBER_VALIDATORS.set(id, validate);
  }
  return validate;
}

/**
 * Checks the members `names` of the rows of `kind` at `indexes`, each on
 * its own, for rows whose other bytes were accepted before (a pod whose
 * usage alone changed: shared/sync/digests.ts). Each row schema field is
 * checked apart from the others, so a row with those members accepted is
 * accepted. A row with one that is no JSON, may spell text PostgreSQL
 * cannot store, or that its field refuses, is validated whole, which
 * refuses the message with the reason the whole schema gives.
 */
export function validateMembers(
  inventory: WireInventory,
  kind: KindKey,
  names: readonly string[],
  indexes: Iterable<number>,
): void {
  const rows = inventory[kind];
  if (rows === undefined) return;
  const validators = names.map((name) => memberValidator(kind, name));
  const fromBody = rows.message?.mayHoldUnstorable === true;
  const whole: number[] = [];
  for (const index of indexes) {
    let values: unknown[] | undefined;
    try {
      values = rows.members(index, names);
    } catch {
      values = undefined;
    }
    const accepted =
      values?.every(
        (value, k) =>
          !(fromBody && unstorableText(value) !== undefined) &&
          (validators[k] as RowValidator)(value).success,
      ) ?? false;
    if (!accepted) whole.push(index);
  }
  if (whole.length > 0) validateRows(inventory, { [kind]: whole });
}
