/**
 * A real nats-server per suite (the nats.js way), with JetStream and the
 * local stack's 8 MB `max_payload`, in a temp dir removed on stop.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNatsServer } from '../../infra/local/nats-server.ts';

export interface TestNatsServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `nats-server` from PATH on a free port. Throws naming
 * `apt-get install nats-server` when it is not installed.
 */
export async function startNatsServer(): Promise<TestNatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  // The server itself is killed on exit by spawnNatsServer; the dir here.
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  try {
    const server = await spawnNatsServer({ dataDir: dir, port: 0 });
    return {
      url: server.url,
      async stop() {
        await server.stop();
        process.removeListener('exit', removeOnExit);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    process.removeListener('exit', removeOnExit);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
