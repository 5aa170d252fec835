/**
 * A workload's spec facts (spec: "Workload Spec Facts"): names and references
 * only, never values. Both ends exchange this JSON; the diff compares two of
 * them. Unknown fields are ignored, like everywhere on the wire.
 */
import * as z from 'zod';

const quantity = z.string().max(64);

/** A list that an agent written in Go may send as null for empty. */
const nameList = z.preprocess(
  (v) => (v === null || v === undefined ? [] : v),
  z.array(z.string().max(1024)),
);

export const resourceFactsSchema = z.object({
  cpu: quantity.optional(),
  memory: quantity.optional(),
});

export const containerFactsSchema = z.object({
  name: z.string().min(1).max(253),
  image: z.string().max(1024),
  init: z.boolean().optional(),
  requests: resourceFactsSchema.optional(),
  limits: resourceFactsSchema.optional(),
  env_names: nameList,
  env_from: nameList,
  volume_refs: nameList,
});

export const strategyFactsSchema = z.object({
  type: z.string().max(64),
  max_surge: z.string().max(64).optional(),
  max_unavailable: z.string().max(64).optional(),
});

export const specFactsSchema = z.object({
  replicas: z.number().int().min(0).optional(),
  strategy: strategyFactsSchema.optional(),
  containers: z.preprocess(
    (v) => (v === null || v === undefined ? [] : v),
    z.array(containerFactsSchema),
  ),
  /** Absent from an agent that predates the field: version 0. */
  facts_version: z.number().int().min(0).default(0),
});

export type ResourceFacts = z.infer<typeof resourceFactsSchema>;
export type ContainerFacts = z.infer<typeof containerFactsSchema>;
export type StrategyFacts = z.infer<typeof strategyFactsSchema>;
export type SpecFacts = z.infer<typeof specFactsSchema>;
