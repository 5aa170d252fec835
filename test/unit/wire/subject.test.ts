import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { parseSubject, queueGroupId } from '../../../shared/wire/subject.ts';

const AGENT = '3f6c2a9e-8b1d-4c7e-9a05-2d4b6e8f1a3c';

function reasonOf(subject: string): string {
  try {
    parseSubject(subject);
  } catch (err) {
    expect(err).toBeInstanceOf(RejectedInventoryError);
    return (err as RejectedInventoryError).reason;
  }
  throw new Error(`expected ${subject} to be refused`);
}

describe('parseSubject', () => {
  it('splits a good subject into tenant and agent', () => {
    // Prepare
    const subject = `proxima.acme.production.${AGENT}.kubernetes`;

    // Act
    const parsed = parseSubject(subject);

    // Assess
    expect(parsed).toEqual({
      clientSlug: 'acme',
      envSlug: 'production',
      agentId: AGENT,
    });
  });

  it('accepts slugs with digits and inner hyphens, and 63 characters', () => {
    // Prepare
    const client = `a${'-b'.repeat(31)}`;
    const subject = `proxima.${client}.eu-west-1.${AGENT}.kubernetes`;

    // Act
    const parsed = parseSubject(subject);

    // Assess
    expect(client).toHaveLength(63);
    expect(parsed.clientSlug).toBe(client);
    expect(parsed.envSlug).toBe('eu-west-1');
  });

  it('lower-cases an upper-case agent UUID', () => {
    // Prepare
    const subject = `proxima.acme.prod.${AGENT.toUpperCase()}.kubernetes`;

    // Act
    const parsed = parseSubject(subject);

    // Assess
    expect(parsed.agentId).toBe(AGENT);
  });

  it.each([
    [
      'an upper-case client slug',
      `proxima.Acme.prod.${AGENT}.kubernetes`,
      'client slug "Acme"',
    ],
    [
      'an env slug ending in a hyphen',
      `proxima.acme.prod-.${AGENT}.kubernetes`,
      'environment slug "prod-"',
    ],
    [
      'an env slug with an underscore',
      `proxima.acme.pre_prod.${AGENT}.kubernetes`,
      'environment slug "pre_prod"',
    ],
    [
      'a 64-character slug',
      `proxima.${'a'.repeat(64)}.prod.${AGENT}.kubernetes`,
      'client slug "aaaa',
    ],
    ['an empty slug', `proxima..prod.${AGENT}.kubernetes`, 'client slug ""'],
  ])('refuses %s, naming the slug', (_, subject, named) => {
    // Act
    const reason = reasonOf(subject);

    // Assess
    expect(reason).toContain(named);
    expect(reason).toContain('is not a DNS-1123 label');
  });

  it('refuses an agent id that is not a UUID', () => {
    // Act
    const reason = reasonOf('proxima.acme.prod.agent-7.kubernetes');

    // Assess
    expect(reason).toBe('subject: agent_id "agent-7" is not a UUID');
  });

  it('refuses a wrong prefix', () => {
    // Act
    const reason = reasonOf(`telemetry.acme.prod.${AGENT}.kubernetes`);

    // Assess
    expect(reason).toContain('expected to start with "proxima."');
  });

  it('refuses a wrong suffix', () => {
    // Act
    const reason = reasonOf(`proxima.acme.prod.${AGENT}.metrics`);

    // Assess
    expect(reason).toContain('expected to end with ".kubernetes"');
  });

  it.each([
    `proxima.acme.prod.${AGENT}.kubernetes.extra`,
    `proxima.acme.eu.prod.${AGENT}.kubernetes`,
    `proxima.acme.${AGENT}.kubernetes`,
    '',
  ])('refuses %j for its number of tokens', (subject) => {
    // Act
    const reason = reasonOf(subject);

    // Assess
    expect(reason).toMatch(
      /expected 5 tokens \(proxima\.<client_slug>\.<env_slug>\.<agent_id>\.kubernetes\), got \d+$/,
    );
  });
});

describe('queueGroupId', () => {
  it('joins client, environment and agent with dots', () => {
    // Prepare
    const parsed = parseSubject(`proxima.acme.prod.${AGENT}.kubernetes`);

    // Act
    const group = queueGroupId(parsed);

    // Assess
    expect(group).toBe(`acme.prod.${AGENT}`);
  });

  it('stays within the 128 characters of an SQS group id and keeps the agent', () => {
    // Prepare
    const long = 'x'.repeat(63);
    const parsed = parseSubject(`proxima.${long}.${long}.${AGENT}.kubernetes`);

    // Act
    const group = queueGroupId(parsed);

    // Assess
    expect(group.length).toBeLessThanOrEqual(128);
    expect(group.endsWith(`.${AGENT}`)).toBe(true);
    expect(group.startsWith('xxxx')).toBe(true);
  });
});
