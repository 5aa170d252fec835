/**
 * PQL, the host search language's `host.*` and `cluster.*` fields (spec:
 * "PQL Search"): a parser from text to an expression tree. Nothing here
 * touches SQL (compile.ts does), and every refusal is an InvalidPqlError
 * naming the 1-based position and what was expected there, never echoing
 * the text.
 *
 *   expression := or
 *   or         := and { OR and }
 *   and        := unary { AND unary }
 *   unary      := NOT unary | primary
 *   primary    := "(" or ")" | field op value
 *   op         := "=" | "!=" | "~"
 *   value      := '"' { any character but '"' and '\' | '\"' | '\\' } '"'
 *
 * NOT binds tightest, then AND, then OR; keywords are case-insensitive;
 * field names are not. `~` is a glob (`*` any run, `?` one character,
 * anything else literal), compared case-insensitively. At most
 * MAX_PQL_CHARS characters and MAX_PQL_DEPTH levels of nesting (each
 * parenthesis and each NOT is a level), so neither the parser's recursion
 * nor the statement it becomes can grow without bound.
 */
import { InvalidPqlError } from '../errors.ts';

export const MAX_PQL_CHARS = 1000;
export const MAX_PQL_DEPTH = 20;

/** The fields, each with what it reads (compile.ts maps them to columns). */
export const PQL_FIELDS = [
  'host.hostname',
  'host.ip',
  'host.os',
  'host.environment',
  'cluster.name',
  'cluster.version',
  'cluster.platform',
  'cluster.status',
] as const;

export type PqlField = (typeof PQL_FIELDS)[number];
export type PqlOperator = '=' | '!=' | '~';

export type PqlExpression =
  | { type: 'compare'; field: PqlField; op: PqlOperator; value: string }
  | { type: 'not'; operand: PqlExpression }
  | { type: 'and' | 'or'; operands: PqlExpression[] };

type Token =
  | { type: 'lparen' | 'rparen' | 'end'; at: number }
  | { type: 'op'; op: PqlOperator; at: number }
  | { type: 'word'; text: string; at: number }
  | { type: 'string'; value: string; at: number };

const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const SPACE = /[ \t\r\n]+/y;

function fail(at: number, message: string, expected: string): never {
  throw new InvalidPqlError(`pql: ${message} at position ${at + 1}`, {
    details: { param: 'pql', position: at + 1, expected },
  });
}

/** Reads a double-quoted value starting at `start` (its opening quote). */
function readString(text: string, start: number): [string, number] {
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '"') return [value, i + 1];
    if (ch === '\\') {
      const next = text[i + 1];
      if (next !== '"' && next !== '\\') {
        fail(i, 'expected \\" or \\\\ after a backslash', '\\" or \\\\');
      }
      value += next;
      i += 2;
      continue;
    }
    value += ch;
    i += 1;
  }
  return fail(start, 'unterminated value: expected a closing "', '"');
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    SPACE.lastIndex = i;
    if (SPACE.test(text)) {
      i = SPACE.lastIndex;
      continue;
    }
    const ch = text[i];
    if (ch === '(' || ch === ')') {
      tokens.push({ type: ch === '(' ? 'lparen' : 'rparen', at: i });
      i += 1;
    } else if (ch === '=' || ch === '~') {
      tokens.push({ type: 'op', op: ch, at: i });
      i += 1;
    } else if (ch === '!' && text[i + 1] === '=') {
      tokens.push({ type: 'op', op: '!=', at: i });
      i += 2;
    } else if (ch === '"') {
      const [value, end] = readString(text, i);
      tokens.push({ type: 'string', value, at: i });
      i = end;
    } else {
      WORD.lastIndex = i;
      const match = WORD.exec(text);
      if (!match) {
        fail(
          i,
          'unexpected character',
          'a field, a keyword, an operator, a value or a parenthesis',
        );
      }
      tokens.push({ type: 'word', text: match[0], at: i });
      i = WORD.lastIndex;
    }
  }
  tokens.push({ type: 'end', at: text.length });
  return tokens;
}

