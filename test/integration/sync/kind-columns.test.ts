/**
 * The kinds against the real schema: every column a kind writes and every
 * key its list record renders is a column of the kind's table.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import * as records from '../../../shared/inventory/records.ts';
import {
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
} from '../../../shared/sync/kinds.ts';
import type * as z from '../../../shared/zod.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/** The record each kind's list renders. */
const RECORD_OF: Record<KindKey, z.ZodMiniObject> = {
  nodes: records.nodeRecord,
  namespaces: records.namespaceRecord,
  workloads: records.workloadRecord,
  pods: records.podRecord,
  services: records.serviceRecord,
  ingresses: records.ingressRecord,
  pvcs: records.pvcRecord,
  events: records.eventRecord,
  jobs: records.jobRecord,
  hpas: records.hpaRecord,
  network_policies: records.networkPolicyRecord,
  resource_quotas: records.resourceQuotaRecord,
  endpoint_slices: records.endpointSliceRecord,
};

describe('kind definitions against the schema', () => {
  let database: TestDatabase;
  const tableColumns = new Map<string, Set<string>>();

  beforeAll(async () => {
    database = await createTestDatabase();
    const rows = await query<{ table_name: string; column_name: string }>(
      database.db,
      `select table_name, column_name from information_schema.columns
       where table_schema = 'public' and table_name like 'k8s\\_%'`,
    );
    for (const row of rows) {
      const set = tableColumns.get(row.table_name) ?? new Set<string>();
      set.add(row.column_name);
      tableColumns.set(row.table_name, set);
    }
  });
  afterAll(() => database.drop());

  it.each(KIND_ORDER)('writes only columns of the %s table', (kind) => {
    // Prepare
    const def = KINDS[kind] as KindDefinition;
    const columns = tableColumns.get(def.table);

    // Act
    const written = [...def.columns, ...(def.insertOnly ?? [])];

    // Assert
    expect(columns, def.table).toBeDefined();
    expect(written.filter((c) => !columns?.has(c))).toEqual([]);
  });

  it.each(KIND_ORDER)('renders only columns of the %s table', (kind) => {
    // Prepare
    const def = KINDS[kind] as KindDefinition;
    const columns = tableColumns.get(def.table);

    // Act
    const keys = Object.keys(RECORD_OF[kind].shape);

    // Assert
    expect(keys.filter((k) => !columns?.has(k))).toEqual([]);
  });
});
