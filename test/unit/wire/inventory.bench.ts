/**
 * How long a large inventory (5,000 pods, 1,000 events, about 12 MB of JSON)
 * takes to build, decode and validate:
 *   npx vitest bench --run --project unit test/unit/wire
 */
import { bench, describe } from 'vitest';
import {
  parseInventory,
  parseInventoryJson,
} from '../../../shared/wire/inventory.ts';
import { generateInventory, mutateInventory } from '../../fixtures/generate.ts';

const large = generateInventory({ size: 'large' });
const body = Buffer.from(JSON.stringify(large), 'utf8');
const decoded: unknown = JSON.parse(body.toString('utf8'));

describe('large inventory', () => {
  bench('JSON.parse alone (baseline)', () => {
    JSON.parse(body.toString('utf8'));
  });

  bench('parseInventory (validate and normalize)', () => {
    parseInventory(decoded);
  });

  bench('parseInventoryJson (decode, JSON.parse, validate)', () => {
    parseInventoryJson(body);
  });

  bench('generateInventory', () => {
    generateInventory({ size: 'large' });
  });

  bench('mutateInventory (10% changed, 2% removed)', () => {
    mutateInventory(large, { changeFraction: 0.1, removeFraction: 0.02 });
  });
});
