/**
 * The live benchmark's agent, in its own process as a real agent is: the
 * agent's own kube_query responder (shared/agent/responder.ts) on the
 * command subject of the agent id it is given (argv: NATS URL, agent id,
 * and `as-read` for the Deployment as its cluster served it rather than
 * grown to 100 KB), reading the benchmark's cluster from a fake Kubernetes
 * API server in this process; then it tells its parent it is ready. It
 * logs in as an agent does, with NATS_CREDS and NATS_CA when its
 * environment has them.
 */

import { startKubeQueryResponder } from '../shared/agent/responder.ts';
import { connectNats } from '../shared/ingest/bridge/nats-setup.ts';
import { startFakeKube } from '../test/helpers/fake-kube.ts';
import { answerGcPauses } from './gc-pauses.ts';
import { benchCluster } from './live-fixtures.ts';

const [natsUrl, agentId, size] = process.argv.slice(2);
if (!natsUrl || !agentId)
  throw new Error('usage: live-agent <nats url> <agent id> [as-read]');
const cluster = benchCluster({ asRead: size === 'as-read' });
const kube = await startFakeKube();
kube.add('apps/v1', 'deployments', [cluster.deployment]);
kube.add('apps/v1', 'replicasets', cluster.replicaSets);
kube.add('v1', 'pods', [cluster.pod]);
kube.setLogs('icx', 'icx-db-1', 'app', cluster.logLines);
const nc = await connectNats({
  url: natsUrl,
  ...(process.env.NATS_CREDS ? { creds: process.env.NATS_CREDS } : {}),
  ...(process.env.NATS_CA ? { ca: process.env.NATS_CA } : {}),
  name: 'bench-live-agent',
  waitOnFirstConnect: false,
});
const responder = await startKubeQueryResponder({
  nc,
  agentId,
  kubeConfig: kube.kubeConfig,
  agentVersion: 'v0.9.0',
  // The per-read audit line would flood the benchmark's output.
  logger: { info: () => {}, warn: () => {}, error: () => {} },
});
answerGcPauses();
process.send?.('ready');
process.on('disconnect', () => {
  // The parent may already have stopped the NATS server: a failed drain is
  // no news at exit.
  void responder
    .stop()
    .then(() => nc.drain())
    .catch(() => {})
    .then(() => kube.stop())
    .finally(() => process.exit(0));
});
