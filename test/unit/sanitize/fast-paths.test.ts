import { describe, expect, it } from 'vitest';
import {
  JUDGED_KEY_MAX,
  JUDGED_MAX,
  judgedNames,
  secretKeyKind,
} from '../../../shared/sanitize/keys.ts';
import { REDACTED, sanitizeMessage } from '../../../shared/sanitize/secrets.ts';
import { redactShapes } from '../../../shared/sanitize/shapes.ts';

describe('secretKeyKind', () => {
  it('judges a name the same the first time and every time after', () => {
    // Prepare
    const names = ['DbPassword', 'auth', 'token_count', 'level', 'x-api-key'];

    // Act
    const first = names.map(secretKeyKind);
    const again = names.map(secretKeyKind);

    // Assess
    expect(first).toEqual([
      'secret',
      'ambiguous',
      undefined,
      undefined,
      'secret',
    ]);
    expect(again).toEqual(first);
  });

  it('keeps at most JUDGED_MAX names, and no name longer than JUDGED_KEY_MAX', () => {
    // Prepare
    const long = `${'a_'.repeat(JUDGED_KEY_MAX)}password`;

    // Act
    for (let i = 0; i <= JUDGED_MAX + 10; i += 1) secretKeyKind(`name_${i}`);
    const kept = judgedNames();
    const longKind = secretKeyKind(long);

    // Assess
    expect(kept).toBeLessThanOrEqual(JUDGED_MAX);
    expect(kept).toBeGreaterThan(0);
    expect(longKind).toBe('secret');
    expect(judgedNames()).toBe(kept);
    // Names judged after the map started over are judged as before.
    expect(secretKeyKind('DbPassword')).toBe('secret');
    expect(secretKeyKind('name_1')).toBeUndefined();
  });
});

describe('sanitizer first looks', () => {
  it('still finds a scheme credential after a tab, in upper case, mid-line', () => {
    // Act and Assess
    expect(redactShapes('sent Bearer\tabc123def456 upstream')).toBe(
      `sent Bearer\t${REDACTED} upstream`,
    );
    expect(redactShapes('h: BASIC dXNlcjpwYXNz')).toBe(`h: BASIC ${REDACTED}`);
    expect(redactShapes('bearer token missing')).toBe('bearer token missing');
  });

  it('skips the value of an ordinary name but scans a quoted one again', () => {
    // Act and Assess
    expect(sanitizeMessage('user=bob level=info password=hunter2')).toBe(
      `user=bob level=info password=${REDACTED}`,
    );
    expect(sanitizeMessage('msg="login pass=hunter2 ok" level=info')).toBe(
      `msg="login pass=${REDACTED} ok" level=info`,
    );
  });

  it("reads a command's password flag within 512 characters of its name, and no further", () => {
    // Prepare: the bound keeps a line of many command names and no flag
    // from being scanned to its end once per name.
    const near = `mysql ${'-v '.repeat(100)}-pS3cret`;
    const far = `mysql ${'-v '.repeat(200)}-pS3cret`;

    // Act and Assess
    expect(sanitizeMessage(near)).toBe(
      `mysql ${'-v '.repeat(100)}-p${REDACTED}`,
    );
    expect(sanitizeMessage(far)).toBe(far);
  });
});
