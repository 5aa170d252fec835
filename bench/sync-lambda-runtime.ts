/**
 * The measured process of `npm run bench -- sync-lambda`: bundled with the
 * sync handler as the deployment bundles it (esbuild, CommonJS, minified), run
 * on the runtime's Node major with nothing else loaded. It stands in for Lambda's runtime
 * client: it receives an SQS event (over IPC instead of the runtime API),
 * invokes the handler and answers with its batch response.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { handler } from '../functions/sync/handler.ts';
import { lambdaContext } from '../infra/local/lambda-context.ts';

/** The deployed function's timeout (syncTimeoutSeconds' default). */
const TIMEOUT_MS = 90_000;

/**
 * `--profile`: the bench starts and stops a V8 CPU profile around the
 * rounds it measures (not the first syncs nor the warm round), written to
 * the directory it names.
 */
type Control = { profile: 'start' } | { profile: 'stop'; file: string };
let session: Session | undefined;

async function control(message: Control): Promise<void> {
  if (message.profile === 'start') {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    return;
  }
  if (!session) return;
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(message.file, JSON.stringify(profile));
  session.disconnect();
  session = undefined;
}

process.on('message', (event: Parameters<typeof handler>[0] | Control) => {
  if ('profile' in event) {
    void control(event).then(
      () => process.send?.({ ok: true }),
      (error: unknown) => process.send?.({ ok: false, error: String(error) }),
    );
    return;
  }
  void handler(event, lambdaContext('sync', { timeoutMs: TIMEOUT_MS })).then(
    (response) => process.send?.({ ok: true, response }),
    (error: unknown) => process.send?.({ ok: false, error: String(error) }),
  );
});
process.send?.({ ready: true });
// Exit cleanly when the bench lets go (a CPU profile is written on exit).
process.on('disconnect', () => process.exit(0));
