/**
 * A faster way through a row schema for the rows it accepts, read from the
 * schema itself, never a second set of rules. zod spends most of a large
 * first sync's validation in its own machinery: every object key, array
 * item and map entry gets a payload and an issues array, every string and
 * count a run through its checks list, whatever the row. `rowWalk` compiles
 * a schema into one plain function (as zod's own objects are compiled) that
 * tests each value against the limits the schema holds (its types, lengths,
 * ranges, time pattern, defaults and null defaults) and builds the output
 * as zod does. Any part it does not know how to test is run by zod itself,
 * on one reused payload.
 *
 * It decides only acceptance. Wherever a value is not one it can tell zod
 * accepts (a string past its cap in UTF-16 units, which zod then counts in
 * code points; an absent required field; a `__proto__` key zod skips), it
 * answers UNDECIDED and the row goes to `safeParse`, which accepts it or
 * refuses it with its path-naming reason, as before. A value it returns is
 * the one `safeParse` returns for that row: keys in the schema's order,
 * absent fields defaulted alike, unknown ones dropped (a property test
 * holds the two equal over generated and damaged rows). Its input is a
 * JSON.parse value: plain objects, arrays, strings, finite numbers.
 */
import * as z from 'zod';

export const UNDECIDED: unique symbol = Symbol('undecided');
export type RowWalk = (value: unknown) => unknown;

type AnyDef = z.core.$ZodTypeDef & { [key: string]: unknown };
type Schema = z.core.$ZodType;

/** What zod's own parse of a row passes its schemas (safeParse's context). */
const CTX = { async: false } as z.core.ParseContext<z.core.$ZodIssue>;

/** The one payload every value handed to zod is run on (one at a time). */
const scratch: { value: unknown; issues: unknown[]; aborted?: boolean } = {
  value: undefined,
  issues: [],
};

/** zod's own run of a schema: its output, or UNDECIDED on any issue. */
function byZod(schema: Schema): RowWalk {
  const run = schema._zod.run;
  return (value) => {
    scratch.value = value;
    scratch.issues.length = 0;
    scratch.aborted = undefined;
    // A union answers with its option's payload; async work, a promise.
    const out = run(scratch as never, CTX) as unknown as typeof scratch;
    if (out instanceof Promise || out.issues.length > 0 || out.aborted) {
      return UNDECIDED;
    }
    return out.value;
  };
}

function defOf(schema: Schema): AnyDef {
  return schema._zod.def as AnyDef;
}

/** A schema's checks as zod runs them: itself first when it is one. */
function checksOf(schema: Schema): z.core.$ZodCheck[] {
  const own = (defOf(schema).checks ?? []) as z.core.$ZodCheck[];
  return schema._zod.traits.has('$ZodCheck')
    ? [schema as unknown as z.core.$ZodCheck, ...own]
    : own;
}

/** The generated function's text and the values it closes over. */
class Emitter {
  readonly refs: unknown[] = [];
  #names = 0;

  name(prefix: string): string {
    return `${prefix}${this.#names++}`;
  }

  names<T extends string[]>(...prefixes: T): { [K in keyof T]: string } {
    return prefixes.map((p) => this.name(p)) as { [K in keyof T]: string };
  }

  ref(value: unknown): string {
    this.refs.push(value);
    return `r[${this.refs.length - 1}]`;
  }