const FIELD_LIST = PQL_FIELDS.join(', ');

function isKeyword(token: Token, keyword: string): boolean {
  return token.type === 'word' && token.text.toUpperCase() === keyword;
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.type !== 'end') this.index += 1;
    return token;
  }

  parse(): PqlExpression {
    const expression = this.or(0);
    const token = this.peek();
    if (token.type !== 'end') {
      fail(
        token.at,
        token.type === 'rparen'
          ? 'unbalanced ")"'
          : 'expected AND, OR or the end of the expression',
        'AND, OR or end',
      );
    }
    return expression;
  }

  private or(depth: number): PqlExpression {
    const operands = [this.and(depth)];
    while (isKeyword(this.peek(), 'OR')) {
      this.next();
      operands.push(this.and(depth));
    }
    return operands.length === 1
      ? (operands[0] as PqlExpression)
      : { type: 'or', operands };
  }

  private and(depth: number): PqlExpression {
    const operands = [this.unary(depth)];
    while (isKeyword(this.peek(), 'AND')) {
      this.next();
      operands.push(this.unary(depth));
    }
    return operands.length === 1
      ? (operands[0] as PqlExpression)
      : { type: 'and', operands };
  }

  private nested(depth: number, at: number): number {
    if (depth + 1 > MAX_PQL_DEPTH) {
      fail(
        at,
        `nesting deeper than ${MAX_PQL_DEPTH} levels`,
        `at most ${MAX_PQL_DEPTH} levels of parentheses and NOT`,
      );
    }
    return depth + 1;
  }

  private unary(depth: number): PqlExpression {
    const token = this.peek();
    if (isKeyword(token, 'NOT')) {
      this.next();
      return {
        type: 'not',
        operand: this.unary(this.nested(depth, token.at)),
      };
    }
    if (token.type === 'lparen') {
      this.next();
      const inner = this.or(this.nested(depth, token.at));
      const close = this.next();
      if (close.type !== 'rparen') {
        fail(close.at, 'expected ")" or AND, OR', '")"');
      }
      return inner;
    }
    return this.comparison();
  }

  private comparison(): PqlExpression {
    const token = this.next();
    if (token.type !== 'word' || isReserved(token.text)) {
      fail(
        token.at,
        token.type === 'end'
          ? `expected a field (${FIELD_LIST}) but the expression ended`
          : `expected a field (${FIELD_LIST}), NOT or "("`,
        'field',
      );
    }
    if (!(PQL_FIELDS as readonly string[]).includes(token.text)) {
      fail(token.at, `unknown field; known fields: ${FIELD_LIST}`, 'field');
    }
    const op = this.next();
    if (op.type !== 'op') fail(op.at, 'expected =, != or ~', '=, != or ~');
    const value = this.next();
    if (value.type !== 'string') {
      fail(value.at, 'expected a double-quoted value', 'value');
    }
    return {
      type: 'compare',
      field: token.text as PqlField,
      op: op.op,
      value: value.value,
    };
  }
}

function isReserved(word: string): boolean {
  const upper = word.toUpperCase();
  return upper === 'AND' || upper === 'OR' || upper === 'NOT';
}

/** The expression tree of `text`; an InvalidPqlError when it is not PQL. */
export function parsePql(text: string): PqlExpression {
  if (text.length > MAX_PQL_CHARS) {
    fail(
      MAX_PQL_CHARS,
      `longer than ${MAX_PQL_CHARS} characters`,
      `at most ${MAX_PQL_CHARS} characters`,
    );
  }
  if (text.trim() === '') fail(0, 'empty expression', 'field');
  return new Parser(tokenize(text)).parse();
}

/** Whether the expression reads a `cluster.*` field anywhere. */
export function namesClusterField(expression: PqlExpression): boolean {
  switch (expression.type) {
    case 'compare':
      return expression.field.startsWith('cluster.');
    case 'not':
      return namesClusterField(expression.operand);
    default:
      return expression.operands.some(namesClusterField);
  }
}
