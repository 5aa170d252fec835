/**
 * `npm run bench -- ingest|sync|api|sanitize|live|events|changes|metrics|collector|agent-memory|memory|graph|coldstart|slo|cost|scale|sync-lambda [flags]`: runs one benchmark (bench/<name>.ts); flags go to it (`ingest --steady`).
 */
import { existsSync } from 'node:fs';

const BENCHES = [
  'ingest',
  'sync',
  'api',
  'sanitize',
  'live',
  'events',
  'changes',
  'metrics',
  'collector',
  'agent-memory',
  'memory',
  'graph',
  'coldstart',
  'slo',
  'cost',
  'scale',
  'sync-lambda',
] as const;
const name = process.argv[2];

if (!name || !(BENCHES as readonly string[]).includes(name)) {
  console.error(`usage: npm run bench -- ${BENCHES.join('|')}`);
  process.exit(2);
}
const file = new URL(`./${name}.ts`, import.meta.url);
if (!existsSync(file)) {
  console.error(`bench/${name}.ts does not exist yet`);
  process.exit(2);
}
await import(file.href);