  /** Statements that read `input` and set `output`, or return UNDECIDED. */
  emit(schema: Schema, input: string, output: string): string {
    const def = defOf(schema);
    const leafTest = this.#leaf(schema, input);
    if (leafTest !== undefined) {
      return `if (${leafTest}) return U; ${output} = ${input};`;
    }
    const checks = checksOf(schema);
    switch (def.type) {
      case 'nullable':
        if (checks.length > 0) break;
        return `if (${input} === null) ${output} = null; else { ${this.emit(def.innerType as Schema, input, output)} }`;
      case 'default': {
        if (checks.length > 0) break;
        // A getter, read on each use as zod reads it: a fresh default.
        const made = `${this.ref(def)}.defaultValue`;
        return `if (${input} === undefined) ${output} = ${made}; else { ${this.emit(def.innerType as Schema, input, output)} if (${output} === undefined) ${output} = ${made}; }`;
      }
      case 'optional': {
        const inner = def.innerType as Schema;
        if (checks.length > 0 || inner._zod.optin === 'defaulted') break;
        return `if (${input} === undefined) ${output} = undefined; else { ${this.emit(inner, input, output)} }`;
      }
      case 'pipe': {
        if (checks.length > 0) break;
        const mid = this.name('p');
        return `let ${mid}; ${this.emit(def.in as Schema, input, mid)} ${this.emit(def.out as Schema, mid, output)}`;
      }
      case 'array': {
        if (checks.length > 0) break;
        const [out, i, item, v] = this.names('a', 'i', 'e', 'v');
        return `if (!Array.isArray(${input})) return U;
          const ${out} = new Array(${input}.length);
          for (let ${i} = 0; ${i} < ${input}.length; ${i}++) {
            const ${item} = ${input}[${i}]; let ${v};
            ${this.emit(def.element as Schema, item, v)}
            ${out}[${i}] = ${v};
          }
          ${output} = ${out};`;
      }
      case 'record': {
        const keyType = def.keyType as Schema;
        const keyTest = this.#leaf(keyType, 'k');
        if (
          checks.length > 0 ||
          def.mode !== undefined ||
          def.partial !== undefined ||
          keyType._zod.values !== undefined ||
          keyTest === undefined
        ) {
          break;
        }
        const [out, k, item, v] = this.names('m', 'k', 'e', 'v');
        return `if (typeof ${input} !== 'object' || ${input} === null || Array.isArray(${input})) return U;
          const ${out} = {};
          for (const ${k} of Object.keys(${input})) {
            if (${k} === '__proto__' || ${this.#leaf(keyType, k)}) return U;
            const ${item} = ${input}[${k}]; let ${v};
            ${this.emit(def.valueType as Schema, item, v)}
            ${out}[${k}] = ${v};
          }
          ${output} = ${out};`;
      }
      case 'object': {
        const text = this.#object(def, checks, input, output);
        if (text !== undefined) return text;
        break;
      }
    }
    const v = this.name('z');
    return `const ${v} = ${this.ref(byZod(schema))}(${input}); if (${v} === U) return U; ${output} = ${v};`;
  }

