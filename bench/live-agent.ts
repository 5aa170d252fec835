/**
 * The live benchmark's agent, in its own process as a real agent is:
 * answers kube_query on the command subject of the agent id it is given
 * (argv: NATS URL, agent id), then tells its parent it is ready.
 */
import { startResponder } from '../test/helpers/kube-query-responder.ts';
import { benchAnswer } from './live-fixtures.ts';

const [natsUrl, agentId] = process.argv.slice(2);
if (!natsUrl || !agentId)
  throw new Error('usage: live-agent <nats url> <agent id>');
const responder = await startResponder(natsUrl, agentId, benchAnswer);
process.send?.('ready');
process.on('disconnect', () => {
  void responder.stop().then(() => process.exit(0));
});
