/**
 * The captured Kubernetes objects in the team's fixture set
 * (`../shared/fixtures/real/`, see its INDEX.md), read as the apiserver
 * would serve them: YAML timestamps stay strings (the core schema), and a
 * `*List` or `kind: List` file yields its items.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import type { K8sObject } from '../../shared/collector/k8s.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const REAL_FIXTURES_DIR = resolve(here, '../../../shared/fixtures/real');

export function realFixtureFiles(): string[] {
  return readdirSync(REAL_FIXTURES_DIR)
    .filter((f) => /\.(json|ya?ml)$/.test(f))
    .sort();
}

export function readRealFixture(file: string): K8sObject {
  const text = readFileSync(join(REAL_FIXTURES_DIR, file), 'utf8');
  return file.endsWith('.json')
    ? JSON.parse(text)
    : yaml.load(text, { schema: yaml.CORE_SCHEMA });
}

/** The objects of a file: a list's items, or the object itself. */
export function realObjects(file: string): K8sObject[] {
  const doc = readRealFixture(file);
  return Array.isArray(doc?.items) ? doc.items : [doc];
}