  /**
   * An expression true when `input` is not a value the schema is known to
   * take as it is (strings, counts, booleans and their checks); undefined
   * for a schema that is no such leaf.
   */
  #leaf(schema: Schema, input: string): string | undefined {
    const def = defOf(schema);
    if (def.coerce) return undefined;
    const tests: string[] = [];
    if (def.type === 'string') tests.push(`typeof ${input} !== 'string'`);
    else if (def.type === 'number') {
      tests.push(`typeof ${input} !== 'number' || !Number.isFinite(${input})`);
    } else if (def.type === 'boolean') {
      tests.push(`typeof ${input} !== 'boolean'`);
    } else return undefined;
    for (const check of checksOf(schema)) {
      const test = this.#check(check, def.type, input);
      if (test === undefined) return undefined;
      tests.push(test);
    }
    return tests.map((t) => `(${t})`).join(' || ');
  }

  /** A check's failure (or doubt) as an expression, if it is one known. */
  #check(
    check: z.core.$ZodCheck,
    type: string,
    input: string,
  ): string | undefined {
    const def = check._zod.def as AnyDef & { check: string };
    const lengthCheck =
      def.check === 'max_length' || def.check === 'min_length';
    // Length checks come with zod's own `when` (has a length); any other
    // condition on a check is zod's to evaluate.
    if (def.when !== undefined && !(lengthCheck && isHasLength(def.when))) {
      return undefined;
    }
    switch (def.check) {
      case 'max_length':
        // Within the cap in UTF-16 units is within it in code points.
        return type === 'string'
          ? `${input}.length > ${num(def.maximum)}`
          : undefined;
      case 'min_length': {
        if (type !== 'string') return undefined;
        // A code point is one or two units: twice the floor always clears it.
        const min = num(def.minimum);
        return `${input}.length < ${Number(min) <= 1 ? min : 2 * Number(min)}`;
      }
      case 'string_format': {
        const pattern = def.pattern;
        if (def.format !== 'datetime' || !(pattern instanceof RegExp)) {
          return undefined;
        }
        const re = this.ref(pattern);
        return `(${re}.lastIndex = 0, !${re}.test(${input}))`;
      }
      case 'number_format':
        return def.format === 'safeint'
          ? `!Number.isSafeInteger(${input})`
          : undefined;
      case 'greater_than':
        if (typeof def.value !== 'number') return undefined;
        return def.inclusive
          ? `!(${input} >= ${num(def.value)})`
          : `!(${input} > ${num(def.value)})`;
      case 'less_than':
        if (typeof def.value !== 'number') return undefined;
        return def.inclusive
          ? `!(${input} <= ${num(def.value)})`
          : `!(${input} < ${num(def.value)})`;
      default:
        return undefined;
    }
  }

  /**
   * An object as zod's JIT-built parse takes it (the rows are safeParsed
   * synchronously, which takes that path): the schema's keys in order, each
   * field's absence as its optin and optout say, then the object's
   * overwrite checks (obj's null defaults) on the new object.
   */
  #object(
    def: AnyDef,
    checks: readonly z.core.$ZodCheck[],
    input: string,
    output: string,
  ): string | undefined {
    if (def.catchall !== undefined) return undefined;
    const overwrites: string[] = [];
    for (const check of checks) {
      const checkDef = check._zod.def as AnyDef & { check: string };
      if (checkDef.check !== 'overwrite' || checkDef.when !== undefined) {
        return undefined;
      }
      overwrites.push(`${this.ref(checkDef)}.tx`);
    }
    const shape = def.shape as Record<string, Schema>;
    if (Object.getOwnPropertySymbols(shape).length > 0) return undefined;
    const out = this.name('o');
    let text = `if (typeof ${input} !== 'object' || ${input} === null || Array.isArray(${input})) return U;
      let ${out} = {};`;
    for (const key of Object.keys(shape)) {
      if (key === '__proto__') return undefined;
      const field = shape[key] as Schema;
      const at = JSON.stringify(key);
      const [value, v] = this.names('f', 'v');
      const read = `const ${value} = ${input}[${at}]; let ${v};`;
      const { optin, optout } = field._zod;
      if (optin !== undefined && optout === 'optional') {
        // An absent field's issues are ignored, its value not kept unless
        // a default inside substitutes one.
        const absent =
          optin === 'optional'
            ? ''
            : ` else { const ${v}d = ${this.ref(byZod(field))}(undefined); if (${v}d !== U && ${v}d !== undefined) ${out}[${at}] = ${v}d; }`;
        text += `if (${at} in ${input}) { ${read} ${this.emit(field, value, v)} ${out}[${at}] = ${v}; }${absent}`;
      } else if (optin === undefined) {
        text += `{ if (!(${at} in ${input})) return U; ${read} ${this.emit(field, value, v)} ${out}[${at}] = ${v}; }`;
      } else if (optin === 'defaulted') {
        text += `{ ${read} ${this.emit(field, value, v)} ${out}[${at}] = ${v}; }`;
      } else {
        text += `{ ${read} ${this.emit(field, value, v)} if (${v} !== undefined || ${at} in ${input}) ${out}[${at}] = ${v}; }`;
      }
    }
    for (const tx of overwrites) text += `${out} = ${tx}(${out});`;
    return `${text} ${output} = ${out};`;
  }
}

/** zod's default `when` of a length check (the value has a length). */
const HAS_LENGTH = z.string().max(1)._zod.def.checks?.[0]?._zod.def.when;

function isHasLength(when: unknown): boolean {
  return typeof when === 'function' && when === HAS_LENGTH;
}

/** A finite number as source text (never anything else). */
function num(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`not a finite number: ${String(value)}`);
  }
  return String(value);
}

/**
 * The compiled walk of a row schema: its output for a row it accepts, or
 * UNDECIDED (zod decides).
 */
export function rowWalk(schema: Schema): RowWalk {
  const emitter = new Emitter();
  const body = emitter.emit(schema, 'row', 'out');
  const make = new Function(
    'U',
    'r',
    `return function walk(row) { let out; ${body} return out; };`,
  ) as (u: symbol, refs: unknown[]) => RowWalk;
  return make(UNDECIDED, emitter.refs);
}
