/**
 * A real Alertmanager (Debian's `prometheus-alertmanager`) per suite, on a
 * free 127.0.0.1 port, with a temp config whose one webhook receiver posts
 * to `webhookUrl` with the bearer secret in its http_config, as a user
 * would configure it. Clustering is off; group wait, interval and repeat
 * interval are short so a test sees grouping, repeats and resolves in
 * seconds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../../shared/process/supervise.ts';

export { freePort };

const BINARY = '/usr/bin/prometheus-alertmanager';

export interface TestAlertmanager {
  url: string;
  /** Posts alerts to its v2 API, as Prometheus does. */
  postAlerts(alerts: readonly PostableAlert[]): Promise<void>;
  stop(): Promise<void>;
}

export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  /** In the past: the alert is resolved. */
  endsAt?: string;
}

export interface AlertmanagerTimings {
  groupWait: string;
  groupInterval: string;
  repeatInterval: string;
}

export async function startAlertmanager(options: {
  webhookUrl: string;
  secret: string;
  groupBy: readonly string[];
  timings: AlertmanagerTimings;
}): Promise<TestAlertmanager> {
  const dir = await mkdtemp(join(tmpdir(), 'alertmanager-test-'));
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  // JSON is YAML: no quoting rules to get wrong for the URL or secret.
  const config = {
    route: {
      receiver: 'inventory',
      group_by: options.groupBy,
      group_wait: options.timings.groupWait,
      group_interval: options.timings.groupInterval,
      repeat_interval: options.timings.repeatInterval,
    },
    receivers: [
      {
        name: 'inventory',
        webhook_configs: [
          {
            url: options.webhookUrl,
            send_resolved: true,
            http_config: {
              authorization: { type: 'Bearer', credentials: options.secret },
            },
          },
        ],
      },
    ],
  };
  const configFile = join(dir, 'alertmanager.yml');
  await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  try {
    child = spawn(
      BINARY,
      [
        `--config.file=${configFile}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4096);
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => resolve()),
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    process.removeListener('exit', removeOnExit);
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(
        `alertmanager exited at start (apt-get install -y prometheus-alertmanager?): ${stderr}`,
      );
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`alertmanager did not become ready: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    url,
    async postAlerts(alerts) {
      const response = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
      });
      if (!response.ok) {
        throw new Error(
          `alertmanager refused the alerts: ${response.status} ${await response.text()}`,
        );
      }
    },
    stop,
  };
}
