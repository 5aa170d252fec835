/**
 * `npm run bench -- sanitize`: the secret sanitizer's throughput on one core,
 * over about 32 MB of generated log lines (mostly ordinary lines, one in
 * ten carrying a secret in some shape), line by line as the live logs
 * route sanitizes them. Prints MB/s for the whole mix and for ordinary and
 * secret-bearing lines alone; the target is at least 20 MB/s. Time is this
 * process's CPU time (one thread: one core), so a busy machine does not
 * count other processes' work against it.
 */
import { sanitizeMessage } from '../shared/sanitize/secrets.ts';
import { median } from './common.ts';

const ORDINARY = [
  '2026-10-01T11:00:00.123456789Z stdout F level=info ts=2026-10-01T11:00:00.123Z caller=server.go:87 msg="request served" method=GET path=/api/v1/orders status=200 duration_ms=12',
  '{"time":"2026-10-01T11:00:01Z","level":"INFO","msg":"order created","order_id":"123e4567-e89b-12d3-a456-426614174000","items":3,"total":"19.99"}',
  'I1001 11:00:02.000000       1 reflector.go:229] k8s.io/client-go/informers/factory.go:150: Watch close - *v1.Pod total 12 items received',
  'Readiness probe failed: Get "http://10.0.0.1:8080/healthz": dial tcp 10.0.0.1:8080: connect: connection refused',
  'Pulling image "ghcr.io/org/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
  '10.0.1.23 - - [01/Oct/2026:11:00:03 +0000] "GET /static/app.js HTTP/1.1" 200 5123 "-" "Mozilla/5.0 (X11; Linux x86_64)"',
  "WARN  [main] o.s.b.f.s.DefaultListableBeanFactory : Overriding bean definition for bean 'dataSource' with a different definition",
  'Successfully assigned shop/api-6f7d8b9c4-x2k4p to ip-10-0-1-23.eu-west-1.compute.internal',
  'panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]',
];
const SECRET = [
  'level=debug msg="login ok user=bob pass=hunter2" request_id=abc',
  'connecting to postgres://app:pa55w0rd@db.shop.svc:5432/orders?sslmode=require',
  '{"headers":{"Authorization":["Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"],"Accept":["*/*"]}}',
  'exec /app/migrate --db-password s3cr3t-Value --token-ttl 5m --github-token ghp_1234567890abcdefghijABCDEFGHIJ123456',
  'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE',
];

function corpus(bytes: number, secretShare: number): string[] {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const pool = i % Math.round(1 / secretShare) === 0 ? SECRET : ORDINARY;
    const line = `${pool[i % pool.length]} seq=${i}`;
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return lines;
}

function throughput(lines: string[]): number {
  const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  const runs: number[] = [];
  for (let run = 0; run < 3; run += 1) {
    const started = process.cpuUsage();
    let out = 0;
    for (const line of lines) out += sanitizeMessage(line).length;
    const used = process.cpuUsage(started);
    const seconds = (used.user + used.system) / 1e6;
    if (out === 0) throw new Error('sanitizer returned nothing');
    runs.push(bytes / 1e6 / seconds);
  }
  return median(runs);
}

const MB = 1e6;
const results = {
  mix: throughput(corpus(32 * MB, 0.1)),
  ordinary: throughput(corpus(16 * MB, 1e-9)),
  secretBearing: throughput(corpus(8 * MB, 1)),
};
console.log('sanitizer throughput on one core (median of 3 runs, MB/s):');
for (const [name, value] of Object.entries(results)) {
  console.log(`  ${name.padEnd(14)} ${value.toFixed(1)}`);
}
console.log(
  `target: >= 20 MB/s for the mix -> ${results.mix >= 20 ? 'met' : 'NOT met'}`,
);
