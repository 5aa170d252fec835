/**
 * A fault no code path expects, met by one snapshot only: a trigger that
 * refuses the insert of a node named POISON_NODE (an unexpected database
 * error, retried by the queue, never a refusal of the message itself).
 */
import type { Db } from '../../shared/db/pool.ts';

export const POISON_NODE = 'poison-node';

/** Installs the trigger; returns what removes it again. */
export async function installPoisonNode(db: Db): Promise<() => Promise<void>> {
  await db.query(`
    create or replace function poison_node() returns trigger language plpgsql as $$
    begin
      if new.name = '${POISON_NODE}' then
        raise exception 'poison node refused by a test trigger';
      end if;
      return new;
    end $$;
    create trigger poison_node before insert on k8s_nodes
      for each row execute function poison_node();`);
  return async () => {
    await db.query(
      'drop trigger poison_node on k8s_nodes; drop function poison_node()',
    );
  };
}
