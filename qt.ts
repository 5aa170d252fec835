import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { generateInventory } from './shared/fixtures/generate.ts';
import { syncInventory } from './shared/sync/sync.ts';
import { decodeInventoryJson } from './shared/wire/inventory.ts';
import { benchDatabase } from './bench/common.ts';
import { query } from './shared/db/pool.ts';
const bench = await benchDatabase('k8s_inventory_qt');
const db = bench.db;
await query(db, `insert into clients (slug, name) values ('bench', 'bench')`);
await query(db, `insert into environments (client_id, slug, name) select id, 'prod', 'prod' from clients`);
const agentId = randomUUID();
const gen = generateInventory({ size: 'large', seed: 1, agentId, timestamp: '2026-06-15T12:00:00Z' });
const subject = { clientSlug: 'bench', envSlug: 'prod', agentId };
const now = () => new Date('2026-06-15T12:59:00Z');
await syncInventory(db, subject, decodeInventoryJson(Buffer.from(JSON.stringify(gen))), { now });
const log: [string, number][] = [];
const orig = pg.Client.prototype.query;
(pg.Client.prototype as any).query = function (...args: any[]) {
  const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
  const t = performance.now();
  const r = orig.apply(this, args as any);
  if (r && typeof (r as any).then === 'function') (r as any).then(() => log.push([String(text).replace(/\s+/g, ' ').slice(0, 90), performance.now() - t]), () => {});
  return r;
};
for (let i = 0; i < 3; i++) {
  log.length = 0;
  const t = performance.now();
  await syncInventory(db, subject, decodeInventoryJson(Buffer.from(JSON.stringify({ ...gen, timestamp: `2026-06-15T12:1${i}:00Z` }))), { now });
  console.log('total', (performance.now() - t).toFixed(0));
  for (const [q, ms] of log) console.log(ms.toFixed(1).padStart(7), q);
}
await bench.close();
