/**
 * The measured process of `npm run bench -- sync-lambda`: bundled with the
 * sync handler as the deployment bundles it (esbuild, CommonJS, minified), run
 * by plain node with nothing else loaded. It stands in for Lambda's runtime
 * client: it receives an SQS event (over IPC instead of the runtime API),
 * invokes the handler and answers with its batch response.
 */
import { handler } from '../functions/sync/handler.ts';
import { lambdaContext } from '../infra/local/lambda-context.ts';

/** The deployed function's timeout (syncTimeoutSeconds' default). */
const TIMEOUT_MS = 90_000;

process.on('message', (event: Parameters<typeof handler>[0]) => {
  void handler(event, lambdaContext('sync', { timeoutMs: TIMEOUT_MS })).then(
    (response) => process.send?.({ ok: true, response }),
    (error: unknown) => process.send?.({ ok: false, error: String(error) }),
  );
});
process.send?.({ ready: true });
// Exit cleanly when the bench lets go (a CPU profile is written on exit).
process.on('disconnect', () => process.exit(0));
