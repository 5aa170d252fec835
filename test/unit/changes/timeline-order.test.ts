/**
 * The what-changed timeline's order (spec "What Changed (timeline)"): newest
 * first, and items at the same instant by kind, then id. The kinds take the
 * order of the spec's source table: changes, deploys, events, alerts.
 */
import { describe, expect, it } from 'vitest';
import {
  compareItems,
  type TimelineItem,
} from '../../../shared/changes/what-changed.ts';

const item = (
  kind: TimelineItem['kind'],
  id: string,
  time: string,
): TimelineItem => ({ id: `${kind}:${id}`, time, kind, title: id });

describe("the what-changed timeline's order", () => {
  it('puts the newest first, then at one instant changes, deploys, events, alerts, each by id', () => {
    // Prepare: one instant's items of every kind, shuffled, around a newer
    // and an older item.
    const at = '2026-10-01T12:00:00.000Z';
    const items = [
      item('alert', 'b', at),
      item('event', 'b', at),
      item('change', 'old', '2026-10-01T11:59:59.999Z'),
      item('deploy', 'a', at),
      item('alert', 'a', at),
      item('change', 'b', at),
      item('event', 'a', at),
      item('change', 'new', '2026-10-01T12:00:00.001Z'),
      item('deploy', 'b', at),
      item('change', 'a', at),
    ];

    // Act
    const ids = [...items].sort(compareItems).map((i) => i.id);

    // Assess
    expect(ids).toEqual([
      'change:new',
      'change:a',
      'change:b',
      'deploy:a',
      'deploy:b',
      'event:a',
      'event:b',
      'alert:a',
      'alert:b',
      'change:old',
    ]);
  });
});
