/**
 * The live reads' NATS connection ends without an error whether or not its
 * server is still there: the local stack ends it on SIGINT, and a
 * terminal's Ctrl-C has already stopped the stack's nats-server (one
 * process group) by then.
 */
import { describe, expect, it } from 'vitest';
import { LiveNatsProvider } from '../../../shared/live/nats.ts';
import { startNatsServer } from '../../helpers/nats.ts';

describe("the live reads' NATS connection", () => {
  it('drains while its server is there', async () => {
    // Prepare
    const server = await startNatsServer();
    try {
      const provider = new LiveNatsProvider(async () => ({ url: server.url }));
      const nats = await provider.get();

      // Act
      await provider.close();

      // Assess
      expect(nats?.connection.isClosed()).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('closes, without an error, once its server is gone', async () => {
    // Prepare
    const server = await startNatsServer();
    const provider = new LiveNatsProvider(async () => ({ url: server.url }));
    const nats = await provider.get();
    expect(nats?.connected()).toBe(true);
    await server.stop();

    // Act
    await provider.close();

    // Assess
    expect(nats?.connection.isClosed()).toBe(true);
    expect(await provider.get()).toBeUndefined();
  });
});
