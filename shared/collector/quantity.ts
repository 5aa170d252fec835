/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `1.5`, `100Ki`, `1e3`),
 * read exactly: the number is kept as a BigInt mantissa and a power of ten,
 * so `0.1` and `1e-3` never pass through a binary float.
 *
 * Two uses: inventory rows carry integer amounts (millicores and bytes,
 * rounded up as Kubernetes' own MilliValue/Value do), and spec facts carry
 * the quantity in Kubernetes' canonical form, spelled as an apiserver would
 * serialize it for a built-in kind: a Rollout's `cpu: 0.5` is `500m`, and
 * `0.5Gi` is `512Mi`.
 */

type Format = 'binary' | 'decimal' | 'exponent';

interface Parsed {
  /** value = mantissa × 10^exponent (binary suffixes already multiplied in). */
  mantissa: bigint;
  exponent: number;
  format: Format;
}

const QUANTITY =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|(n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

const BINARY_POWER: Record<string, number> = {
  Ki: 1,
  Mi: 2,
  Gi: 3,
  Ti: 4,
  Pi: 5,
  Ei: 6,
};
const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const DECIMAL_SUFFIX: Record<number, string> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** Kubernetes keeps nothing finer than a nano; finer is rounded up. */
const MIN_EXPONENT = -9;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

function parse(input: unknown): Parsed | undefined {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return undefined;
    return parse(String(input));
  }
  if (typeof input !== 'string') return undefined;
  const match = QUANTITY.exec(input.trim());
  if (!match) return undefined;
  const [, sign, digits = '', binary, decimal, exp] = match;
  const [whole = '', fraction = ''] = digits.split('.');
  let mantissa = BigInt(`${whole}${fraction}` || '0');
  let exponent = -fraction.length;
  let format: Format = 'decimal';
  if (binary !== undefined) {
    mantissa *= 1024n ** BigInt(BINARY_POWER[binary] ?? 0);
    format = 'binary';
  } else if (decimal !== undefined) {
    exponent += DECIMAL_EXPONENT[decimal] ?? 0;
  } else if (exp !== undefined) {
    exponent += Number(exp);
    format = 'exponent';
  }
  if (sign === '-') mantissa = -mantissa;
  return round(mantissa, exponent, format);
}

/** Rounds up to a nano and strips trailing zeros into the exponent. */
function round(mantissa: bigint, exponent: number, format: Format): Parsed {
  let m = mantissa;
  let e = exponent;
  if (e < MIN_EXPONENT) {
    const divisor = pow10(MIN_EXPONENT - e);
    const q = m / divisor;
    m = m % divisor === 0n ? q : m > 0n ? q + 1n : q;
    e = MIN_EXPONENT;
  }
  if (m === 0n) return { mantissa: 0n, exponent: 0, format };
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  return { mantissa: m, exponent: e, format };
}

/** value × 10^scale rounded up to an integer. */
function ceilScaled(q: Parsed, scale: number): bigint {
  const e = q.exponent + scale;
  if (e >= 0) return q.mantissa * pow10(e);
  const divisor = pow10(-e);
  const quotient = q.mantissa / divisor;
  return q.mantissa % divisor !== 0n && q.mantissa > 0n
    ? quotient + 1n
    : quotient;
}

function toSafeInteger(value: bigint): number | null {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(value);
}

/** CPU quantity in millicores, rounded up; null when unset or not a quantity. */
export function cpuMillicores(input: unknown): number | null {
  const q = parse(input);
  return q === undefined ? null : toSafeInteger(ceilScaled(q, 3));
}

/** Memory or storage quantity in bytes, rounded up; null when not a quantity. */
export function quantityBytes(input: unknown): number | null {
  const q = parse(input);
  return q === undefined ? null : toSafeInteger(ceilScaled(q, 0));
}

/** A plain integer quantity (a node's `pods`), or null. */
export function quantityCount(input: unknown): number | null {
  return quantityBytes(input);
}

function decimalForm(q: Parsed, exponentForm: boolean): string {
  if (q.mantissa === 0n) return '0';
  // The largest multiple of 3 the value is still an integer at, within
  // the suffixes Kubernetes has (n … E).
  let e3 = Math.floor(q.exponent / 3) * 3;
  if (e3 > 18 && !exponentForm) e3 = 18;
  const mantissa = q.mantissa * pow10(q.exponent - e3);
  if (exponentForm) return e3 === 0 ? `${mantissa}` : `${mantissa}e${e3}`;
  return `${mantissa}${DECIMAL_SUFFIX[e3] ?? ''}`;
}

/**
 * The canonical spelling of a quantity, as the apiserver serializes it, or
 * undefined when the input is not a quantity. The suffix family written is
 * kept (binary stays binary unless the value is under 1024 or fractional,
 * as in Kubernetes' CanonicalizeBytes); the largest exact unit is chosen.
 */
export function canonicalQuantity(input: unknown): string | undefined {
  const q = parse(input);
  if (q === undefined) return undefined;
  if (q.format === 'binary' && q.exponent >= 0) {
    let value = q.mantissa * pow10(q.exponent);
    const abs = value < 0n ? -value : value;
    if (abs >= 1024n) {
      let power = 0;
      while (power < 6 && value % 1024n === 0n) {
        value /= 1024n;
        power += 1;
      }
      return `${value}${BINARY_SUFFIXES[power]}`;
    }
  }
  return decimalForm(q, q.format === 'exponent');
}
