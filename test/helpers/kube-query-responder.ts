/**
 * The live-read tests' views of the command subject
 * `proxima.system.commands.{agent_id}` (wire contract, "Live reads"):
 *
 * - `tapCommands`: listens beside the agent's real responder
 *   (shared/agent/responder.ts) and keeps every request, parsed with the
 *   contract's schema, without answering, so a test sees exactly what the
 *   backend asked (or that it asked nothing).
 * - `startResponder`: a hand-made agent for what the real one never does:
 *   answer a reply that breaks the contract, leak a secret in its error
 *   message, or never answer (the backend times out). `answer` returns the
 *   reply; undefined means none.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../shared/ingest/bridge/nats-setup.ts';
import {
  commandSubject,
  type KubeQueryRequest,
  kubeQueryRequestSchema,
} from '../../shared/live/kube-query.ts';
import type { NatsTarget } from '../../shared/nats-login.ts';

/** The reply to send (as JSON, or these bytes as they are), or none. */
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

/** Where to listen: a server's URL, and its `.creds` when it asks for them. */
export type ResponderServer = string | NatsTarget;

async function listen(
  server: ResponderServer,
  agentId: string,
  name: string,
  answer: Answer | undefined,
): Promise<TestResponder> {
  // On a server that asks for .creds (and TLS), the agent's own login
  // (connectNats).
  const nc: NatsConnection =
    typeof server === 'string'
      ? await connect({ servers: server, name })
      : await connectNats({ ...server, name, waitOnFirstConnect: false });
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
          if (answer === undefined) return;
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
        if (answer === undefined) return;
        const reply = await answer(parsed.data);
        if (reply instanceof Uint8Array) msg.respond(reply);
        else if (reply !== undefined) msg.respond(JSON.stringify(reply));
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

/** Keeps the requests sent to `agentId`; answers none of them. */
export function tapCommands(
  server: ResponderServer,
  agentId: string,
): Promise<TestResponder> {
  return listen(server, agentId, 'test-kube-query-tap', undefined);
}

/** A hand-made agent answering what `answer` returns. */
export function startResponder(
  server: ResponderServer,
  agentId: string,
  answer: Answer,
): Promise<TestResponder> {
  return listen(server, agentId, 'test-kube-query-responder', answer);
}
