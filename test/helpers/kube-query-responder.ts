/**
 * A kube_query responder written from the wire contract ("Live reads"), for
 * the live-read tests: it subscribes on `proxima.system.commands.{agent_id}`,
 * parses each request with the contract's schema, keeps it, and answers what
 * `answer` returns (undefined: no answer, so the backend times out).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  commandSubject,
  type KubeQueryRequest,
  kubeQueryRequestSchema,
} from '../../shared/live/kube-query.ts';

export type Answer = (
  request: KubeQueryRequest,
) => unknown | undefined | Promise<unknown | undefined>;

export interface TestResponder {
  /** Every request received, parsed, in order. */
  requests: KubeQueryRequest[];
  /** Requests that failed the contract's schema (raw JSON). */
  refused: unknown[];
  stop(): Promise<void>;
}

export async function startResponder(
  natsUrl: string,
  agentId: string,
  answer: Answer,
): Promise<TestResponder> {
  const nc: NatsConnection = await connect({
    servers: natsUrl,
    name: 'test-kube-query-responder',
  });
  const requests: KubeQueryRequest[] = [];
  const refused: unknown[] = [];
  const sub = nc.subscribe(commandSubject(agentId), {
    callback: (error, msg) => {
      if (error) return;
      void (async () => {
        const raw = msg.json<unknown>();
        const parsed = kubeQueryRequestSchema.safeParse(raw);
        if (!parsed.success) {
          refused.push(raw);
          msg.respond(
            JSON.stringify({
              ok: false,
              agent_version: 'v0.9.0',
              error: { code: 'bad_request', message: parsed.error.message },
            }),
          );
          return;
        }
        requests.push(parsed.data);
        const reply = await answer(parsed.data);
        if (reply !== undefined) msg.respond(JSON.stringify(reply));
      })();
    },
  });
  await nc.flush();
  return {
    requests,
    refused,
    async stop() {
      sub.unsubscribe();
      await nc.drain();
    },
  };
}
