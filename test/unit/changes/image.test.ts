import { describe, expect, it } from 'vitest';
import {
  type ImageRef,
  imageName,
  imageVersion,
  parseImageRef,
  shortDigest,
} from '../../../shared/changes/image.ts';

const sha = `sha256:${'0123456789abcdef'.repeat(4)}`;

describe('parseImageRef', () => {
  it.each<{
    reference: string;
    expected: ImageRef;
    name: string;
    version: string;
  }>([
    {
      reference: 'checkout-api:2.41.0',
      expected: {
        repository: 'checkout-api',
        tag: '2.41.0',
        digest: undefined,
      },
      name: 'checkout-api',
      version: '2.41.0',
    },
    {
      reference: 'registry.example.com/shop/checkout-api:2.41.0',
      expected: {
        repository: 'registry.example.com/shop/checkout-api',
        tag: '2.41.0',
        digest: undefined,
      },
      name: 'checkout-api',
      version: '2.41.0',
    },
    {
      reference: 'localhost:5000/api',
      expected: {
        repository: 'localhost:5000/api',
        tag: undefined,
        digest: undefined,
      },
      name: 'api',
      version: 'untagged',
    },
    {
      reference: `localhost:5000/api:1@${sha}`,
      expected: { repository: 'localhost:5000/api', tag: '1', digest: sha },
      name: 'api',
      version: '1@sha256:0123456789ab',
    },
    {
      reference: `api@${sha}`,
      expected: { repository: 'api', tag: undefined, digest: sha },
      name: 'api',
      version: 'sha256:0123456789ab',
    },
  ])('reads $reference', ({ reference, expected, name, version }) => {
    // Act
    const ref = parseImageRef(reference);

    // Assess
    expect(ref).toEqual(expected);
    expect(imageName(ref)).toBe(name);
    expect(imageVersion(ref)).toBe(version);
  });
});

describe('shortDigest', () => {
  it.each([
    { digest: sha, expected: 'sha256:0123456789ab' },
    { digest: 'sha256:abc', expected: 'sha256:abc' },
    { digest: '0123456789abcdef', expected: '0123456789ab' },
  ])('shortens $digest to $expected', ({ digest, expected }) => {
    // Act
    const short = shortDigest(digest);

    // Assess
    expect(short).toBe(expected);
  });
});
