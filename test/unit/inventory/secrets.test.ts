import { describe, expect, it } from 'vitest';
import { sanitizeSecrets } from '../../../shared/sanitize/secrets.ts';

describe('sanitizeSecrets', () => {
  it.each([
    ['password=hunter2 user=bob', 'password=[REDACTED] user=bob'],
    ['clientSecret: abc def', 'clientSecret: [REDACTED]'],
    ['DbPassword: hunter2', 'DbPassword: [REDACTED]'],
    ['x-api-key: abcdef', 'x-api-key: [REDACTED]'],
    ['DB_PASS=secret1 next', 'DB_PASS=[REDACTED] next'],
    ['accessToken="abc def" rest', 'accessToken="[REDACTED]" rest'],
    ['{"password":"x","user":"bob"}', '{"password":"[REDACTED]","user":"bob"}'],
    ['Authorization: Bearer abc.def', 'Authorization: [REDACTED]'],
    ['api_key=Bearer xyz', 'api_key=[REDACTED]'],
    ['calling with Bearer abc.def-ghi', 'calling with Bearer [REDACTED]'],
    [
      'Liveness probe failed: Basic dXNlcjpwYXNz',
      'Liveness probe failed: Basic [REDACTED]',
    ],
    ['--token Bearer xyz', '--token [REDACTED]'],
    [
      'exec app --password s3cr3t --db-password x --token-ttl 5 --password-file /p',
      'exec app --password [REDACTED] --db-password [REDACTED] --token-ttl 5 --password-file /p',
    ],
    ['redis://:pw@cache:6379/0', 'redis://:[REDACTED]@cache:6379/0'],
    ['dial postgres://app:pa55@db/x', 'dial postgres://app:[REDACTED]@db/x'],
    [
      'GET https://api.example.com/a?password=abc&x=1',
      'GET https://api.example.com/a?password=[REDACTED]&x=1',
    ],
    [
      'key -----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----\nafter',
      'key [REDACTED]\nafter',
    ],
    ['cut -----BEGIN PRIVATE KEY-----\nMIIabc', 'cut [REDACTED]'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln', 'jwt [REDACTED]'],
    [
      'failed to get secret: secrets "foo" not found',
      'failed to get secret: [REDACTED]',
    ],
  ])('redacts %j', (text, expected) => {
    // Act
    const sanitized = sanitizeSecrets(text);

    // Assess
    expect(sanitized).toBe(expected);
  });

  it.each([
    'token: 5',
    'auth: true',
    'cookie: none',
    'auth: failed for user bob',
    'token_count=5 tokenCount: 7',
    'auth_method: oidc password_policy: strict first_pass: true',
    'Scaled up replica set web-5d4b7 to 3',
    'Back-off restarting failed container app in pod web-1_shop(1a2b)',
    'Successfully assigned shop/web-1 to node-a',
    'Error: ImagePullBackOff: rpc error: code = Unknown desc = failed',
    'ssh://git@github.com/org/repo.git',
    '',
  ])('keeps %j', (text) => {
    // Act
    const sanitized = sanitizeSecrets(text);

    // Assess
    expect(sanitized).toBe(text);
  });

  it('changes nothing more when run twice', () => {
    // Prepare
    const text =
      'redis://:pw-one@h --secret pw-two password=pw-three Authorization: Bearer pw-four';

    // Act
    const once = sanitizeSecrets(text);

    // Assess
    expect(sanitizeSecrets(once)).toBe(once);
    expect(once).not.toMatch(/pw-/);
  });
});
