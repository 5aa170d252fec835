/**
 * The live manifest read's redaction (spec: Live Reads, manifest): an
 * object leaves the cluster without its managedFields and last-applied
 * copies, with literal env values, probe and hook header values and
 * termination messages replaced by `<redacted: N chars>`, and every
 * annotation through the same key-aware detector as the inventory. The
 * walk covers the whole object, so a pod template nested anywhere (a
 * Deployment's, a CronJob's job template's, a ControllerRevision's data)
 * is redacted the same way. The input is never modified.
 */
import { LAST_APPLIED, safeAnnotations } from './annotations.ts';
import type { K8sObject } from './k8s.ts';

export interface Redacted {
  object: K8sObject;
  /** What was done, for the reply's notes. */
  notes: string[];
}

interface Tally {
  managedFields: number;
  lastApplied: number;
  annotations: number;
  envValues: number;
  headerValues: number;
  terminationMessages: number;
}

const redacted = (value: string) => `<redacted: ${value.length} chars>`;

function isObject(v: unknown): v is Record<string, K8sObject> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(value: K8sObject, parentKey: string, tally: Tally): K8sObject {
  if (Array.isArray(value)) {
    if (parentKey === 'env') {
      return value.map((e) => {
        if (isObject(e) && typeof e.value === 'string') {
          tally.envValues += 1;
          return { ...walk(e, '', tally), value: redacted(e.value) };
        }
        return walk(e, '', tally);
      });
    }
    if (parentKey === 'httpHeaders') {
      return value.map((h) => {
        if (isObject(h) && typeof h.value === 'string') {
          tally.headerValues += 1;
          return { ...h, value: redacted(h.value) };
        }
        return h;
      });
    }
    return value.map((v) => walk(v, '', tally));
  }
  if (!isObject(value)) return value;
  const out: Record<string, K8sObject> = {};
  for (const [key, child] of Object.entries(value)) {
    if (parentKey === 'metadata' && key === 'managedFields') {
      tally.managedFields += 1;
      continue;
    }
    if (parentKey === 'metadata' && key === 'annotations' && isObject(child)) {
      const safe = safeAnnotations(child);
      if (typeof child[LAST_APPLIED] === 'string') tally.lastApplied += 1;
      for (const [k, v] of Object.entries(safe)) {
        if (v !== child[k]) tally.annotations += 1;
      }
      out[key] = safe;
      continue;
    }
    if (
      parentKey === 'terminated' &&
      key === 'message' &&
      typeof child === 'string'
    ) {
      tally.terminationMessages += 1;
      out[key] = redacted(child);
      continue;
    }
    out[key] = walk(child, key, tally);
  }
  return out;
}

const plural = (n: number, one: string, many: string) =>
  `${n} ${n === 1 ? one : many}`;

/** The object as it may leave the cluster, and notes on what was hidden. */
export function redactObject(object: K8sObject): Redacted {
  const tally: Tally = {
    managedFields: 0,
    lastApplied: 0,
    annotations: 0,
    envValues: 0,
    headerValues: 0,
    terminationMessages: 0,
  };
  const out = walk(object, '', tally);
  const notes: string[] = [];
  if (tally.managedFields > 0) notes.push('managedFields removed');
  if (tally.lastApplied > 0) {
    notes.push(
      `${LAST_APPLIED} removed (${plural(tally.lastApplied, 'copy', 'copies')})`,
    );
  }
  if (tally.envValues > 0) {
    notes.push(
      `${plural(tally.envValues, 'literal env value', 'literal env values')} redacted`,
    );
  }
  if (tally.headerValues > 0) {
    notes.push(
      `${plural(tally.headerValues, 'probe header value', 'probe header values')} redacted`,
    );
  }
  if (tally.terminationMessages > 0) {
    notes.push(
      `${plural(tally.terminationMessages, 'termination message', 'termination messages')} redacted`,
    );
  }
  if (tally.annotations > 0) {
    notes.push(
      `${plural(tally.annotations, 'annotation value', 'annotation values')} redacted`,
    );
  }
  return { object: out, notes };
}
